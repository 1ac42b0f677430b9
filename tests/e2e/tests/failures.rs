//! Every way a turn can stop (§7.1), one scenario per row this file can
//! drive through the simulators: the phrase the person reads, the exit kind
//! on the turn record, the lock released (the next post starts a turn),
//! and whether the post that started the turn was consumed (an exit that
//! allows progress) or returned to the queue (a failure, §5.2).
//!
//! The rows a person drives live beside their commands: denial and budget
//! exhaustion in `approvals.rs`, stop and kill in `commands.rs`, the global
//! halt in `loops.rs`, restart in `restart.rs`.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, ended_turn, raw_call, reply, store, with_fixture};
use model_sim::script::{Failure, Scripted};
use serde_json::json;

/// One row: what the model does, and what the turn must leave behind.
struct Row {
    limits: &'static str,
    script: Vec<Scripted>,
    /// What the agent's last post says.
    says: &'static str,
    kind: &'static str,
    /// The exit allows progress: the starting post is consumed, not returned.
    progress: bool,
}

/// Plays a row in ~town-square and checks what every row must hold; the
/// running deployment and the agent's post, for the row's own checks.
async fn play(row: Row) -> (Harness, e2e::Daemon, String, mattermost_wire::model::Post) {
    let (h, daemon, _) = with_fixture(&format!("debounce_window_ms = 0\n{}", row.limits)).await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let mut script = row.script;
    script.push(reply("Picked up again."));
    h.model.sim.script("demo-model", script);
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira go").await;
    let said = h.wait_post(&square, "mira", row.says, since).await;
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(
        turn.exit_kind.as_deref(),
        Some(row.kind),
        "{}",
        said.message
    );
    let queued = store(&h).queued("mira", &square).expect("queue");
    if row.progress {
        assert!(
            queued.is_empty(),
            "the starting post is consumed: {queued:?}"
        );
    } else {
        assert_eq!(
            queued,
            std::slice::from_ref(&asked.id),
            "a failure returns the starting post to the queue"
        );
    }
    // The lock is released: the next person's post starts a turn, which
    // takes whatever waited.
    h.say("ana", &square, "@mira and now?").await;
    h.wait_post(&square, "mira", "Picked up again.", since)
        .await;
    // The turn records what it took as it ends, which can land just after
    // its reply is posted: wait for the store, bounded.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !store(&h).queued("mira", &square).expect("queue").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the queue was left standing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    (h, daemon, square, said)
}

fn failing(failure: Failure) -> Scripted {
    Scripted {
        fail: Some(failure),
        ..Default::default()
    }
}

async fn never_said(h: &Harness, channel: &str, words: &str) {
    assert!(
        !h.posts(channel)
            .await
            .iter()
            .any(|p| p.message.contains(words)),
        "nobody should read “{words}”"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_normal_completion_is_the_final_post() {
    play(Row {
        limits: "",
        script: vec![reply("All done.")],
        says: "All done.",
        kind: "completed",
        progress: true,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_transport_error_is_retried_invisibly() {
    let (h, _daemon, square, _) = play(Row {
        limits: "",
        script: vec![
            failing(Failure {
                status: Some(503),
                ..Default::default()
            }),
            reply("Done after a retry."),
        ],
        says: "Done after a retry.",
        kind: "completed",
        progress: true,
    })
    .await;
    never_said(&h, &square, "This turn ended").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_output_cut_at_the_limit_is_fed_back_and_never_posted() {
    let (h, _daemon, square, _) = play(Row {
        limits: "",
        script: vec![
            Scripted {
                text: Some("A long answer that".into()),
                fail: Some(Failure {
                    length: true,
                    ..Default::default()
                }),
                ..Default::default()
            },
            reply("A short answer."),
        ],
        says: "A short answer.",
        kind: "completed",
        progress: true,
    })
    .await;
    never_said(&h, &square, "A long answer that").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_second_cut_at_the_time_limit_ends_the_turn() {
    let slow = || Scripted {
        text: Some("word ".repeat(60)),
        delay_ms: 150,
        ..Default::default()
    };
    play(Row {
        limits: "completion_time_limit_secs = 1",
        script: vec![slow(), slow()],
        says: "cut off at its time limit twice",
        kind: "time_limit",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_tool_that_throws_ends_the_turn() {
    play(Row {
        limits: "",
        script: vec![calls(&[("fixture__fail", json!({}))])],
        says: "This turn ended: fixture::fail failed (the fixture failed on purpose), and whether it acted before failing is unknown.",
        kind: "tool_failed",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_completion_still_malformed_after_its_retries_ends_the_turn() {
    let malformed = || {
        failing(Failure {
            malformed_after_chunks: Some(0),
            ..Default::default()
        })
    };
    play(Row {
        limits: "",
        script: vec![malformed(), malformed(), malformed(), malformed()],
        says: "the provider's completion was still malformed after 4 attempts",
        kind: "malformed_completion",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_arguments_that_never_parse_twice_end_the_turn() {
    play(Row {
        limits: "",
        script: vec![
            raw_call("fixture__read", "{\"key\": "),
            raw_call("fixture__read", "{\"key\": "),
        ],
        says: "tool arguments that were not valid JSON twice",
        kind: "malformed_call",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_two_refused_posts_in_a_row_end_the_turn() {
    let repeated = || reply(&"the same line\n".repeat(10));
    play(Row {
        limits: "",
        script: vec![repeated(), repeated()],
        says: "two replies in a row could not be posted",
        kind: "rejected_posts",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_mutating_call_that_times_out_is_named_unconfirmed() {
    play(Row {
        limits: "tool_call_deadline_secs = 1",
        script: vec![calls(&[("fixture__hang_write", json!({}))])],
        says: "fixture::hang_write did not answer in time, and whether it completed cannot be confirmed",
        kind: "side_effect_unconfirmed",
        progress: false,
    })
    .await;
}

/// §3.4, §7.2: a retryable call past its deadline is a plain failure the
/// model reads; the turn goes on and completes.
#[tokio::test(flavor = "multi_thread")]
async fn s7_2_a_retryable_call_past_its_deadline_is_a_plain_failure_and_the_turn_goes_on() {
    let (h, _daemon, _, _) = play(Row {
        limits: "tool_call_deadline_secs = 1",
        script: vec![
            calls(&[("fixture__hang_read", json!({}))]),
            reply("The read did not answer; here is what I know."),
        ],
        says: "The read did not answer",
        kind: "completed",
        progress: true,
    })
    .await;
    let read = e2e::scenario::turn_requests(&h)
        .get(1)
        .map(e2e::scenario::tool_results)
        .unwrap_or_default();
    assert!(
        read.iter().any(|r| r.starts_with("The call failed")),
        "the model read the failure: {read:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_provider_outage_names_the_wait_it_was_asked_for() {
    play(Row {
        limits: "",
        script: vec![failing(Failure {
            status: Some(429),
            retry_after: Some(600),
            ..Default::default()
        })],
        says: "the provider rate-limited the request and asked to wait 600 s",
        kind: "provider_failure",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_provider_rejection_names_its_class() {
    play(Row {
        limits: "",
        script: vec![failing(Failure {
            status: Some(429),
            code: Some("insufficient_quota".into()),
            ..Default::default()
        })],
        says: "provider rejection: the provider account's balance is exhausted",
        kind: "provider_failure",
        progress: false,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_context_exhaustion_states_its_size_and_largest_parts_and_drains() {
    let mut big = calls(&[("fixture__read", json!({"key": "a"}))]);
    big.text = Some("a thought that goes on ".repeat(2_000));
    let (_h, _daemon, _, said) = play(Row {
        limits: "turn_ceiling_tokens = 8000",
        script: vec![big],
        says: "against a ceiling of 8000",
        kind: "context_ceiling",
        progress: true,
    })
    .await;
    assert!(
        said.message
            .contains("Largest parts: the turn's own words and calls (about"),
        "{}",
        said.message
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_context_the_provider_refuses_as_too_long_is_exhaustion() {
    play(Row {
        limits: "",
        script: vec![failing(Failure {
            status: Some(400),
            code: Some("context_length_exceeded".into()),
            ..Default::default()
        })],
        says: "is longer than the model's window",
        kind: "context_ceiling",
        progress: true,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_starting_context_over_the_ceiling_is_named_configuration() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0\nturn_ceiling_tokens = 50").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira go").await;
    let said = h
        .wait_post(
            &square,
            "mira",
            "the context budget and the ceiling disagree",
            since,
        )
        .await;
    assert!(
        said.message.contains("over its ceiling of 50 tokens"),
        "{}",
        said.message
    );
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("context_ceiling"));
    assert!(
        store(&h).queued("mira", &square).expect("queue").is_empty(),
        "exhaustion is one turn's fact: nothing is queued again"
    );
    assert!(
        e2e::scenario::turn_requests(&h).is_empty(),
        "the model is never asked"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_delivery_failure_carries_mattermosts_reason() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![reply("This never arrives."), reply("Picked up again.")],
    );
    h.fault("POST", "/api/v4/posts", 503, 1).await;
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira go").await;
    let said = h
        .wait_post(
            &square,
            "mira",
            "This turn ended: Mattermost refused a post (",
            since,
        )
        .await;
    assert!(said.message.contains("503"), "{}", said.message);
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("delivery_failure"));
    assert_eq!(
        store(&h).queued("mira", &square).expect("queue"),
        std::slice::from_ref(&asked.id)
    );
    never_said(&h, &square, "This never arrives.").await;
    h.say("ana", &square, "@mira and now?").await;
    h.wait_post(&square, "mira", "Picked up again.", since)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_post_that_arrived_while_a_failed_turn_ran_drains_the_queue_once() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            // The first model call over, absorption has ended (§4.4): a
            // post from here on queues.
            calls(&[("fixture__read", json!({"key": "a"}))]),
            Scripted {
                hold: Some("outage".into()),
                fail: Some(Failure {
                    status: Some(401),
                    ..Default::default()
                }),
                ..Default::default()
            },
            reply("Both of you, answered."),
        ],
    );
    let since = now_ms() - 1;
    let first = h.say("ana", &square, "@mira first").await;
    e2e::scenario::completions_reach(&h, 2).await;
    let second = h.say("bo", &square, "@mira second").await;
    h.wait_reaction(&second.id, "mira", "eyes").await;
    h.model.sim.release("outage");
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    // Bo's post counts as the next post: the queue drains the moment the
    // lock is released, into one turn that answers both (§7.1).
    h.wait_post(&square, "mira", "Both of you, answered.", since)
        .await;
    let turns = store(&h).turns_of("mira", &square).expect("turns");
    assert_eq!(turns.len(), 2, "one drain, not a loop");
    assert!(store(&h).queued("mira", &square).expect("queue").is_empty());
    let answered: Vec<String> = store(&h)
        .answers(&turns[1].id)
        .expect("answers")
        .into_iter()
        .map(|(post, _)| post)
        .collect();
    assert!(
        answered.contains(&first.id) && answered.contains(&second.id),
        "{answered:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_peers_mention_behind_a_failed_turn_earns_no_drain() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                matches: Some("You research.".into()),
                hold: Some("outage".into()),
                fail: Some(Failure {
                    status: Some(401),
                    ..Default::default()
                }),
                ..Default::default()
            },
            Scripted {
                matches: Some("You run operations.".into()),
                ..reply("@mira please look at the numbers.")
            },
        ],
    );
    let since = now_ms() - 1;
    let first = h.say("ana", &square, "@mira first").await;
    e2e::scenario::completions_reach(&h, 1).await;
    h.say("ana", &square, "@theo ask mira about the numbers")
        .await;
    let peer = h
        .wait_post(&square, "theo", "please look at the numbers", since)
        .await;
    h.wait_reaction(&peer.id, "mira", "eyes").await;
    h.model.sim.release("outage");
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    ended_turn(&h, "mira", &square).await;
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    // A peer's mention waits for a person (§7.1): the queue stands.
    assert_eq!(store(&h).turns_of("mira", &square).expect("turns").len(), 1);
    let queued = store(&h).queued("mira", &square).expect("queue");
    assert!(
        queued.contains(&first.id) && queued.contains(&peer.id),
        "{queued:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_4_a_fragment_folded_into_a_failed_turn_queues_nothing() {
    let (h, _daemon, _) =
        with_fixture("debounce_window_ms = 700\ndebounce_ceiling_ms = 5000").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![failing(Failure {
            status: Some(401),
            ..Default::default()
        })],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira look at the invoice").await;
    let fragment = h.say("ana", &square, "the one from March").await;
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    let turn = ended_turn(&h, "mira", &square).await;
    let answers = store(&h).answers(&turn.id).expect("answers");
    assert!(
        answers.contains(&(fragment.id.clone(), "debounce".to_string())),
        "the window folded the fragment: {answers:?}"
    );
    // The failure queues the post that started the turn; the fragment
    // named nobody, so it queues nothing (§4.4, §5.2).
    assert_eq!(
        store(&h).queued("mira", &square).expect("queue"),
        std::slice::from_ref(&asked.id)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_colleagues_hand_off_to_a_standing_queue_waits_for_a_person() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                matches: Some("You research.".into()),
                fail: Some(Failure {
                    status: Some(401),
                    ..Default::default()
                }),
                ..Default::default()
            },
            Scripted {
                matches: Some("You run operations.".into()),
                ..reply("@mira please look at the numbers.")
            },
        ],
    );
    let since = now_ms() - 1;
    let first = h.say("ana", &square, "@mira first").await;
    h.wait_post(&square, "mira", "refused the credential", since)
        .await;
    ended_turn(&h, "mira", &square).await;
    // The queue stands; mira is idle when theo's hand-off reaches it.
    h.say("ana", &square, "@theo ask mira about the numbers")
        .await;
    let peer = h
        .wait_post(&square, "theo", "please look at the numbers", since)
        .await;
    // A peer's post earns no drain (§7.1): it joins the queue, acknowledged
    // as any post waiting is (§5.2), and no turn starts.
    h.wait_reaction(&peer.id, "mira", "eyes").await;
    assert_eq!(store(&h).turns_of("mira", &square).expect("turns").len(), 1);
    let queued = store(&h).queued("mira", &square).expect("queue");
    assert!(
        queued.contains(&first.id) && queued.contains(&peer.id),
        "{queued:?}"
    );
}
