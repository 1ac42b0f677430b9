//! Prompt caching (§3.8): over a scripted 30-turn conversation, each
//! request shares a byte-identical prefix with the one before through the
//! end of the previous window, and what precedes the window (the system
//! prompt and the tools) never changes, even as the date, the pins and the
//! membership the framework's message carries change. The prefix reuse
//! ratio is printed for `docs/benchmarks.md`.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::framework_index;
use model_sim::script::Scripted;
use serde_json::Value;

const TURNS: usize = 30;

#[tokio::test(flavor = "multi_thread")]
async fn s3_8_consecutive_requests_share_the_previous_window_byte_for_byte() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    for turn in 0..TURNS {
        h.model.sim.script(
            "demo-model",
            vec![Scripted {
                text: Some(format!(
                    "Answer number {turn}: noted, and here is the detail you asked for."
                )),
                ..Default::default()
            }],
        );
        let since = now_ms() - 1;
        let asked = h
            .say(
                "ana",
                &square,
                &format!("@mira question number {turn}: what do we know about item {turn}?"),
            )
            .await;
        h.wait_post(&square, "mira", &format!("Answer number {turn}:"), since)
            .await;
        if turn == 10 {
            h.pin(&asked.id, true).await;
        }
        if turn == 20 {
            h.person("bo", &["town-square"]).await;
        }
    }
    let requests: Vec<Value> = h
        .model
        .sim
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["messages"].as_array().is_some_and(|m| m.len() > 2))
        .collect();
    assert_eq!(requests.len(), TURNS);
    let (mut shared, mut total) = (0usize, 0usize);
    for pair in requests.windows(2) {
        let (before, after) = (&pair[0], &pair[1]);
        assert_eq!(before["tools"], after["tools"], "the tools never change");
        assert_eq!(
            before["messages"][0], after["messages"][0],
            "the system prompt never changes"
        );
        let window_end = framework_index(before);
        let previous = &before["messages"].as_array().expect("messages")[..window_end];
        let next = after["messages"].as_array().expect("messages");
        assert_eq!(
            &next[..window_end],
            previous,
            "the previous window is a byte-identical prefix"
        );
        let prefix_bytes: usize = previous.iter().map(|m| m.to_string().len()).sum();
        shared += prefix_bytes;
        total += next.iter().map(|m| m.to_string().len()).sum::<usize>();
    }
    let ratio = shared as f64 / total as f64;
    eprintln!(
        "prefix reuse over {TURNS} turns: {:.1}% of request message bytes were the previous request's prefix",
        ratio * 100.0
    );
    assert!(
        ratio > 0.5,
        "most of each request is the cached prefix: {ratio}"
    );
}
