use serde_json::json;

use super::*;
use crate::store::TraceKind;

fn head() -> TurnHead {
    TurnHead {
        id: "turn-1".into(),
        agent: "mira".into(),
        channel_id: "c".into(),
        started_at: 1_000,
        ended_at: Some(13_345),
        exit_kind: Some("completed".into()),
        ended_by: None,
        cause: "drain".into(),
        answers_post_id: Some("p1".into()),
        drain_from_post_id: Some("p0".into()),
        trigger_id: None,
        depth: 0,
        chain_root: "turn-1".into(),
        chain_length: 1,
        action_count: 3,
        steered: true,
        model: "demo-model".into(),
        prompt_tokens: 1_200,
        cached_prompt_tokens: 300,
        cache_write_tokens: 10,
        completion_tokens: 40,
        reasoning_tokens: 12,
        cost_micro_usd: Some(1_234),
        context_assembled_at: Some(1_100),
        context_reach_post_id: Some("p-old".into()),
        context_charged_tokens: Some(2_345),
        status_post_id: Some("s1".into()),
    }
}

fn event(seq: i64, at: i64, kind: TraceKind, detail: serde_json::Value) -> TurnEvent {
    TurnEvent {
        turn_id: "turn-1".into(),
        seq,
        at,
        kind,
        call_id: None,
        tool: None,
        arguments: None,
        content: None,
        detail: Some(detail.to_string()),
    }
}

fn trace(events: Vec<TurnEvent>) -> TurnTrace {
    TurnTrace {
        head: head(),
        relation: PostOfTurn::Wrote,
        answered: vec![AnsweredPost {
            post_id: "p1".into(),
            how: "queue".into(),
            author_kind: Some("person".into()),
            author_name: Some("ana".into()),
            role: Some("post".into()),
            announces_trigger: None,
        }],
        unit_posts: Vec::new(),
        reach_at: Some(500),
        parked: Vec::new(),
        events,
    }
}

fn render_one(trace: &TurnTrace) -> String {
    let name = |u: &str| {
        if u == "mira" {
            "Mira".to_string()
        } else {
            u.to_string()
        }
    };
    render(
        "s1",
        std::slice::from_ref(trace),
        &Reader {
            timezone: chrono_tz::UTC,
            now: 20_000,
            name: &name,
        },
    )
}

#[test]
fn s8_3_the_head_states_every_item_of_the_turns_record() {
    let text = render_one(&trace(Vec::new()));
    for expected in [
        "**Trace of Mira's turn turn-1** (demo-model; ended as completed) — it wrote the post s1.",
        "- Started by: its queue drained as its previous turn here ended; it answers post p1",
        "- Posts it answers: p1 (taken from its queue, by ana)",
        "- Drain began from: post p0",
        "- Steered: yes (the steer's event was not recorded)",
        "- Owed reply (§3.15): it handed no work on",
        "- Asked to end the turn at a unit post:",
        "- Timing: started 1970-01-01 00:00:01 UTC, ran 12.345 s, ended 1970-01-01 00:00:13 UTC",
        "- Actions: 3",
        "- Context last assembled: 1970-01-01 00:00:01 UTC; the window reached back to post p-old, written 1970-01-01 00:00:00 UTC; the budget charged 2,345 tokens",
        "- Tokens: prompt 1,200, of which the provider's cache served 300 (25%) and 10 were written to it; completion 40, of which 12 reasoning",
        "- Cost: $0.001234 as the provider reported it",
        "**Events** (0):\nnone recorded.",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in\n{text}");
    }
}

#[test]
fn s8_3_a_completion_carries_its_report_upstream_and_relief_beside_it() {
    let mut completion = event(
        1,
        1_250,
        TraceKind::Completion,
        json!({
            "calls": [{"id": "call_1", "name": "workspace__read", "arguments": "{\"path\":\"a\"}"}],
            "usage": {"prompt_tokens": 900, "cached_prompt_tokens": 100, "completion_tokens": 20,
                      "reasoning_tokens": 7, "estimated": false},
            "upstream": "Anthropic", "finish": "ToolCalls",
            "relief": {"stood_in": {"call_0": "r1"}, "shortened": {}},
        }),
    );
    completion.content = Some("Reading it.".into());
    let text = render_one(&trace(vec![completion]));
    assert!(
        text.contains(
            "+0.250 s · completion (ToolCalls) · reported prompt 900 (100 cached), completion 20 (7 reasoning) · upstream Anthropic · relief edited the prompt since the completion before: 1 result replaced by its line, 0 shortened"
        ),
        "{text}"
    );
    assert!(text.contains("  wrote: Reading it."), "{text}");
    assert!(
        text.contains("  called call_1 `workspace__read` with {\"path\":\"a\"}"),
        "{text}"
    );
}

#[test]
fn s8_3_a_result_is_whole_with_its_mark_and_how_the_model_read_it() {
    let mut result = event(
        2,
        1_500,
        TraceKind::Result,
        json!({"action": "✓ read a — shown 10 of 40 characters", "reference": "r1"}),
    );
    result.call_id = Some("call_1".into());
    result.tool = Some("workspace__read".into());
    result.arguments = Some("{}".into());
    result.content = Some("x```y".repeat(8));
    let later = event(
        3,
        1_600,
        TraceKind::Completion,
        json!({"relief": {"stood_in": {"call_1": "r1"}, "shortened": {}}}),
    );
    let text = render_one(&trace(vec![result, later]));
    assert!(
        text.contains("+0.500 s · result of call_1 `workspace__read` with {} · ✓ read a — shown 10 of 40 characters · the model read a view of its first part (reference r1), whole below; later replaced by its line once read (reference r1), whole below"),
        "{text}"
    );
    assert!(
        text.contains(&format!("````\n{}\n````", "x```y".repeat(8))),
        "{text}"
    );
}

#[test]
fn s8_3_a_rejected_post_keeps_its_reason() {
    let mut rejected = event(
        1,
        2_000,
        TraceKind::RejectedPost,
        json!({"reason": "Address one colleague."}),
    );
    rejected.content = Some("@bob @carl do it".into());
    let text = render_one(&trace(vec![rejected]));
    assert!(
        text.contains("+1.000 s · post rejected (§4.5), the model told why and asked again: Address one colleague.\n```\n@bob @carl do it\n```"),
        "{text}"
    );
}

#[test]
fn s8_3_a_turn_that_handed_work_on_says_whether_it_owed_a_reply() {
    let mut t = trace(Vec::new());
    t.head.steered = false;
    t.unit_posts = vec![("u1".into(), "Assigned U-1 to @bob.".into())];
    t.answered = vec![AnsweredPost {
        post_id: "p1".into(),
        how: "start".into(),
        author_kind: Some("agent".into()),
        author_name: Some("bob".into()),
        role: Some("post".into()),
        announces_trigger: None,
    }];
    assert!(
        render_one(&t).contains("- Owed reply (§3.15): it handed work on and owed no reply\n"),
        "{}",
        render_one(&t)
    );
    t.answered[0].author_kind = Some("person".into());
    t.answered[0].author_name = Some("ana".into());
    assert!(
        render_one(&t).contains("owed a reply: post p1 is ana's, a person's"),
        "{}",
        render_one(&t)
    );
}

#[test]
fn s8_4_a_parked_turn_says_on_what_since_when_and_its_prompt() {
    let mut t = trace(Vec::new());
    t.head.ended_at = None;
    t.head.exit_kind = None;
    t.parked = vec![(
        DecisionRecord {
            id: "d1".into(),
            turn_id: "turn-1".into(),
            agent: "mira".into(),
            channel_id: "c".into(),
            kind: "approval".into(),
            tool: Some("shell__run".into()),
            payload: "Mira wants to run `ls`.".into(),
            prompt_post_id: Some("pp".into()),
            outcome: None,
            decided_by: None,
            reason: None,
            choices: Vec::new(),
        },
        3_000,
    )];
    let text = render_one(&t);
    assert!(text.contains("(demo-model; still running)"), "{text}");
    assert!(text.contains("running for 19.000 s so far"), "{text}");
    assert!(
        text.contains("- Parked: waiting on a decision on its approval prompt for `shell__run` since 1970-01-01 00:00:03 UTC (prompt post pp); the prompt as the person was shown it:\n```\nMira wants to run `ls`.\n```"),
        "{text}"
    );
}

#[test]
fn s8_3_a_post_several_turns_answered_lists_them() {
    let first = trace(Vec::new());
    let mut second = trace(Vec::new());
    second.head.id = "turn-2".into();
    second.relation = PostOfTurn::Answered("fold".into());
    let name = |u: &str| u.to_string();
    let text = render(
        "p1",
        &[first, second],
        &Reader {
            timezone: chrono_tz::UTC,
            now: 0,
            name: &name,
        },
    );
    assert!(
        text.starts_with("Post p1 belongs to 2 turns; each is traced below, oldest first:\n- turn turn-1 of mira (it wrote the post)"),
        "{text}"
    );
    assert!(
        text.contains("- turn turn-2 of mira (it answered the post (folded in mid-turn))"),
        "{text}"
    );
    assert!(text.contains("**Trace of mira's turn turn-2**"), "{text}");
}

#[test]
fn s8_3_a_trigger_turn_names_its_trigger_by_the_announcement_it_answers() {
    let mut t = trace(Vec::new());
    t.head.cause = "trigger".into();
    t.head.steered = false;
    t.answered[0].author_kind = Some("system_bot".into());
    t.answered[0].author_name = Some("collegium".into());
    t.answered[0].how = "start".into();
    t.answered[0].announces_trigger = Some(3);
    t.unit_posts = vec![("u1".into(), "Assigned U-1 to @bob.".into())];
    let text = render_one(&t);
    assert!(
        text.contains("- Started by: a trigger (§4.2), T-3; it answers post p1"),
        "{text}"
    );
    assert!(
        text.contains("- Posts it answers: p1 (the post that started it, the announcement of T-3)"),
        "{text}"
    );
    assert!(
        text.contains("owed a reply: post p1 announces a trigger"),
        "{text}"
    );
}

#[test]
fn s8_3_the_head_shows_each_end_turn_ask_as_the_gate_recorded_it() {
    assert!(
        render_one(&trace(Vec::new()))
            .contains("- Asked to end the turn at a unit post: none was made\n")
    );
    let mut granted = event(
        1,
        2_000,
        TraceKind::Note,
        json!({"end_turn": "granted", "call": "c1"}),
    );
    granted.call_id = Some("c1".into());
    let mut refused = event(
        2,
        3_000,
        TraceKind::Note,
        json!({"end_turn": "refused", "call": "c2", "reason": "it answers a post of Ana"}),
    );
    refused.call_id = Some("c2".into());
    let text = render_one(&trace(vec![refused, granted]));
    assert!(
        text.contains(
            "- Asked to end the turn at a unit post: refused at c2: it answers a post of Ana; granted at c1\n"
        ),
        "{text}"
    );
}
