use super::*;
use crate::inference::{AssistantMessage, ToolCall};

const UTC: chrono_tz::Tz = chrono_tz::Tz::UTC;
/// 09:30:00 UTC on 1 June 2026, in milliseconds.
const RECORDED: i64 = 1_780_306_200_000;

fn completion(call_id: &str) -> Message {
    Message::Assistant(AssistantMessage {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: call_id.into(),
            name: "fixture__read".into(),
            arguments: "{}".into(),
        }],
        reasoning: None,
    })
}

/// A result entered the way the runner enters one: kept whole, shown in
/// at most `limit` characters.
fn result(views: &mut ResultViews, call_id: &str, text: &str, limit: usize) -> Message {
    let view = views.enter(call_id, "fixture::read", text, RECORDED, limit, UTC);
    Message::ToolResult {
        call_id: call_id.into(),
        name: "fixture__read".into(),
        content: view.text,
    }
}

fn content(message: &Message) -> &str {
    match message {
        Message::ToolResult { content, .. } => content,
        _ => "",
    }
}

fn relieve(own: &mut [Message], views: &mut ResultViews, ceiling: u64) -> Relieved {
    Pressure {
        own,
        views,
        fixed: 0,
        ceiling,
        now: RECORDED + 60_000,
        timezone: UTC,
    }
    .relieve()
}

#[test]
fn s3_8_relief_stands_in_only_results_the_model_has_read() {
    let mut views = ResultViews::default();
    let mut own = vec![
        completion("c1"),
        result(&mut views, "c1", &"a".repeat(2_000), 16_000),
        completion("c2"),
        // The batch just received is the largest, and the model has not read it.
        result(&mut views, "c2", &"b".repeat(6_000), 16_000),
    ];
    let relieved = relieve(&mut own, &mut views, 2_000);
    assert_eq!(relieved.stood_in, vec!["c1".to_string()]);
    assert!(
        content(&own[1]).starts_with(STAND_IN_MARK),
        "{}",
        content(&own[1])
    );
    assert!(
        !content(&own[3]).starts_with(STAND_IN_MARK),
        "the fresh batch is never a stand-in: {}",
        content(&own[3])
    );
}

#[test]
fn s3_8_a_stand_in_carries_the_results_reference_and_when_it_was_recorded() {
    let mut views = ResultViews::default();
    let whole: String = (0..3_000).map(|i| format!("row {i:05};")).collect();
    let mut own = vec![
        completion("c1"),
        result(&mut views, "c1", &whole, 8_000),
        completion("c2"),
        result(&mut views, "c2", "short", 8_000),
    ];
    assert!(content(&own[1]).contains("reference \"r1\""));
    relieve(&mut own, &mut views, 1_000);
    let stand_in = content(&own[1]);
    assert!(stand_in.contains("reference \"r1\""), "{stand_in}");
    assert!(stand_in.contains("recorded at 09:30:00"), "{stand_in}");
    assert!(
        stand_in.contains(&format!("{} characters", whole.len())),
        "{stand_in}"
    );
    let read = views
        .read(&serde_json::json!({"reference": "r1", "offset": 0, "length": whole.len()}))
        .expect("read");
    assert_eq!(
        read.split_once('\n').expect("header").1,
        whole,
        "the whole result"
    );
}

#[test]
fn s3_8_read_results_become_stand_ins_largest_first() {
    let mut views = ResultViews::default();
    let mut own = vec![
        completion("c1"),
        result(&mut views, "c1", &"s".repeat(1_000), 16_000),
        result(&mut views, "c2", &"l".repeat(4_000), 16_000),
        completion("c3"),
    ];
    // Over the ceiling, and one stand-in for the largest is enough.
    let relieved = relieve(&mut own, &mut views, 1_200);
    assert_eq!(relieved.stood_in, vec!["c2".to_string()]);
    assert!(!content(&own[1]).starts_with(STAND_IN_MARK));
}

#[test]
fn s3_8_the_fresh_batch_is_shortened_together_never_without_its_reference() {
    let mut views = ResultViews::default();
    let mut own = vec![
        completion("c1"),
        completion("c2"),
        result(&mut views, "c1", &"x".repeat(8_000), 16_000),
        result(&mut views, "c2", &"y".repeat(8_000), 16_000),
    ];
    let relieved = relieve(&mut own, &mut views, 2_000);
    assert!(relieved.stood_in.is_empty(), "nothing here was read");
    assert_eq!(relieved.shortened.len(), 2);
    let (first, second) = (content(&own[2]), content(&own[3]));
    assert!(first.contains("reference \"r1\""), "{first}");
    assert!(second.contains("reference \"r2\""), "{second}");
    let shown = |text: &str| text.chars().filter(|c| *c == 'x' || *c == 'y').count();
    assert_eq!(shown(first), shown(second), "shortened together");
    let total: u64 = own.iter().map(message_cost).sum();
    assert!(total <= 2_000, "{total}");
}

#[test]
fn s3_8_a_fresh_result_that_cannot_keep_the_floor_shows_its_size_and_reference() {
    let mut views = ResultViews::default();
    let mut own = vec![
        completion("c1"),
        result(&mut views, "c1", &"z".repeat(9_000), 16_000),
    ];
    relieve(&mut own, &mut views, 100);
    let shown = content(&own[1]);
    assert!(!shown.contains('z'), "{shown}");
    assert!(
        shown.contains("9000 characters") && shown.contains("reference \"r1\""),
        "{shown}"
    );
}
