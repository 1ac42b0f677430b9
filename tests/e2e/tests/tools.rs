//! Calls a turn makes to a plugin's tools (§3.4, §3.8, §5.1, §8.1): through
//! the fixture toolset started as a plugin, with signed grants and the
//! store's dispatch records.

use e2e::people::now_ms;
use e2e::scenario::{calls, closed_status_post, reply, tool_results, turn_requests, with_fixture};
use model_sim::script::Scripted;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn s5_1_concurrent_calls_run_together_and_their_results_keep_call_order() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[
                ("fixture__read", json!({"key": "alpha"})),
                ("lookup", json!({"key": "beta"})),
            ]),
            reply("Both keys read."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read alpha and beta").await;
    h.wait_post(&dm, "mira", "Both keys read", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert_eq!(results.len(), 2);
    assert!(results[0].contains("the value of alpha"), "{results:?}");
    assert!(results[1].contains("beta"), "{results:?}");
    let asked: Vec<String> = fixture_toolset::asked(&record)
        .iter()
        .map(|a| a["tool"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        asked.contains(&"read".to_string()) && asked.contains(&"lookup".to_string()),
        "{asked:?}"
    );
    let body = closed_status_post(&h, &dm).await;
    assert!(
        body.contains("fixture::read") && body.contains("fixture::lookup"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_a_200_kb_result_enters_as_a_view_and_results_read_returns_the_exact_text() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let key = "repeat:10000:row of the export";
    let whole: String = (0..10_000)
        .map(|i| format!("row of the export {i:06};"))
        .collect();
    assert!(whole.len() >= 200_000);
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__read", json!({"key": key}))]),
            calls(&[(
                "results__read",
                json!({"reference": "r1", "offset": 150_000, "length": 60}),
            )]),
            calls(&[(
                "results__read",
                json!({"reference": "r1", "find": ["EXPORT 009999"]}),
            )]),
            reply("Read the export."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read the export").await;
    h.wait_post(&dm, "mira", "Read the export.", since).await;
    let requests = turn_requests(&h);
    let last = requests.last().expect("completions");
    let results = tool_results(last);
    assert!(
        results[0].contains(&format!("of {} characters", whole.chars().count())),
        "a view, not the whole"
    );
    assert!(results[0].contains("results::read with reference \"r1\""));
    assert!(
        results[0].len() < 20_000,
        "the view is bounded: {}",
        results[0].len()
    );
    let read = results[1].split_once('\n').expect("header").1;
    assert_eq!(
        read,
        &whole[150_000..150_060],
        "the exact text at the offset"
    );
    let expected = whole.find("export 009999").expect("present");
    assert!(
        results[2].contains(&format!("at offset {expected}")),
        "{}",
        results[2]
    );
    let body = closed_status_post(&h, &dm).await;
    assert!(body.contains("the rest by reference"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_under_pressure_read_results_become_stand_ins_with_their_reference() {
    let (h, _daemon, _record) = with_fixture(
        "debounce_window_ms = 0\nturn_ceiling_tokens = 7000\ncontext_budget_tokens = 2000\naction_budget = 40",
    )
    .await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let mut script: Vec<Scripted> = (0..10)
        .map(|i| {
            calls(&[(
                "fixture__read",
                json!({"key": format!("repeat:200:page {i} line")}),
            )])
        })
        .collect();
    script.push(reply("Read all ten pages."));
    h.model.sim.script("demo-model", script);
    let since = now_ms() - 1;
    h.say("ana", &dm, "read the ten pages").await;
    h.wait_post(&dm, "mira", "Read all ten pages.", since).await;
    let last = turn_requests(&h).pop().expect("completions");
    let results = tool_results(&last);
    assert_eq!(
        results.len(),
        10,
        "every result is still there, as itself or as a line"
    );
    let stand_ins: Vec<&String> = results
        .iter()
        .filter(|r| r.starts_with("[Stand-in"))
        .collect();
    assert!(
        !stand_ins.is_empty(),
        "relief replaced read results: {results:#?}"
    );
    assert!(
        stand_ins
            .iter()
            .all(|s| s.contains("results::read with reference")),
        "nothing becomes unreadable"
    );
    assert!(
        results.last().is_some_and(|r| !r.starts_with("[Stand-in")),
        "the newest result is whole"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_a_result_identical_to_one_still_shown_costs_one_line_naming_it() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__read", json!({"key": "repeat:50:same page"}))]),
            calls(&[("fixture__read", json!({"key": "repeat:50:same page"}))]),
            reply("Same page twice."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read it twice").await;
    h.wait_post(&dm, "mira", "Same page twice.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(results[0].starts_with("same page 000000;"), "{results:?}");
    assert!(
        results[1].starts_with("[fixture::read: the same result as call")
            && results[1].contains("still shown above"),
        "{results:?}"
    );
}
