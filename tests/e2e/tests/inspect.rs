//! `/collegium inspect {agent}` (§8.4, §3.8): the agent's limits, tools,
//! skills and schedules, and the prompt a turn in this channel would be
//! given, rendered by the turn's own code — so the next turn's request
//! carries the same system prompt, byte for byte, and the same message
//! after the window but for the posts that turn answers.

use e2e::people::now_ms;
use e2e::scenario::{
    ended_turn, framework_message, reply, square_with, turn_requests, with_fixture,
};

/// The text of the fenced block following `heading` in an inspect answer.
fn block_after(answer: &str, heading: &str) -> String {
    let after = &answer[answer.find(heading).expect(heading) + heading.len()..];
    let fence_len = after.find('\n').expect("fence line");
    let fence = &after[..fence_len];
    assert!(
        fence.chars().all(|c| c == '`') && fence.len() >= 3,
        "{fence}"
    );
    let body = &after[fence_len + 1..];
    let end = body.find(&format!("\n{fence}\n")).expect("closing fence");
    body[..end].to_string()
}

/// The framework's message without the posts it answers: the one part a
/// turn knows and inspect, which answers nothing, cannot.
fn without_answers(message: &str) -> String {
    let Some(start) = message.find("Posts you answer now") else {
        return message.to_string();
    };
    let end = message.find("Today is ").expect("the date line");
    format!("{}{}", &message[..start], &message[end..])
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_inspect_shows_the_prompt_the_next_turn_is_given() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana"]).await;
    h.model
        .sim
        .script("demo-model", vec![reply("Noted."), reply("Again.")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira remember the blue door").await;
    h.wait_post(&square, "mira", "Noted.", since).await;
    ended_turn(&h, "mira", &square).await;

    h.command("ana", &square, "/collegium inspect @mira").await;
    let answer = h.wait_ephemeral("ana", "System prompt:").await;
    let answer = answer["message"].as_str().expect("text").to_string();
    for field in [
        "- Model: `demo`",
        "- Context budget: ",
        "- Turn ceiling: ",
        "enters as a view",
        "- Completion time limit: ",
        "- Tools: ",
        "- Skills: handing-work-to-a-peer, understanding-collegium",
        "- Schedules: ",
    ] {
        assert!(answer.contains(field), "{field} missing from:\n{answer}");
    }
    let system = block_after(&answer, "System prompt:\n");
    let message = block_after(&answer, "lists them first):\n");
    assert!(message.starts_with("[Framework message."), "{message}");

    h.say("ana", &square, "@mira and again").await;
    h.wait_post(&square, "mira", "Again.", since).await;
    let next = turn_requests(&h).pop().expect("the next turn's request");
    let sent_system = next["messages"][0]["content"].as_str().expect("system");
    assert_eq!(system, sent_system, "the system prompt, byte for byte");
    let sent = framework_message(&next);
    assert!(sent.contains("Posts you answer now"), "{sent}");
    assert_eq!(
        message,
        without_answers(&sent),
        "the message after the window, but for the posts the turn answers"
    );

    // An agent not in this channel is answered with the agents that are.
    h.command("ana", &square, "/collegium inspect nobody").await;
    h.wait_ephemeral("ana", "nobody is not an agent in this channel")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_slow_answer_says_it_is_working_and_finishes_through_the_response_url() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0\ncommand_answer_ms = 300").await;
    let square = square_with(&h, &["ana"]).await;
    // Mattermost holds the notice's post for 1.5 s, then refuses it: the
    // answer is not ready within the deadline, and has something to say.
    h.fault_slowly("POST", "/api/v4/posts", 403, 1_500, 5).await;
    let at_once = h.command("ana", &square, "/collegium reset mira").await;
    assert!(
        at_once["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Working on it")),
        "the command's own answer: {at_once}"
    );
    let later = h
        .wait_ephemeral(
            "ana",
            "The boundary is set, but the notice could not be posted",
        )
        .await;
    assert_eq!(
        later["props"]["from_webhook"], "true",
        "delivered through the command's response_url: {later}"
    );
    assert_eq!(later["channel_id"], square.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_an_answer_over_the_post_limit_arrives_whole_as_a_file_in_a_dm() {
    let (h, _daemon, _) = with_fixture("debounce_window_ms = 0").await;
    let square = square_with(&h, &["ana", "bo"]).await;
    // An administrator lowers the limit while the daemon runs: it is read
    // when the answer is given, not at boot.
    h.sim_settings(serde_json::json!({"max_post_size": 1500}))
        .await;
    let since = now_ms() - 1;
    h.command("ana", &square, "/collegium inspect mira").await;
    let pointer = h
        .wait_ephemeral("ana", "over this server's post limit of 1500")
        .await;
    let pointer = pointer["message"].as_str().expect("text");
    assert!(
        pointer.contains("as the file `collegium-inspect-mira.md`"),
        "{pointer}"
    );
    let dm = h.dm("ana", "collegium").await;
    let delivered = h.wait_post(&dm, "collegium", "is attached", since).await;
    assert_eq!(delivered.file_ids.len(), 1, "{}", delivered.message);
    let whole = String::from_utf8(h.file_bytes("ana", &delivered.file_ids[0]).await).expect("text");
    assert!(whole.chars().count() > 1500, "{}", whole.len());
    for part in [
        "- Model: `demo`",
        "System prompt:\n",
        "lists them first):\n",
    ] {
        assert!(whole.contains(part), "{part} missing: nothing is cut");
    }
    // It was never posted where another member would see it.
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("System prompt:")),
        "never posted in the channel"
    );
}
