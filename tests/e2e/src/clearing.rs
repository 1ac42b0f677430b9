//! What the `/collegium clear` scenarios and the clear's load driver share
//! (§8.5): polling, what a person sees in a channel, and opening and
//! confirming the dialog through the simulator as a person would.

use std::time::Duration;

use serde_json::{Value, json};

use crate::Harness;

/// Polls until `check` holds, for up to 30 s.
pub async fn eventually(what: &str, mut check: impl AsyncFnMut() -> bool) {
    for _ in 0..300 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("never happened: {what}");
}

/// The messages of a channel's live posts as `username` sees them.
pub async fn seen(h: &Harness, username: &str, channel: &str) -> Vec<String> {
    h.view(username, channel)
        .await
        .into_iter()
        .map(|p| p.message)
        .collect()
}

/// Runs `command` as `username` and waits for the confirmation dialog it
/// opens; the dialog.
pub async fn open(h: &Harness, username: &str, channel: &str, command: &str) -> Value {
    let answered = h.command(username, channel, command).await;
    assert!(
        !answered.to_string().contains("nothing changed"),
        "the command was refused: {answered}"
    );
    h.wait_dialog(username).await
}

/// Opens the confirmation as `username` and submits it; the dialog and the
/// daemon's answer to the submission.
pub async fn confirm(h: &Harness, username: &str, channel: &str, command: &str) -> (Value, Value) {
    let dialog = open(h, username, channel, command).await;
    let answer = h.submit_dialog(username, channel, json!({})).await;
    (dialog, answer)
}
