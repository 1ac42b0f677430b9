//! Turns end to end (§3.3, §3.10, §4.4, §4.5, §5.1, §5.2, §8.1, §8.2): a
//! person posts in the simulated Mattermost, the real daemon takes the turn
//! against the scripted model, and the scenario asserts what the channel
//! shows and what the store holds.

use e2e::people::now_ms;
use e2e::scenario::*;
use model_sim::script::{Scripted, ScriptedCall};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn s3_3_a_person_in_a_direct_message_gets_one_reply_and_the_turn_is_recorded() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            text: Some("Hello Ana, the answer is 42.".into()),
            usage: Some(model_sim::script::Usage {
                prompt_tokens: 900,
                completion_tokens: 12,
                cached_tokens: 300,
                ..Default::default()
            }),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    let asked = h.say("ana", &dm, "what is the answer?").await;
    let answer = h.wait_post(&dm, "mira", "the answer is 42", since).await;
    assert_eq!(answer.props["collegium_role"], "reply");

    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 1, "one completion");
    let system = requests[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(system.contains("You research."), "the agent's prompt leads");
    let framework = framework_message(&requests[0]);
    assert!(framework.starts_with("[Framework message."), "{framework}");
    assert!(
        framework.contains(&format!("post {} by ana (person)", asked.id)),
        "{framework}"
    );
    assert!(
        framework.contains("Channel: a direct message"),
        "{framework}"
    );

    // Nothing but the reply: a turn that called no tool leaves no status post.
    let posts = h.posts(&dm).await;
    assert_eq!(posts.len(), 2, "{posts:#?}");

    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let store = store(&h);
    let turn = store
        .last_turn("mira", &dm)
        .expect("query")
        .expect("a turn");
    assert_eq!(turn.exit_kind.as_deref(), Some("completed"));
    assert_eq!(
        turn.prompt_tokens, 900,
        "usage written after the completion"
    );
    assert_eq!(turn.cached_prompt_tokens, 300);
    let answers = store.answers(&turn.id).expect("answers");
    assert_eq!(answers, [(asked.id.clone(), "start".to_string())]);
    let recorded = store
        .post(&answer.id)
        .expect("query")
        .expect("the reply is recorded");
    assert_eq!(recorded.role.as_str(), "reply");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_10_a_mention_required_channel_starts_a_turn_only_for_a_mention() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("ana", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model
        .sim
        .script("demo-model", vec![reply("On it: the report is attached.")]);
    let since = now_ms() - 1;
    h.say("ana", &research, "morning all, nothing for the agents")
        .await;
    let mention = h
        .say("ana", &research, "@mira please summarise the report")
        .await;
    h.wait_post(&research, "mira", "the report is attached", since)
        .await;
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 1, "only the mention started a turn");
    let framework = framework_message(&requests[0]);
    assert!(framework.contains(&format!("post {} by ana (person)", mention.id)));
    assert!(
        framework.contains("\"Mira please summarise the report\""),
        "an agent's mention is shown by name, not as a mention: {framework}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_5_a_post_addressing_two_agents_gets_one_correction_and_no_turn() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let since = now_ms() - 1;
    h.say(
        "ana",
        &square,
        "@mira @theo can one of you check the mailbox?",
    )
    .await;
    let correction = h.wait_post(&square, "collegium", "addressed", since).await;
    assert!(
        correction.message.contains("Mira and Theo the Operator"),
        "{}",
        correction.message
    );
    assert!(
        correction.message.contains("`@mira`") && !correction.message.contains(" @mira"),
        "the example handle is in code, so the correction addresses no one: {}",
        correction.message
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(turn_requests(&h).is_empty(), "no turn started");
    let store = store(&h);
    assert!(
        store.queued("mira", &square).expect("queue").is_empty(),
        "nothing queued"
    );
    assert!(store.queued("theo", &square).expect("queue").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_2_a_busy_agent_queues_with_eyes_and_the_drain_answers_the_newest_person() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("cy", &["research"]).await;
    h.person("ana", &["research"]).await;
    h.person("bo", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("First answer for cy.".into()),
                hold: Some("first".into()),
                ..Default::default()
            },
            reply("Drained answer."),
        ],
    );
    let since = now_ms() - 1;
    h.say("cy", &research, "@mira first question").await;
    // Wait for the first completion to be in flight.
    for _ in 0..100 {
        if !turn_requests(&h).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let bo = h.say("bo", &research, "@mira a question from bo").await;
    let ana = h.say("ana", &research, "@mira and another from ana").await;
    h.wait_reaction(&bo.id, "mira", "eyes").await;
    h.wait_reaction(&ana.id, "mira", "eyes").await;
    h.model.sim.release("first");
    h.wait_post(&research, "mira", "First answer", since).await;
    h.wait_post(&research, "mira", "Drained answer", since)
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;

    let store = store(&h);
    let turn = store
        .last_turn("mira", &research)
        .expect("query")
        .expect("turn");
    assert_eq!(
        turn.exit_kind.as_deref(),
        Some("completed"),
        "the drain turn completed"
    );
    let answers: Vec<String> = store
        .answers(&turn.id)
        .expect("answers")
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert!(
        answers.contains(&bo.id) && answers.contains(&ana.id),
        "one turn took both: {answers:?}"
    );
    assert!(
        store.queued("mira", &research).expect("queue").is_empty(),
        "consumed on progress"
    );
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 2, "ten fragments become one turn, here two");
    let drained = framework_message(&requests[1]);
    assert!(
        drained.contains(&bo.id) && drained.contains(&ana.id),
        "{drained}"
    );
    assert_eq!(
        turn.answers_post_id.as_deref(),
        Some(ana.id.as_str()),
        "the drain answers the newest person who addressed the agent"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_1_tool_calls_open_one_status_post_edited_in_place() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("ana", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("Checking the time for @theo.".into()),
                tool_calls: vec![ScriptedCall {
                    name: "builtins__now".into(),
                    arguments: json!({}),
                    raw_arguments: None,
                }],
                ..Default::default()
            },
            Scripted {
                tool_calls: vec![ScriptedCall {
                    name: "now".into(),
                    arguments: json!({"zone": "utc"}),
                    raw_arguments: None,
                }],
                ..Default::default()
            },
            reply("It is the afternoon."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &research, "@mira what time is it?").await;
    h.wait_post(&research, "mira", "It is the afternoon.", since)
        .await;
    let posts = h.posts(&research).await;
    let status: Vec<_> = posts
        .iter()
        .filter(|p| p.props.get("collegium_role") == Some(&json!("status")))
        .collect();
    assert_eq!(status.len(), 1, "one status post per turn: {posts:#?}");
    let closed = h.wait_edit(&status[0].id, "Done in").await;
    let body = &closed.message;
    assert!(
        body.contains("💬 Checking the time for Theo the Operator."),
        "interim text, mention stripped: {body}"
    );
    assert!(
        body.contains("• builtins::now (×2)"),
        "identical lines collapse: {body}"
    );
    assert!(body.contains("Done in"), "closing line: {body}");
    let requests = turn_requests(&h);
    let third = requests.last().expect("the last completion");
    let results: Vec<&str> = third["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(results.len(), 2, "{third:#?}");
    assert!(
        results[1].contains("[Ignored: zone"),
        "an undeclared argument is ignored and said: {}",
        results[1]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_4_a_fragment_during_the_first_call_is_absorbed_and_the_turn_starts_over() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("ana", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("An answer that saw only the first sentence.".into()),
                hold: Some("first-call".into()),
                ..Default::default()
            },
            reply("The report with its appendix, as asked."),
        ],
    );
    let since = now_ms() - 1;
    let start = h
        .say("ana", &research, "@mira please send me the report")
        .await;
    completions_reach(&h, 1).await;
    let fragment = h.say("ana", &research, "with the appendix too").await;
    h.wait_post(&research, "mira", "with its appendix", since)
        .await;
    h.model.sim.release("first-call");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let replies: Vec<_> = h
        .posts(&research)
        .await
        .into_iter()
        .filter(|p| p.props.get("collegium_role") == Some(&json!("reply")))
        .collect();
    assert_eq!(
        replies.len(),
        1,
        "the discarded completion is never posted: {replies:#?}"
    );
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 2, "one completion discarded, one answered");
    let framework = framework_message(&requests[1]);
    assert!(
        framework.contains(&start.id) && framework.contains(&fragment.id),
        "{framework}"
    );
    let store = store(&h);
    let turn = store
        .last_turn("mira", &research)
        .expect("query")
        .expect("turn");
    let answers = store.answers(&turn.id).expect("answers");
    assert!(
        answers.contains(&(fragment.id.clone(), "fold".to_string())),
        "{answers:?}"
    );
    assert!(
        store
            .turn_events(&turn.id)
            .expect("trace")
            .iter()
            .any(|e| e.kind.as_str() == "fold"),
        "the fold is in the trace"
    );
    // The completion the fold aborted reported nothing: its event carries
    // an estimate of what it had streamed, marked as one (§8.2).
    let fold = store
        .turn_events(&turn.id)
        .expect("trace")
        .into_iter()
        .find(|e| e.kind.as_str() == "fold")
        .expect("fold event");
    let detail: serde_json::Value =
        serde_json::from_str(fold.detail.as_deref().unwrap_or("null")).expect("detail");
    assert_eq!(
        detail["aborted_completion"]["estimated"],
        json!(true),
        "{detail}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_12_reasoning_is_stored_beside_the_completion_that_produced_it() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![Scripted {
            text: Some("It is 42.".into()),
            reasoning: Some("Six times seven.".into()),
            ..Default::default()
        }],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "what is the answer?").await;
    h.wait_post(&dm, "mira", "It is 42.", since).await;
    let turn = ended_turn(&h, "mira", &dm).await;
    let stored = store(&h).completion_reasoning(&turn.id).expect("reasoning");
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(
        stored[0]
            .as_deref()
            .is_some_and(|r| r.contains("Six times seven.")),
        "{stored:?}"
    );
    assert!(
        !h.posts(&dm)
            .await
            .iter()
            .any(|p| p.message.contains("Six times seven")),
        "never posted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s4_4_the_debounce_window_folds_a_persons_fragments_into_one_turn() {
    let (h, _daemon) = running("debounce_window_ms = 700\ndebounce_ceiling_ms = 5000").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model
        .sim
        .script("demo-model", vec![reply("One answer to all three.")]);
    let since = now_ms() - 1;
    let first = h.say("ana", &dm, "hi").await;
    let second = h.say("ana", &dm, "about the invoice").await;
    let third = h.say("ana", &dm, "from March").await;
    h.wait_post(&dm, "mira", "One answer", since).await;
    let mira = h.user("mira").await.id;
    let typing = h
        .served()
        .await
        .into_iter()
        .filter(|r| *r == format!("POST /api/v4/users/{mira}/typing"))
        .count();
    assert!(
        typing >= 1,
        "typing shows through the window and the generation"
    );
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 1, "three fragments, one turn");
    let framework = framework_message(&requests[0]);
    for post in [&first, &second, &third] {
        assert!(framework.contains(&post.id), "{framework}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_2_a_drain_whose_window_cannot_reach_its_earliest_post_says_how_far_it_reached() {
    let (h, _daemon) = running("debounce_window_ms = 0\ncontext_budget_tokens = 400").await;
    for person in ["cy", "bo", "ana"] {
        h.person(person, &["research"]).await;
    }
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("First answer.".into()),
                hold: Some("busy".into()),
                ..Default::default()
            },
            reply("Drained, with what the window held."),
        ],
    );
    let since = now_ms() - 1;
    h.say("cy", &research, "@mira first question").await;
    completions_reach(&h, 1).await;
    let early = h.say("bo", &research, "@mira an early request").await;
    h.wait_reaction(&early.id, "mira", "eyes").await;
    for i in 0..12 {
        h.say(
            "ana",
            &research,
            &format!("chatter {i}: {}", "long words ".repeat(20)),
        )
        .await;
    }
    let late = h.say("ana", &research, "@mira the late request").await;
    h.wait_reaction(&late.id, "mira", "eyes").await;
    h.model.sim.release("busy");
    h.wait_post(&research, "mira", "Drained", since).await;
    let posts = h.posts(&research).await;
    let status = posts
        .iter()
        .find(|p| p.props.get("collegium_role") == Some(&json!("status")))
        .expect("the drain opens its status post to say so");
    let body = h.wait_edit(&status.id, "Done in").await.message;
    assert!(body.contains("context reached back to"), "{body}");
    assert!(
        body.contains(&early.id),
        "names the post it could not reach: {body}"
    );
}

/// cy's post starts @mira's turn, whose first answer (`first`) the model
/// holds as "first"; bo's post then waits in the queue behind it (👀). The
/// model answers the drain with "Drained answer." and then `then`. The
/// channel and the moment before cy posted.
async fn a_post_queued_behind_a_held_turn(
    h: &e2e::Harness,
    first: &str,
    then: Vec<Scripted>,
) -> (String, i64) {
    h.person("cy", &["research"]).await;
    h.person("bo", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    let mut script = vec![
        Scripted {
            text: Some(first.into()),
            hold: Some("first".into()),
            ..Default::default()
        },
        reply("Drained answer."),
    ];
    script.extend(then);
    h.model.sim.script("demo-model", script);
    let since = now_ms() - 1;
    h.say("cy", &research, "@mira first question").await;
    e2e::scenario::completions_reach(h, 1).await;
    let bo = h.say("bo", &research, "@mira a question from bo").await;
    h.wait_reaction(&bo.id, "mira", "eyes").await;
    (research, since)
}

/// A request's last two window entries before the framework's message:
/// the agent's own message, then the line after it.
fn window_end(request: &serde_json::Value) -> (&serde_json::Value, &serde_json::Value) {
    let messages = request["messages"].as_array().expect("messages");
    let framework = framework_index(request);
    (&messages[framework - 2], &messages[framework - 1])
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_2_a_drains_window_ends_on_its_own_message_then_the_line_marking_where_it_ended() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    let (research, since) =
        a_post_queued_behind_a_held_turn(&h, "First answer for cy.", vec![]).await;
    h.model.sim.release("first");
    h.wait_post(&research, "mira", "Drained answer", since)
        .await;
    let requests = turn_requests(&h);
    let drain = &requests[1];
    // The window's last entry is the line marking where the previous turn
    // ended, right after the agent's own message (§5.2).
    let (own, marker) = window_end(drain);
    assert_eq!(marker["role"], "user", "{marker}");
    assert!(
        marker["content"]
            .as_str()
            .is_some_and(|c| c.contains("Your previous turn in this channel ended")),
        "{marker}"
    );
    assert_eq!(own["role"], "assistant", "{own}");
    assert!(
        own["content"]
            .as_str()
            .is_some_and(|c| c.contains("First answer for cy.")),
        "{own}"
    );
    assert!(
        !framework_message(drain).contains("previous turn"),
        "the marker is no part of the framework's message"
    );
}

/// §5.2: a drain that starts before any socket delivered the reply of the
/// turn before it still ends its window on that reply: the turn recorded it
/// from Mattermost's answer. The reply's late socket copy is then handed on
/// once, as the feed hands on what it records (§8.2), so the colleague it
/// addresses answers once.
#[tokio::test(flavor = "multi_thread")]
async fn s5_2_a_drain_reads_the_reply_before_any_socket_delivered_it() {
    let (h, _daemon) = running("debounce_window_ms = 0").await;
    h.join("theo", "research").await;
    let (research, since) = a_post_queued_behind_a_held_turn(
        &h,
        "First answer for cy. @theo please check it.",
        vec![reply("Checked, it holds.")],
    )
    .await;
    // From here every bot's socket delivers each event 10 s late: the
    // reply reaches the process only as Mattermost's answer to its post.
    for bot in ["mira", "theo", e2e::triggers::SYSTEM_BOT] {
        h.hold_events(bot, 10_000, 1_000).await;
    }
    h.model.sim.release("first");
    h.wait_post(&research, "mira", "Drained answer", since)
        .await;
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 2, "theo has not been handed the reply yet");
    let drain = &requests[1];
    let (own, marker) = window_end(drain);
    assert!(
        marker["content"]
            .as_str()
            .is_some_and(|c| c.contains("Your previous turn in this channel ended")),
        "{drain:#?}"
    );
    assert!(
        own["content"]
            .as_str()
            .is_some_and(|c| c.contains("First answer for cy.")),
        "{drain:#?}"
    );

    // The late copy hands the reply on: theo answers it, once.
    h.wait_post(&research, "theo", "Checked, it holds", since)
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(1_500)).await;
    let theos = h
        .posts(&research)
        .await
        .into_iter()
        .filter(|p| p.message.contains("Checked, it holds"))
        .count();
    assert_eq!(theos, 1, "the reply was handed on once");
    assert_eq!(turn_requests(&h).len(), 3);
}
