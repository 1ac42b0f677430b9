//! The workspace toolset (A2, §3.4, §6.1), served by the daemon: a gated
//! write lands in the agent's workspace where its shell can read it, reads
//! and searches are results, and an escape is a refusal the model reads.

use std::os::unix::fs::PermissionsExt;

use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with, tool_results, turn_requests, with_fixture};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a2_an_approved_write_lands_in_the_workspace_and_reads_come_back_as_results() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "workspace__write",
                json!({"path": "notes/plan.md", "content": "ship on Friday\n"}),
            )]),
            calls(&[
                ("workspace__read", json!({"path": "notes/plan.md"})),
                ("workspace__grep", json!({"pattern": "Friday"})),
                (
                    "workspace__read",
                    json!({"path": "../../state/collegium.db"}),
                ),
            ]),
            reply("The plan is written."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write the plan down").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    assert!(
        prompt.message.contains("`workspace::write`")
            && prompt
                .message
                .contains("\"content\": \"ship on Friday\\n\""),
        "the whole payload: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "The plan is written.", since)
        .await;
    let written = h.dir.path().join("workspaces/mira/notes/plan.md");
    assert_eq!(
        std::fs::read_to_string(&written).expect("written"),
        "ship on Friday\n"
    );
    assert_eq!(
        std::fs::metadata(&written)
            .expect("file")
            .permissions()
            .mode()
            & 0o777,
        0o640
    );
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert_eq!(
        results[0],
        "Wrote 15 bytes to `notes/plan.md` in your workspace."
    );
    assert_eq!(results[1], "ship on Friday\n");
    assert_eq!(results[2], "notes/plan.md:1: ship on Friday");
    assert!(
        results[3].contains("climbs with `..`"),
        "an escape is a result the model reads: {}",
        results[3]
    );
}
