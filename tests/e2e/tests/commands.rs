//! `/collegium` (§7.5, §8.4, §6.4): the command's token checked on every
//! request; a bare command lists the subcommands; stop and kill halt the
//! turns in the channel visibly, never clearing the queue; queue and
//! approvals show what waits.

use e2e::people::now_ms;
use e2e::scenario::{calls, completions_reach, ended_turn, reply, store, with_fixture};
use model_sim::script::Scripted;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_a_bare_command_lists_the_subcommands_and_a_forged_one_is_refused() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.command("ana", &square, "/collegium").await;
    h.wait_ephemeral("ana", "Usage: /collegium").await;
    let callback = h.loaded().config.callbacks.public_url.clone();
    let forged = reqwest::Client::new()
        .post(format!("{callback}/mattermost/command"))
        .form(&[
            ("token", "guessed"),
            ("user_name", "ana"),
            ("channel_id", square.as_str()),
            ("text", "stop"),
        ])
        .send()
        .await
        .expect("callback");
    assert_eq!(forged.status(), 401, "the command's token is required");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_stop_ends_a_turn_parked_on_an_approval_and_cancels_the_prompt() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let (prompt, since) = e2e::scenario::parked_on_a_write(&h, &square).await;
    h.command("ana", &square, "/collegium approvals").await;
    h.wait_ephemeral("ana", "1 waiting on a person").await;
    h.command("ana", &square, "/collegium queue mira").await;
    h.wait_ephemeral(
        "ana",
        "It is parked, waiting on a decision on its approval prompt for",
    )
    .await;
    h.command("ana", &square, "/collegium stop").await;
    let notice = h
        .wait_post(
            &square,
            "collegium",
            "Stopped Mira here at @ana's command",
            since,
        )
        .await;
    assert!(
        !notice.message.contains("@mira"),
        "agents are named without @"
    );
    h.wait_edit(&prompt.id, "Cancelled: @ana stopped the turn")
        .await;
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("stopped"));
    let store = store(&h);
    let approval = store
        .decision_for_prompt(&prompt.id)
        .expect("query")
        .expect("approval");
    let decision = store.decision(&approval).expect("query").expect("row");
    assert_eq!(
        decision.outcome.as_deref(),
        Some("cancelled"),
        "a stop is not a denial"
    );
    assert!(
        fixture_toolset::asked(&record).is_empty(),
        "the write never ran"
    );
    let status = e2e::scenario::status_post(&h, &square).await;
    h.wait_edit(&status.id, "Stopped by @ana").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_kill_aborts_the_completion_in_flight_and_leaves_the_queue() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("Never posted.".into()),
                hold: Some("slow".into()),
                ..Default::default()
            },
            reply("Bo's answer, after the kill."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira a long task").await;
    completions_reach(&h, 1).await;
    let queued = h.say("bo", &square, "@mira a question from bo").await;
    h.wait_reaction(&queued.id, "mira", "eyes").await;
    h.command("ana", &square, "/collegium queue mira").await;
    let lane = h
        .wait_ephemeral("ana", "a turn is running, holding the lane since")
        .await
        .to_string();
    let started = store(&h)
        .last_turn("mira", &square)
        .expect("query")
        .expect("turn");
    assert!(
        lane.contains(&format!(
            "started by post {}",
            started.answers_post_id.as_deref().expect("answers a post")
        )) && lane.contains("it has no status post yet")
            && lane.contains("1 queued.")
            && lane.contains(&queued.id),
        "§8.4: since when, the starting post, the status post, the queue: {lane}"
    );
    h.command("ana", &square, "/collegium kill").await;
    h.wait_post(
        &square,
        "collegium",
        "Killed Mira here at @ana's command",
        since,
    )
    .await;
    // A kill is a person's act: the queue drains into the next turn.
    h.wait_post(&square, "mira", "Bo's answer", since).await;
    let turns = store(&h).turns_of("mira", &square).expect("turns");
    assert_eq!(turns[0].exit_kind.as_deref(), Some("killed"));
    assert_eq!(
        turns[1].answers_post_id.as_deref(),
        Some(queued.id.as_str())
    );
    h.model.sim.release("slow");
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("Never posted.")),
        "the aborted completion is never posted"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_a_steer_aborts_the_completion_and_arrives_as_the_person_speaking() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.command("ana", &square, "/collegium steer use euros")
        .await;
    h.wait_ephemeral("ana", "your text was discarded").await;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("An answer in dollars.".into()),
                hold: Some("first".into()),
                ..Default::default()
            },
            reply("The total is 40 euros."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira what is the total?").await;
    completions_reach(&h, 1).await;
    h.command("ana", &square, "/collegium steer mira use euros")
        .await;
    h.wait_ephemeral("ana", "Steering Mira.").await;
    h.wait_post(&square, "mira", "40 euros", since).await;
    h.model.sim.release("first");
    let requests = e2e::scenario::turn_requests(&h);
    let last = requests.last().expect("completions");
    assert!(
        last["messages"]
            .to_string()
            .contains("[@ana steers this turn] use euros"),
        "{last}"
    );
    assert!(
        !h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("dollars")),
        "the steered completion is discarded"
    );
    let turn = ended_turn(&h, "mira", &square).await;
    assert!(
        store(&h)
            .turn_events(&turn.id)
            .expect("trace")
            .iter()
            .any(|e| e.kind.as_str() == "steer" && e.content.as_deref() == Some("use euros")),
        "the steer is in the trace"
    );
    // The completion the steer aborted reported nothing: the steer's event
    // carries an estimate of what it had streamed (§8.2).
    assert!(
        store(&h)
            .turn_events(&turn.id)
            .expect("trace")
            .iter()
            .filter(|e| e.kind.as_str() == "steer")
            .any(|e| e.detail.as_deref().is_some_and(
                |d| d.contains("\"aborted_completion\"") && d.contains("\"estimated\":true")
            )),
        "the steer's event carries the aborted completion's estimate"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_kill_frees_the_lane_at_once_while_a_tool_runs_on_to_its_end() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__slow", json!({"ms": 6000}))]),
            reply("Bo's answer, while the slow tool still ran."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira the slow job").await;
    for _ in 0..200 {
        if !fixture_toolset::asked(&record).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(fixture_toolset::asked(&record).len(), 1, "the tool runs");
    let queued = h.say("bo", &square, "@mira a quick one").await;
    h.wait_reaction(&queued.id, "mira", "eyes").await;
    h.command("ana", &square, "/collegium kill").await;
    // The kill does not wait for the tool: the queue drains while it runs.
    h.wait_post(&square, "mira", "Bo's answer, while the slow tool", since)
        .await;
    let store = store(&h);
    let killed = store.turns_of("mira", &square).expect("turns")[0].clone();
    assert_eq!(killed.exit_kind.as_deref(), Some("killed"));
    let slow = store
        .worker_calls_of(&killed.id)
        .expect("calls")
        .pop()
        .expect("the slow call was dispatched");
    assert!(slow.ended_at.is_none(), "the tool was still running");
    // The plugin was told the killed turn ended (§3.4: what a worker holds
    // for a turn is released at every end, a kill included).
    assert!(
        fixture_toolset::ended(&record).contains(&killed.id),
        "{:?}",
        fixture_toolset::ended(&record)
    );
    let status = e2e::scenario::status_post(&h, &square).await;
    h.wait_edit(&status.id, "still running when @ana killed the turn")
        .await;
    // It runs on to its end, and its outcome is still recorded (§7.5).
    let mut finished = None;
    for _ in 0..400 {
        let call = store
            .worker_call(&slow.call.call_id)
            .expect("query")
            .expect("row");
        if call.ended_at.is_some() {
            finished = Some(call);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    let finished = finished.expect("the slow tool finished after the kill");
    assert_eq!(finished.outcome.as_deref(), Some("success"));
}

/// A private channel ana made and added @mira to; its id.
#[tokio::test(flavor = "multi_thread")]
async fn s8_4_approvals_lists_only_what_waits_in_the_invokers_channels() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    let secret = e2e::scenario::private_channel_with_mira(&h, "ana", "secret").await;
    let mut asking = calls(&[(
        "ask__human",
        json!({"question": "Which venue\nfor the offsite?", "answers": []}),
    )]);
    asking.text = Some("One fact first.".into());
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__write", json!({"path": "a.txt", "content": "x"}))]),
            asking,
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &secret, "@mira write it").await;
    let approval = h.wait_post(&secret, "mira", "Approval needed", since).await;
    h.decision_for_prompt(&approval.id).await;
    let dm = h.dm("ana", "theo").await;
    h.say("ana", &dm, "book the offsite").await;
    let question = h.wait_post(&dm, "theo", "❓ **Question**", since).await;
    h.decision_for_prompt(&question.id).await;

    // Bo is in neither the private channel nor the direct message.
    h.command("bo", &square, "/collegium approvals").await;
    h.wait_ephemeral(
        "bo",
        "No approval or question is waiting on a person in the channels you are in.",
    )
    .await;

    h.command("ana", &square, "/collegium approvals").await;
    let listed = h
        .wait_ephemeral("ana", "2 waiting on a person in the channels you are in")
        .await;
    let text = listed["message"].as_str().unwrap_or_default().to_string();
    assert!(
        text.contains("Mira in ~secret: approval of fixture::write, waiting under a minute")
            && text.contains(&format!("prompt post {}", approval.id)),
        "{text}"
    );
    assert!(
        text.contains("Theo the Operator in a direct message")
            && text.contains("a question, “Which venue for the offsite?”, waiting under a minute")
            && text.contains(&format!("prompt post {}", question.id)),
        "{text}"
    );
    assert!(
        text.find("Mira in").unwrap_or(usize::MAX) < text.find("Theo the Operator in").unwrap_or(0),
        "oldest first: {text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_a_steer_to_a_turn_parked_on_a_person_is_told_what_the_turn_waits_on() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    e2e::scenario::parked_on_a_write(&h, &square).await;
    h.command("ana", &square, "/collegium steer mira write b.txt instead")
        .await;
    // Parked on a person, the turn makes no completion a steer could
    // precede: the invoker reads what it waits on, and how to steer it
    // (§7.5, §5.4).
    let told = h
        .wait_ephemeral("ana", "waiting on a decision on its approval prompt")
        .await;
    assert!(told.to_string().contains("Deny with a reason"), "{told}");
    assert!(fixture_toolset::asked(&record).is_empty(), "nothing ran");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_5_a_steer_names_only_an_agent_of_this_channel() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &["research"]).await;
    h.join("mira", "research").await;
    let research = h.channel("research").await.id;
    h.model.sim.script(
        "demo-model",
        vec![
            Scripted {
                text: Some("Without theo.".into()),
                hold: Some("first".into()),
                ..Default::default()
            },
            reply("With theo's figures."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &research, "@mira what are the figures?").await;
    completions_reach(&h, 1).await;
    // Theo is an agent, but not of this channel: "theo" is the steer's
    // first word, not its addressee, and the steer reaches the one agent
    // running here (§7.5).
    h.command(
        "ana",
        &research,
        "/collegium steer theo has the March figures",
    )
    .await;
    h.wait_ephemeral("ana", "Steering Mira.").await;
    h.wait_post(&research, "mira", "With theo's figures.", since)
        .await;
    h.model.sim.release("first");
    let requests = e2e::scenario::turn_requests(&h);
    let last = requests.last().expect("completions");
    assert!(
        last["messages"]
            .to_string()
            .contains("[@ana steers this turn] theo has the March figures"),
        "{last}"
    );
}

/// A process holding as many connections to `port` as its descriptors
/// allow, from 127.0.0.2, each a request whose headers never finish: a
/// connection flood and a slow-request flood at once. Killed when dropped.
struct Flood(std::process::Child);

impl Flood {
    fn start(port: u16) -> (Self, usize) {
        let script = format!(
            r#"
import socket, sys, time
held = []
while True:
    try:
        s = socket.socket()
        s.bind(("127.0.0.2", 0))
        s.connect(("127.0.0.1", {port}))
        s.send(b"POST /mattermost/command HTTP/1.1\r\nHost: x\r\n")
        held.append(s)
    except OSError:
        break
print(len(held), flush=True)
time.sleep(600)
"#
        );
        let mut child = std::process::Command::new("python3")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3 runs the flood");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().expect("stdout")),
            &mut line,
        )
        .expect("the flood's count");
        (Self(child), line.trim().parse().expect("a count"))
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_a_flood_on_the_callback_port_starves_no_one() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__write", json!({"path": "a.txt", "content": "x"}))]),
            reply("Still here."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write it").await;
    h.wait_post(&square, "mira", "Approval needed", since).await;
    let port = h.loaded().config.callbacks.bind.port();
    // As many connections as a process of this host may hold: without a
    // cap they would take every descriptor the daemon has.
    let (_flood, held) = Flood::start(port);
    assert!(held > 1000, "the flood held {held} connections");
    // Another turn reaches its model and posts; a person's stop is
    // answered and carried out.
    h.say("ana", &dm, "are you there?").await;
    h.wait_post(&dm, "mira", "Still here.", since).await;
    h.command("ana", &square, "/collegium stop").await;
    h.wait_post(
        &square,
        "collegium",
        "Stopped Mira here at @ana's command",
        since,
    )
    .await;
}

/// §7.5: "any human in the channel" may stop, kill or steer: a bot's token
/// runs `/collegium` too, and is refused, the parked turn left as it was.
#[tokio::test(flavor = "multi_thread")]
async fn s7_5_a_bot_may_not_stop_kill_or_steer() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.join("theo", "town-square").await;
    e2e::scenario::parked_on_a_write(&h, &square).await;
    for (command, refusal) in [
        (
            "/collegium stop",
            "Only a person in this channel may stop the turns running here",
        ),
        (
            "/collegium kill",
            "Only a person in this channel may kill the turns running here",
        ),
        (
            "/collegium steer mira write b.txt instead",
            "Only a person in this channel may steer a turn running here",
        ),
    ] {
        h.command("theo", &square, command).await;
        h.wait_ephemeral("theo", refusal).await;
    }
    h.command("ana", &square, "/collegium approvals").await;
    h.wait_ephemeral("ana", "1 waiting on a person").await;
    assert!(
        store(&h)
            .last_turn("mira", &square)
            .expect("query")
            .is_some_and(|t| t.ended_at.is_none()),
        "the turn still waits on its approval"
    );
    assert!(fixture_toolset::asked(&record).is_empty());
}
