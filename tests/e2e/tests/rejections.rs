//! What a turn refuses to post and what it refuses to run (§4.5, §3.4,
//! §7.1, §7.2), and when a colleague's hand-off starts its turn (§5.2).

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{after_framework, calls, ended_turn, raw_call, reply, store, turn_requests};
use serde_json::json;

async fn running(before_boot: impl AsyncFnOnce(&Harness)) -> (Harness, e2e::Daemon) {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    before_boot(&h).await;
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    (h, daemon)
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_5_a_reply_with_no_prose_is_fed_back_once_and_the_next_is_posted() {
    let (h, _daemon) = running(async |_| {}).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![reply("*** --- ***"), reply("Here is a real answer.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "answer me").await;
    h.wait_post(&dm, "mira", "real answer", since).await;
    let posts = h.posts(&dm).await;
    assert!(
        !posts.iter().any(|p| p.message.contains("***")),
        "the rejected text is never posted"
    );
    let second = turn_requests(&h).pop().expect("two completions");
    let fed_back = after_framework(&second);
    assert_eq!(fed_back[0], "*** --- ***", "the model sees what it wrote");
    assert!(
        fed_back[1].contains("Your reply was not posted: it holds no words"),
        "{fed_back:?}"
    );
    let turn = ended_turn(&h, "mira", &dm).await;
    let trace = store(&h).turn_events(&turn.id).expect("trace");
    let rejected: Vec<_> = trace
        .iter()
        .filter(|e| e.kind.as_str() == "rejected_post")
        .collect();
    assert_eq!(rejected.len(), 1, "kept in the trace with its reason");
    assert!(
        rejected[0]
            .detail
            .as_deref()
            .is_some_and(|d| d.contains("holds no words"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_5_two_rejected_posts_in_a_row_end_the_turn_with_a_notice() {
    let (h, _daemon) = running(async |_| {}).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let line = "same line\n".repeat(8);
    h.model
        .sim
        .script("demo-model", vec![reply("!!!"), reply(&line)]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "answer me").await;
    let notice = h.wait_post(&dm, "mira", "This turn ended", since).await;
    assert!(
        notice
            .message
            .contains("two replies in a row could not be posted")
    );
    assert_eq!(notice.props["collegium_role"], "notice");
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("rejected_posts"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_2_a_reply_over_the_servers_post_limit_states_both_and_is_never_truncated() {
    let (h, _daemon) = running(async |h: &Harness| {
        let response = reqwest::Client::new()
            .put(format!("{}/_sim/settings", h.mattermost.url))
            .json(&json!({"max_post_size": 120}))
            .send()
            .await
            .expect("settings");
        assert!(response.status().is_success());
    })
    .await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let long = "word ".repeat(40);
    h.model
        .sim
        .script("demo-model", vec![reply(&long), reply("Short answer.")]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "answer me").await;
    h.wait_post(&dm, "mira", "Short answer.", since).await;
    let fed_back = after_framework(&turn_requests(&h).pop().expect("completions"));
    assert!(
        fed_back[1].contains("it is 200 characters long, and a post holds at most 120"),
        "the limit is read from the server at run time: {fed_back:?}"
    );
    assert!(
        !h.posts(&dm)
            .await
            .iter()
            .any(|p| p.message.starts_with("word word")),
        "never truncated"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_call_to_a_tool_not_held_is_answered_with_the_tools_held() {
    let (h, _daemon) = running(async |_| {}).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("web__fetch", json!({"url": "https://example.com"}))]),
            reply("I cannot fetch pages."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "fetch example.com").await;
    h.wait_post(&dm, "mira", "cannot fetch", since).await;
    let results = after_framework(&turn_requests(&h).pop().expect("completions"));
    let result = &results[1];
    assert!(
        result.contains("web__fetch") && result.contains("builtins__now"),
        "names the tool asked for and lists those held: {result}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_unparseable_arguments_are_forgiven_once_and_end_the_turn_the_second_time() {
    let (h, _daemon) = running(async |_| {}).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            raw_call("builtins__now", "{\"secret-raw\": "),
            raw_call("builtins__now", "{still not json"),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "what time is it").await;
    let notice = h.wait_post(&dm, "mira", "This turn ended", since).await;
    assert!(
        notice.message.contains("not valid JSON twice"),
        "{}",
        notice.message
    );
    let second = turn_requests(&h).pop().expect("completions");
    let results = after_framework(&second);
    assert!(results[1].contains("not valid JSON"), "{results:?}");
    assert!(
        !second["messages"].to_string().contains("secret-raw"),
        "the provider's raw text is never read back"
    );
    assert_eq!(
        ended_turn(&h, "mira", &dm).await.exit_kind.as_deref(),
        Some("malformed_call")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_2_an_agents_post_activates_its_addressee_only_when_its_turn_ends() {
    let (h, _daemon) = running(async |_| {}).await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("@theo please check the shared inbox for the invoice."),
            reply("Checked: the invoice arrived."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira can theo check the invoice?")
        .await;
    h.wait_post(&square, "theo", "the invoice arrived", since)
        .await;
    let store = store(&h);
    let mira = store
        .last_turn("mira", &square)
        .expect("query")
        .expect("mira's turn");
    let theo = store
        .last_turn("theo", &square)
        .expect("query")
        .expect("theo's turn");
    assert!(
        theo.started_at >= mira.ended_at.expect("mira's turn ended"),
        "the colleague starts when its author stops acting"
    );
    let requests = turn_requests(&h);
    assert!(
        requests[1]["messages"][0]["content"]
            .as_str()
            .is_some_and(|s| s.contains("@theo"))
    );
    let theo_framework = requests[1]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .expect("message")["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        theo_framework.contains("by Mira (agent)"),
        "{theo_framework}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_provider_failure_ends_the_turn_with_its_phrase_and_requeues_the_post() {
    let (h, _daemon) = running(async |_| {}).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![model_sim::script::Scripted {
            fail: Some(model_sim::script::Failure {
                status: Some(401),
                ..Default::default()
            }),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &dm, "are you there?").await;
    let notice = h.wait_post(&dm, "mira", "This turn ended", since).await;
    assert!(
        notice
            .message
            .contains("provider rejection: the provider refused the credential"),
        "{}",
        notice.message
    );
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("provider_failure"));
    assert_eq!(
        store(&h).queued("mira", &dm).expect("queue"),
        std::slice::from_ref(&asked.id),
        "a failure queues the post that started it, so nothing is lost"
    );
}

/// §4.5, §8.1: a status call line quoting text the shared grammar reads as
/// an agent's mention (`@theo_` is `@theo` to the server) shows the agent
/// by name, so the status post starts no hand-off.
#[tokio::test(flavor = "multi_thread")]
async fn s4_5_a_status_call_line_strips_mentions_as_the_grammar_reads_them() {
    let (h, _daemon) = running(async |_| {}).await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("workspace__find", json!({"glob": "notes/@theo_*"}))]),
            reply("Nothing found."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira find theo's notes").await;
    h.wait_post(&square, "mira", "Nothing found.", since).await;
    let status = e2e::scenario::closed_status_post(&h, &square).await;
    assert!(
        status.contains("notes/Theo the Operator_*"),
        "the agent shown by name: {status}"
    );
    assert!(!status.contains("@theo"), "{status}");
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("completed"));
    assert!(
        store(&h)
            .last_turn("theo", &square)
            .expect("query")
            .is_none(),
        "no hand-off started"
    );
}
