//! Conformance: persistence and the program — `--state FILE` keeps what a
//! real server keeps in its database (users, sessions, tokens, teams,
//! channels, posts, settings) across a restart, and the `mattermost-sim`
//! binary serves on the address it is given (docs/mattermost-sim.md).

mod support;

use std::time::Duration;

use serde_json::json;
use support::{ADMIN_PASSWORD, Client, allow_integrations, bot, first_admin, id, login};
use tokio::io::AsyncBufReadExt;

async fn start_on(path: &std::path::Path) -> mattermost_sim::Running {
    mattermost_sim::start(
        "127.0.0.1:0".parse().expect("addr"),
        &mattermost_sim::Options {
            state_file: Some(path.to_path_buf()),
        },
    )
    .await
    .expect("start the simulator")
}

#[tokio::test]
async fn a_state_file_keeps_users_sessions_tokens_channels_posts_and_settings() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("state.json");

    let first = start_on(&path).await;
    allow_integrations(&first.url).await;
    let (admin, admin_user) = first_admin(&first.url).await;
    let (helper, helper_user) = bot(&admin, "helper").await;
    let team = admin
        .post(
            "teams",
            json!({"name": "acme", "display_name": "Acme", "type": "O"}),
        )
        .await
        .expect(201);
    let channel = admin
        .post(
            "channels",
            json!({"team_id": id(&team), "name": "general", "display_name": "General", "type": "O"}),
        )
        .await
        .expect(201);
    let post = admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "remember me"}),
        )
        .await
        .expect(201);
    admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableCommands": false}}),
        )
        .await
        .expect(200);
    let admin_token = admin.token.clone().expect("token");
    let helper_token = helper.token.clone().expect("token");
    drop(first);

    let second = start_on(&path).await;
    let anonymous = Client::anonymous(&second.url);
    // The session from before the restart is still good, as is a new login.
    let admin = anonymous.with_token(&admin_token);
    assert_eq!(
        admin.get("users/me").await.expect(200)["id"],
        admin_user["id"]
    );
    login(&second.url, "admin", ADMIN_PASSWORD).await;
    let helper = anonymous.with_token(&helper_token);
    let me = helper.get("users/me").await.expect(200);
    assert_eq!(me["id"], helper_user["user_id"]);
    assert_eq!(me["is_bot"], true);

    let found = admin.get("teams/name/acme").await.expect(200);
    assert_eq!(found["id"], team["id"]);
    let found = admin
        .get(&format!("teams/{}/channels/name/general", id(&team)))
        .await
        .expect(200);
    assert_eq!(found["id"], channel["id"]);
    let kept = admin.get(&format!("posts/{}", id(&post))).await.expect(200);
    assert_eq!(kept["message"], "remember me");
    assert_eq!(kept["create_at"], post["create_at"]);
    let config = admin.get("config").await.expect(200);
    assert_eq!(config["ServiceSettings"]["EnableCommands"], false);
    assert_eq!(config["ServiceSettings"]["EnableBotAccountCreation"], true);
    // The first account stays the only admin: the server is not empty.
    let next = anonymous
        .post(
            "users",
            json!({"username": "late", "email": "late@example.com", "password": ADMIN_PASSWORD}),
        )
        .await
        .expect(201);
    assert_eq!(next["roles"], "system_user");
}

#[tokio::test]
async fn a_missing_state_file_starts_an_empty_server() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("absent.json");
    let running = start_on(&path).await;
    let (_, admin) = first_admin(&running.url).await;
    assert!(
        admin["roles"]
            .as_str()
            .expect("roles")
            .contains("system_admin")
    );
    assert!(path.exists(), "the first change writes the file");
}

#[tokio::test]
async fn the_binary_announces_and_serves_the_address_it_listens_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mattermost-sim"))
        .args(["--listen", "127.0.0.1:0", "--state"])
        .arg(dir.path().join("state.json"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("run mattermost-sim");
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("the program announces itself")
        .expect("read")
        .expect("a line");
    let url = line
        .strip_prefix("mattermost-sim listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let ping = Client::anonymous(url).get("system/ping").await.expect(200);
    assert_eq!(ping["status"], "OK");
    child.kill().await.expect("stop it");
}
