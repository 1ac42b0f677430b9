//! The README's first command (issue 7 §9): `collegium-demo` starts both
//! simulators, provisions, runs the daemon and two demo agents, and prints
//! where a person signs in; a person who asks an agent gets the scripted
//! demo's answer, which says it is scripted; Ctrl-C stops it cleanly.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use collegium_control::chat::Rest;
use e2e::{binary, free_port};
use mattermost_wire::model::{NewPost, PostList};

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_command_serves_two_agents_a_person_can_talk_to() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mm, model, callback) = (free_port(), free_port(), free_port());
    let mut demo = Command::new(binary("collegium-demo"))
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
    let mut stdout = BufReader::new(demo.stdout.take().expect("stdout")).lines();
    let mut printed = String::new();
    for line in stdout.by_ref() {
        let line = line.expect("line");
        printed.push_str(&line);
        printed.push('\n');
        if line.contains("Stop with Ctrl-C") {
            break;
        }
    }
    // Keep reading, so the demo never writes into a closed pipe.
    std::thread::spawn(move || stdout.for_each(drop));
    assert!(
        printed.contains(&format!("Open http://127.0.0.1:{mm}")),
        "{printed}"
    );
    assert!(
        printed.contains("sign in as `demo` with the password `Demo-person-1234`"),
        "{printed}"
    );
    let stderr = BufReader::new(demo.stderr.take().expect("stderr"));
    let (ready, listening) = std::sync::mpsc::channel();
    let logged = std::thread::spawn(move || {
        let mut logged = Vec::new();
        for line in stderr.lines().map_while(Result::ok) {
            if line.contains("agents are listening") {
                let _ = ready.send(());
            }
            logged.push(line);
        }
        logged
    });
    if listening
        .recv_timeout(std::time::Duration::from_secs(60))
        .is_err()
    {
        let _ = demo.kill();
        let logged = logged.join().unwrap_or_default();
        panic!("the agents never listened:\n{}", logged.join("\n"));
    }

    let url = format!("http://127.0.0.1:{mm}");
    let (_, token) = Rest::new(&url)
        .expect("client")
        .login("demo", "Demo-person-1234")
        .await
        .expect("the demo person signs in");
    let person = Rest::new(&url).expect("client").with_token(&token);
    let team = person
        .team_by_name("collegium")
        .await
        .expect("team")
        .expect("team");
    let square = person
        .channel_by_name(&team.id, "town-square")
        .await
        .expect("lookup")
        .expect("town square");
    person
        .create_post(&NewPost {
            channel_id: square.id.clone(),
            message: "@mira hello there".into(),
            ..NewPost::default()
        })
        .await
        .expect("post");
    let mut answered = None;
    for _ in 0..100 {
        let list: PostList = person
            .get(&format!("channels/{}/posts", square.id))
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
    assert!(answered.contains("not a language model") || answered.contains("Scripted demo"));

    Command::new("kill")
        .args(["-INT", &demo.id().to_string()])
        .status()
        .expect("kill");
    let status = demo.wait().expect("wait");
    assert!(
        status.success(),
        "Ctrl-C stops the demo cleanly: {status:?}"
    );
}
