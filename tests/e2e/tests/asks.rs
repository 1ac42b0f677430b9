//! Asking a person (§3.7a, §8.1, §8.4): `ask::human` parks the turn on a
//! question under the agent's account, led by the agent's own words, with
//! the framework line tagging the person the work descends from. The answer
//! (an offered button or free text) is the call's result and the turn goes
//! on under the same budget; a plain post in the channel is not an answer.

use collegium_control::callbacks::DECISION_ROUTE as DECISION;
use collegium_control::callbacks::DIALOG_ROUTE;
use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    callback, calls, ended_turn, reply, status_post, store, tool_results, turn_requests,
};
use mattermost_wire::model::Post;
use serde_json::json;

async fn asking() -> (Harness, e2e::Daemon) {
    let (h, daemon, _) =
        e2e::scenario::with_fixture_granting("debounce_window_ms = 0", &["ask"]).await;
    (h, daemon)
}

fn ask(question: &str, answers: &[&str]) -> model_sim::script::Scripted {
    let mut scripted = calls(&[(
        "ask__human",
        json!({"question": question, "answers": answers}),
    )]);
    scripted.text = Some("I need one fact before I book.".into());
    scripted
}

async fn question(h: &Harness, channel: &str, since: i64) -> Post {
    h.wait_post(channel, "mira", "❓ **Question**", since).await
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7a_an_offered_answer_is_the_calls_result_and_a_plain_post_is_not() {
    let (h, _daemon) = asking().await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            ask("Which venue?", &["Hall A", "Hall B"]),
            reply("Booked Hall B."),
            reply("Hello again."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "book the offsite").await;
    let prompt = question(&h, &dm, since).await;
    assert!(
        prompt.message.starts_with("I need one fact before I book.\n\n❓ **Question** — action 1 of 10 in this turn; asked by @ana: “book the offsite”.\n> Which venue?"),
        "the agent's words lead, then the line naming (tagging) @ana: {}",
        prompt.message
    );
    assert_eq!(prompt.props["collegium_role"], "prompt");
    let names: Vec<String> = prompt
        .attachments()
        .iter()
        .flat_map(|a| a.actions.iter().map(|b| b.name.clone()))
        .collect();
    assert_eq!(names, ["Hall A", "Hall B", "Answer…"]);
    let status = status_post(&h, &dm).await;
    assert!(
        status.message.contains("❓ _waiting on an answer since"),
        "{}",
        status.message
    );

    // A plain post is not an answer: it queues as any post does.
    let aside = h.say("ana", &dm, "Hall B, I think?").await;
    h.wait_reaction(&aside.id, "mira", "eyes").await;
    let open = store(&h).open_decisions(Some("mira")).expect("open");
    assert_eq!(open.len(), 1, "the question still waits");

    h.click("ana", &prompt.id, "choice1").await;
    h.wait_post(&dm, "mira", "Booked Hall B.", since).await;
    h.wait_edit(&prompt.id, "💬 Answered by @ana: “Hall B”")
        .await;
    let requests = turn_requests(&h);
    let results = tool_results(&requests[1]);
    assert_eq!(
        results,
        ["@ana answered: Hall B"],
        "the answer is the result"
    );
    assert!(
        !requests[1]["messages"]
            .to_string()
            .contains("❓ **Question**"),
        "the prompt never enters the window"
    );
    // The queued post drains once the turn ends, as its own next turn.
    h.wait_post(&dm, "mira", "Hello again.", since).await;
    let first = store(&h)
        .turns_of("mira", &dm)
        .expect("turns")
        .into_iter()
        .next()
        .expect("the asking turn");
    assert_eq!(first.exit_kind.as_deref(), Some("completed"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7a_a_written_answer_comes_through_the_dialog_and_outsiders_cannot_answer() {
    let (h, _daemon) = asking().await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            ask("How many people come?", &[]),
            reply("Noted: about forty."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira plan the offsite").await;
    let prompt = question(&h, &square, since).await;
    let key = h
        .credentials()
        .command
        .expect("command")
        .token
        .into_exposed();
    let id = h.decision_for_prompt(&prompt.id).await;
    // A choice the prompt never offered, signed with the key as a forger
    // holding it would, and an outsider's click, record nothing.
    let click = |user: String, choice: usize| {
        use collegium_control::approvals::sign::{button, sign};
        let signature = sign(&key, &button(&id, "choose", Some(choice)));
        json!({"user_id": user, "channel_id": square, "post_id": prompt.id, "trigger_id": "t",
               "context": {"action": "choose", "approval": id, "signature": signature, "choice": choice}})
    };
    let (_, answer) = callback(&h, DECISION, &click(h.user("ana").await.id, 7)).await;
    assert_eq!(
        answer["ephemeral_text"],
        "That answer was not offered; nothing was recorded."
    );
    let (_, answer) = callback(&h, DECISION, &click(h.stranger("cy").await, 0)).await;
    assert_eq!(
        answer["ephemeral_text"],
        "Only a person in this channel may answer this question."
    );

    h.click("ana", &prompt.id, "answer").await;
    let opened = h.wait_dialog("ana").await;
    // The dialog's state answers for ana alone: sent as anyone else, it is
    // refused (§6.4).
    let state = opened.to_string();
    let state = state
        .split("\"state\":\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("the dialog carries its state: {opened}"))
        .to_string();
    let borrowed = json!({"callback_id": id, "state": state, "user_id": h.user("bo").await.id,
                          "channel_id": square, "submission": {"answer": "forty, says bo"}});
    let (status, _) = callback(&h, DIALOG_ROUTE, &borrowed).await;
    assert_eq!(status, 403, "another person cannot submit ana's dialog");
    h.submit_dialog("ana", &square, json!({"answer": "about forty"}))
        .await;
    h.wait_post(&square, "mira", "Noted: about forty.", since)
        .await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert_eq!(results, ["@ana answered: about forty"]);
    h.wait_edit(&prompt.id, "Answered by @ana: “about forty”")
        .await;
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("completed"));
    let decided = store(&h).decision(&id).expect("read").expect("row");
    assert_eq!(decided.outcome.as_deref(), Some("answered"));
    assert_eq!(decided.reason.as_deref(), Some("about forty"));
}
