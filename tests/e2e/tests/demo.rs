//! The README's first command (issue 7 §9, issue 14): `collegium-demo`
//! starts both simulators, provisions, runs the daemon and two demo agents,
//! and prints where a person signs in and what to say; a person who asks an
//! agent gets the scripted demo's answer, which says it is scripted; Ctrl-C
//! stops it cleanly. On request the scripted agents show what Collegium is
//! for: a write whose exact payload waits on a person's decision (§3.7),
//! approved here by a click in the real web client in Chromium; a question
//! whose answer comes back as the call's result (§3.7a); a reasoned denial
//! fed back to the model (§5.4); and, run as root, a command run as the
//! agent's own OS user (§6.1). CI runs as root; as anyone else the shell
//! path checks that the demo says why it is left out.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use collegium_control::chat::Rest;
use e2e::{binary, free_port};
use mattermost_wire::model::{NewPost, Post, PostList};
use model_sim::demo::{ANSWERS, ASK_PHRASE, COMMAND, NOTE, NOTE_PATH, RUN_PHRASE, WRITE_PHRASE};
use serde_json::{Value, json};

const PERSON: &str = "demo";
const PASSWORD: &str = "Demo-person-1234";

/// Run as root, every demo provisions the host for theo's shell, creating
/// one OS user for all of them: one demo at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// A running `collegium-demo`, stopped when dropped; the host is left as
/// it was found.
struct Demo {
    child: Child,
    url: String,
    dir: tempfile::TempDir,
    banner: String,
    logged: Arc<Mutex<Vec<String>>>,
    /// Whether theo's OS user was there before this demo made it.
    theo_existed: bool,
    _turn: tokio::sync::MutexGuard<'static, ()>,
}

impl Demo {
    async fn start() -> Self {
        let turn = ONE_AT_A_TIME.lock().await;
        let theo_existed = nix::unistd::User::from_name("cg-theo")
            .ok()
            .flatten()
            .is_some();
        let dir = tempfile::tempdir().expect("tempdir");
        let (mm, model, callback) = (free_port(), free_port(), free_port());
        let mut child = Command::new(binary("collegium-demo"))
            .args(["--mattermost", &format!("127.0.0.1:{mm}")])
            .args(["--model", &format!("127.0.0.1:{model}")])
            .args(["--callback-port", &callback.to_string()])
            .arg("--dir")
            .arg(dir.path())
            .env_remove("COLLEGIUM_DEMO_MODEL_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn collegium-demo");
        let logged = Arc::new(Mutex::new(Vec::new()));
        let (ready, listening) = std::sync::mpsc::channel();
        {
            let stderr = BufReader::new(child.stderr.take().expect("stderr"));
            let logged = logged.clone();
            std::thread::spawn(move || {
                for line in stderr.lines().map_while(Result::ok) {
                    if line.contains("agents are listening") {
                        let _ = ready.send(());
                    }
                    logged.lock().expect("log").push(line);
                }
            });
        }
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut banner = String::new();
        for line in stdout.by_ref() {
            let line = line.expect("line");
            banner.push_str(&line);
            banner.push('\n');
            if line.contains("Stop with Ctrl-C") {
                break;
            }
        }
        // Keep reading, so the demo never writes into a closed pipe.
        std::thread::spawn(move || stdout.for_each(drop));
        let mut demo = Self {
            child,
            url: format!("http://127.0.0.1:{mm}"),
            dir,
            banner,
            logged,
            theo_existed,
            _turn: turn,
        };
        if listening
            .recv_timeout(std::time::Duration::from_secs(60))
            .is_err()
        {
            let _ = demo.child.kill();
            let _ = demo.child.wait();
            panic!(
                "the agents never listened; the demo printed:\n{}\nand logged:\n{}",
                demo.banner,
                demo.logged.lock().expect("log").join("\n")
            );
        }
        demo
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }

    async fn person(&self) -> Rest {
        let (_, token) = Rest::new(&self.url)
            .expect("client")
            .login(PERSON, PASSWORD)
            .await
            .expect("the demo person signs in");
        Rest::new(&self.url).expect("client").with_token(&token)
    }

    /// Town Square's id.
    async fn square(&self) -> String {
        let person = self.person().await;
        let team = person
            .team_by_name("collegium")
            .await
            .expect("team")
            .expect("team");
        person
            .channel_by_name(&team.id, "town-square")
            .await
            .expect("lookup")
            .expect("town square")
            .id
    }

    /// Posts as the demo person through the REST API, as a client does.
    async fn say(&self, channel: &str, message: &str) -> Post {
        self.person()
            .await
            .create_post(&NewPost {
                channel_id: channel.into(),
                message: message.into(),
                ..NewPost::default()
            })
            .await
            .expect("post")
    }

    async fn sim(&self, path: &str, body: Value) -> Value {
        let response = reqwest::Client::new()
            .post(format!("{}/_sim/{path}", self.url))
            .json(&body)
            .send()
            .await
            .expect("simulator");
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        assert!(
            status.is_success(),
            "{path}: {status} {value}\nthe demo logged:\n{}",
            self.logged.lock().expect("log").join("\n")
        );
        value
    }

    /// Waits for a post by `user` in the channel containing `contains`,
    /// made after `since`.
    async fn wait_post(&self, channel: &str, user: &str, contains: &str, since: i64) -> Post {
        let found = self
            .sim(
                "wait",
                json!({"kind": "post", "channel_id": channel, "user": user,
                       "contains": contains, "since": since, "timeout_ms": 30_000}),
            )
            .await;
        serde_json::from_value(found).expect("post")
    }

    async fn wait_edit(&self, post_id: &str, contains: &str) -> Post {
        let found = self
            .sim(
                "wait",
                json!({"kind": "edited", "post_id": post_id, "contains": contains, "timeout_ms": 30_000}),
            )
            .await;
        serde_json::from_value(found).expect("post")
    }

    /// Clicks a button on a post as the demo person.
    async fn click(&self, post_id: &str, action: &str) {
        self.sim(
            "click",
            json!({"as": PERSON, "post_id": post_id, "action_id": action}),
        )
        .await;
    }

    /// Ctrl-C, and the demo stops cleanly.
    fn stop(mut self) {
        Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill");
        let status = self.child.wait().expect("wait");
        assert!(
            status.success(),
            "Ctrl-C stops the demo cleanly: {status:?}\n{}",
            self.logged.lock().expect("log").join("\n")
        );
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // SIGINT, so the demo stops its shell worker too.
            let _ = Command::new("kill")
                .args(["-INT", &self.child.id().to_string()])
                .status();
            let _ = self.child.wait();
        }
        if is_root() && !self.theo_existed {
            // The demo keeps the user it made for a person to look at; a
            // test leaves the host as it found it.
            let _ = Command::new("userdel").arg("cg-theo").output();
        }
    }
}

/// Milliseconds since the epoch, now, less one.
fn since() -> i64 {
    e2e::people::now_ms() - 1
}

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_command_serves_two_agents_a_person_can_talk_to() {
    let demo = Demo::start().await;
    let printed = demo.banner.clone();
    assert!(printed.contains(&format!("Open {}", demo.url)), "{printed}");
    assert!(
        printed.contains("sign in as `demo` with the password `Demo-person-1234`"),
        "{printed}"
    );
    for phrase in [
        format!("`@mira {WRITE_PHRASE}`"),
        format!("`@mira {ASK_PHRASE}`"),
        format!("`@theo {RUN_PHRASE}`"),
    ] {
        assert!(
            printed.contains(&phrase),
            "the banner names {phrase}: {printed}"
        );
    }
    if is_root() {
        assert!(
            printed.contains(&format!("`{COMMAND}` run as theo's own OS user, cg-theo")),
            "{printed}"
        );
    } else {
        assert!(
            printed.contains("not in this run") && printed.contains("run the demo as root"),
            "{printed}"
        );
    }

    let square = demo.square().await;
    let mut answered = None;
    demo.say(&square, "@mira hello there").await;
    let person = demo.person().await;
    for _ in 0..100 {
        let list: PostList = person
            .get(&format!("channels/{square}/posts"))
            .await
            .expect("posts");
        answered = list
            .ordered()
            .find(|p| p.message.contains("Scripted demo"))
            .map(|p| p.message.clone());
        if answered.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let answered = answered.expect("mira answered");
    assert!(
        answered.contains("not a language model") && answered.contains(WRITE_PHRASE),
        "the reply says it is scripted and what to say: {answered}"
    );
    demo.stop();
}

/// The browser harness's directory, with playwright-core installed.
fn browser_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../mattermost-sim/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run tests/setup.sh"
    );
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_person_approves_the_demo_write_in_chromium_and_the_note_is_written() {
    let demo = Demo::start().await;
    let square = demo.square().await;
    let output = Path::new(env!("CARGO_MANIFEST_DIR")).join("../output/browser");
    std::fs::create_dir_all(&output).expect("output dir");
    let screenshot = output.join("demo-approve.png");
    let _ = std::fs::remove_file(&screenshot);
    let started = since();
    let run = tokio::process::Command::new("node")
        .current_dir(browser_dir())
        .arg("click-through.mjs")
        .args([
            "--url",
            &demo.url,
            "--username",
            PERSON,
            "--password",
            PASSWORD,
        ])
        .args(["--channel", "town-square"])
        .args(["--message", &format!("@mira {WRITE_PHRASE}")])
        .args(["--action", "approve"])
        .args(["--expect-text", "Approved, so the note is written"])
        .args(["--timeout", "30000"])
        .arg("--screenshot")
        .arg(&screenshot)
        .output()
        .await
        .expect("run node");
    assert!(
        run.status.success(),
        "the browser run failed:\n{}\n{}\nthe demo logged:\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
        demo.logged.lock().expect("log").join("\n")
    );

    // The prompt showed the exact payload and now says who decided.
    let prompt = demo
        .wait_post(&square, "mira", "`workspace::write`", started)
        .await;
    let decided = demo.wait_edit(&prompt.id, "Approved by @demo").await;
    assert!(
        decided
            .message
            .contains("A person read this exact text in the approval prompt")
            && decided.message.contains(NOTE_PATH),
        "the whole payload: {}",
        decided.message
    );
    let reply = demo
        .wait_post(&square, "mira", "Approved, so the note is written", started)
        .await;
    assert!(
        reply
            .message
            .contains(&format!("Wrote {} bytes to `{NOTE_PATH}`", NOTE.len())),
        "{}",
        reply.message
    );
    assert_eq!(
        std::fs::read_to_string(demo.dir().join("workspaces/mira").join(NOTE_PATH))
            .expect("the note is on disk"),
        NOTE
    );
    assert!(std::fs::metadata(&screenshot).expect("screenshot").len() > 1000);
    demo.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7a_ask_me_waits_on_the_persons_answer_and_the_reply_quotes_it() {
    let demo = Demo::start().await;
    let square = demo.square().await;
    let started = since();
    demo.say(&square, &format!("@mira {ASK_PHRASE}")).await;
    let question = demo
        .wait_post(&square, "mira", "❓ **Question**", started)
        .await;
    let offered: Vec<String> = question
        .attachments()
        .iter()
        .flat_map(|a| a.actions.iter().map(|b| b.name.clone()))
        .collect();
    assert_eq!(
        offered,
        [ANSWERS[0], ANSWERS[1], "Answer…"],
        "{}",
        question.message
    );
    demo.click(&question.id, "choice1").await;
    let reply = demo
        .wait_post(&square, "mira", "You answered", started)
        .await;
    assert!(
        reply
            .message
            .contains(&format!("You answered “{}”", ANSWERS[1])),
        "the answer came back as the call's result: {}",
        reply.message
    );
    demo.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_4_a_reasoned_denial_of_the_demo_write_is_quoted_and_nothing_is_written() {
    let demo = Demo::start().await;
    let square = demo.square().await;
    let started = since();
    demo.say(&square, &format!("@mira {WRITE_PHRASE}")).await;
    let prompt = demo
        .wait_post(&square, "mira", "Approval needed", started)
        .await;
    demo.click(&prompt.id, "reason").await;
    demo.sim(
        "wait",
        json!({"kind": "dialog", "user": PERSON, "timeout_ms": 30_000}),
    )
    .await;
    demo.sim(
        "dialog/submit",
        json!({"as": PERSON, "channel_id": square, "submission": {"reason": "not in the shared drive"}}),
    )
    .await;
    let reply = demo
        .wait_post(&square, "mira", "I did not go ahead", started)
        .await;
    assert!(
        reply
            .message
            .contains("@demo denied it, and said: “not in the shared drive”"),
        "{}",
        reply.message
    );
    assert!(!demo.dir().join("workspaces/mira").join(NOTE_PATH).exists());
    demo.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_run_a_command_runs_as_cg_theo_once_approved_when_the_demo_runs_as_root() {
    let demo = Demo::start().await;
    let square = demo.square().await;
    let started = since();
    demo.say(&square, &format!("@theo {RUN_PHRASE}")).await;
    if !is_root() {
        let reply = demo
            .wait_post(&square, "theo", "Scripted demo", started)
            .await;
        assert!(
            reply.message.contains("does not grant me `shell`"),
            "{}",
            reply.message
        );
        demo.stop();
        return;
    }
    let prompt = demo
        .wait_post(&square, "theo", "`shell::run`", started)
        .await;
    assert!(
        prompt.message.contains(COMMAND),
        "the command inline: {}",
        prompt.message
    );
    demo.click(&prompt.id, "approve").await;
    let reply = demo
        .wait_post(
            &square,
            "theo",
            "The command ran as my own OS user",
            started,
        )
        .await;
    let theo = nix::unistd::User::from_name("cg-theo")
        .expect("lookup")
        .expect("the demo made theo's OS user");
    let home = demo.dir().canonicalize().expect("dir").join("homes/theo");
    assert!(
        reply
            .message
            .contains(&format!("uid={}(cg-theo)", theo.uid.as_raw()))
            && reply.message.contains(&format!("\n{}\n", home.display())),
        "`{COMMAND}` ran as cg-theo in its home: {}",
        reply.message
    );
    demo.stop();
}
