//! `/collegium trace {post}` (§8.3, §8.4) through the real command route:
//! the head checked against the store's record of the turn, reasoning never
//! shown (§3.12), an answer over the post limit delivered whole as a file
//! in a direct message from the system bot, a post two turns answered, and
//! a post in a channel the invoker cannot read answered as one that does
//! not exist.

use e2e::people::now_ms;
use e2e::scenario::{
    calls, completions_reach, ended_turn, private_channel_with_mira, reply, square_with, store,
    with_fixture_granting,
};
use model_sim::script::Scripted;
use serde_json::{Value, json};

const MIRA: &str = "You research.";

async fn deployment(limits: &str) -> (e2e::Harness, e2e::Daemon, String) {
    let (h, daemon, _record) = with_fixture_granting(limits, &[]).await;
    let square = square_with(&h, &["ana", "bo"]).await;
    (h, daemon, square)
}

/// The ephemeral answer's text.
async fn answered(h: &e2e::Harness, user: &str, contains: &str) -> String {
    h.wait_ephemeral(user, contains).await["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// `n` with a comma every three digits, as the trace writes counts.
fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_3_the_head_states_the_turns_record_as_stored_and_never_its_reasoning() {
    let (h, _daemon, square) = deployment("debounce_window_ms = 0").await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                reasoning: Some("PRIVATE-THOUGHT-ONE about the file".into()),
                ..calls(&[("workspace__read", json!({"path": "notes.txt"}))])
            },
            Scripted {
                reasoning: Some("PRIVATE-THOUGHT-TWO before replying".into()),
                ..reply("Read notes.txt.")
            },
        ],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira note the floor").await;
    let written = h.wait_post(&square, "mira", "Read notes.txt.", since).await;
    let turn = ended_turn(&h, "mira", &square).await;
    let head = store(&h)
        .trace_head(&turn.id)
        .expect("read")
        .expect("the turn's row");

    h.command("ana", &square, &format!("/collegium trace {}", written.id))
        .await;
    let text = answered(&h, "ana", "**Trace of Mira's turn").await;
    for expected in [
        format!(
            "turn {}** ({}; ended as {})",
            head.id,
            head.model,
            head.exit_kind.clone().expect("ended")
        ),
        format!("it wrote the post {}", written.id),
        format!(
            "- Started by: a post addressing an idle agent; it answers post {}",
            asked.id
        ),
        format!(
            "- Posts it answers: {} (the post that started it, by ana)",
            asked.id
        ),
        "- Drain began from: not a drain".to_string(),
        "- Steered: no steer reached it".to_string(),
        "- Owed reply (§3.15): it handed no work on".to_string(),
        "- Asked to end the turn at a unit post:".to_string(),
        format!(
            "ran {}.{:03} s",
            (head.ended_at.expect("ended") - head.started_at) / 1000,
            (head.ended_at.expect("ended") - head.started_at) % 1000
        ),
        format!(
            "- Actions: {} (chain depth {}",
            head.action_count, head.depth
        ),
        format!(
            "the budget charged {} tokens",
            thousands(head.context_charged_tokens.expect("assembled"))
        ),
        format!(
            "- Tokens: prompt {}, of which the provider's cache served {}",
            thousands(head.prompt_tokens),
            thousands(head.cached_prompt_tokens)
        ),
        format!(
            "completion {}, of which {} reasoning",
            thousands(head.completion_tokens),
            thousands(head.reasoning_tokens)
        ),
        match head.cost_micro_usd {
            Some(c) => format!("- Cost: ${}.{:06}", c / 1_000_000, c % 1_000_000),
            None => "- Cost: the provider reported none".to_string(),
        },
        format!(
            "**Events** ({}):",
            store(&h).turn_events(&turn.id).expect("events").len()
        ),
        "result of ".to_string(),
        "`workspace__read`".to_string(),
        "completion (ToolCalls)".to_string(),
        "relief: none since the completion before".to_string(),
        "  wrote: Read notes.txt.".to_string(),
    ] {
        assert!(text.contains(&expected), "missing {expected:?} in\n{text}");
    }
    assert!(head.action_count >= 1, "the read was an action");
    assert!(
        !text.contains("PRIVATE-THOUGHT"),
        "reasoning is never returned by trace (§3.12):\n{text}"
    );
    // The stored reasoning is there, beside its completion, and only there.
    assert!(
        store(&h)
            .completion_reasoning(&turn.id)
            .expect("reasoning")
            .iter()
            .flatten()
            .any(|r| r.contains("PRIVATE-THOUGHT-ONE"))
    );

    // The post it answered names the same turn.
    h.command("ana", &square, &format!("/collegium trace {}", asked.id))
        .await;
    let by_question = answered(&h, "ana", "it answered the post (the post that started it)").await;
    assert!(by_question.contains(&turn.id), "{by_question}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_3_a_600_event_trace_over_the_post_limit_arrives_as_a_file_in_a_dm_from_the_system_bot()
{
    let (h, _daemon, square) = deployment("debounce_window_ms = 0\naction_budget = 1000").await;
    let batch = |from: usize| -> Vec<(String, Value)> {
        (from..from + 299)
            .map(|i| {
                (
                    "workspace__read".to_string(),
                    json!({"path": format!("f{i}.txt")}),
                )
            })
            .collect()
    };
    let as_calls = |list: Vec<(String, Value)>| {
        let borrowed: Vec<(&str, Value)> =
            list.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
        calls(&borrowed)
    };
    h.model.sim.script(
        "demo-model",
        vec![
            as_calls(batch(0)),
            as_calls(batch(299)),
            reply("Read them all."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira read every file").await;
    let written = h.wait_post(&square, "mira", "Read them all.", since).await;
    let turn = ended_turn(&h, "mira", &square).await;
    let events = store(&h).turn_events(&turn.id).expect("events");
    assert!(events.len() >= 600, "{} events", events.len());

    h.command("ana", &square, &format!("/collegium trace {}", written.id))
        .await;
    let pointer = answered(&h, "ana", "over this server's post limit").await;
    assert!(
        pointer.contains("@collegium sent it to you whole as the file")
            && pointer.contains("direct message"),
        "{pointer}"
    );
    let dm = h.dm("ana", "collegium").await;
    let delivered = h.wait_post(&dm, "collegium", "is attached", since).await;
    assert_eq!(delivered.file_ids.len(), 1, "{}", delivered.message);
    let bytes = h.file_bytes("ana", &delivered.file_ids[0]).await;
    let whole = String::from_utf8(bytes).expect("text");
    assert!(
        whole.chars().count() > 16_383,
        "over the limit: {}",
        whole.len()
    );
    assert!(
        whole.contains(&format!("**Events** ({}):", events.len())),
        "whole"
    );
    assert!(whole.contains("f597.txt"), "the last call is in it");
    // Another member of the channel was shown none of it.
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("**Trace of")),
        "the trace is never posted in the channel"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_post_two_turns_answered_lists_both() {
    let (h, mut daemon, square) = deployment("debounce_window_ms = 0").await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            text: Some("Never finished.".into()),
            hold: Some("never".into()),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira summarise the week").await;
    completions_reach(&h, 1).await;
    // A crash before any tool: the post is queued again and a fresh turn
    // answers it (§7.3), so two turns answered it.
    daemon.child.kill().expect("SIGKILL");
    let _ = daemon.child.wait();
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            matches: Some(MIRA.into()),
            ..reply("The week, after the crash.")
        }],
    );
    let mut again = h.daemon();
    again.wait_for("agents are listening");
    h.wait_post(&square, "mira", "after the crash", since).await;
    let answering = store(&h).turns_of_post(&asked.id).expect("turns");
    assert_eq!(answering.len(), 2, "{answering:?}");

    h.command("ana", &square, &format!("/collegium trace {}", asked.id))
        .await;
    let text = answered(&h, "ana", "belongs to 2 turns").await;
    for (turn, _) in &answering {
        assert!(text.contains(&format!("- turn {turn} of Mira")), "{text}");
        assert!(text.contains(&format!("Mira's turn {turn}**")), "{text}");
    }
    h.model.sim.release("never");
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_post_in_a_channel_the_invoker_cannot_read_is_answered_as_one_that_does_not_exist() {
    let (h, _daemon, square) = deployment("debounce_window_ms = 0").await;
    let secret = private_channel_with_mira(&h, "ana", "secret").await;
    h.model
        .sim
        .script("demo-model", vec![reply("The secret answer.")]);
    let since = now_ms() - 1;
    h.say("ana", &secret, "@mira the secret question").await;
    let hidden = h
        .wait_post(&secret, "mira", "The secret answer.", since)
        .await;
    ended_turn(&h, "mira", &secret).await;

    h.command("bo", &square, &format!("/collegium trace {}", hidden.id))
        .await;
    let unreadable = answered(&h, "bo", &hidden.id).await;
    let missing_id = "zzzzzzzzzzzzzzzzzzzzzzzzzz";
    h.command("bo", &square, &format!("/collegium trace {missing_id}"))
        .await;
    let missing = answered(&h, "bo", missing_id).await;
    assert_eq!(
        unreadable.replace(&hidden.id, "{post}"),
        missing.replace(missing_id, "{post}"),
        "the two answers are the same"
    );
    assert!(!unreadable.contains("secret"), "{unreadable}");

    // Its member reads it.
    h.command("ana", &secret, &format!("/collegium trace {}", hidden.id))
        .await;
    answered(&h, "ana", "**Trace of Mira's turn").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_turn_waiting_on_a_person_says_on_what_since_when_and_its_prompt() {
    let (h, _daemon, square) = deployment("debounce_window_ms = 0").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "fixture__write",
                json!({"path": "notes/plan.txt", "content": "ship on Friday"}),
            )]),
            reply("Written."),
        ],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &square, "@mira write the plan down").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    let open = store(&h).open_decisions(Some("mira")).expect("decisions");
    let (decision, requested_at) = open.first().expect("an open approval").clone();

    h.command("bo", &square, &format!("/collegium trace {}", asked.id))
        .await;
    let text = answered(&h, "bo", "**Trace of Mira's turn").await;
    assert!(text.contains("still running"), "{text}");
    let parked = text
        .lines()
        .find(|l| l.starts_with("- Parked: waiting on a decision on its approval prompt for `fixture::write` since "))
        .unwrap_or_else(|| panic!("no parked line in\n{text}"));
    assert!(
        parked.ends_with(&format!(
            "(prompt post {}); the prompt as the person was shown it:",
            prompt.id
        )),
        "{parked}"
    );
    // Since when: the minute the approval was requested, in operator time.
    assert!(requested_at >= since, "requested during this turn");
    assert!(
        text.contains(&decision.payload),
        "the prompt as shown: {text}"
    );
    // The prompt post itself names the same turn.
    h.command("bo", &square, &format!("/collegium trace {}", prompt.id))
        .await;
    let by_prompt = answered(&h, "bo", "it wrote the post").await;
    assert!(by_prompt.contains(&decision.turn_id), "{by_prompt}");
}
