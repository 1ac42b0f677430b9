//! What turn scenarios share: a running deployment, scripted model answers,
//! the requests that reached the model, and the store as the daemon left it.

use std::time::Duration;

use collegium_control::store::Store;
use model_sim::script::{Scripted, ScriptedCall};
use serde_json::{Value, json};

use crate::{Daemon, Harness};

/// A provisioned deployment with its daemon listening, under `limits`
/// (`debounce_window_ms = 0` for scenarios that do not test the window).
pub async fn running(limits: &str) -> (Harness, Daemon) {
    let h = Harness::start().await;
    h.limits(limits);
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    (h, daemon)
}

/// A running deployment whose @mira holds the fixture toolset as a plugin
/// (§3.14), under `limits`; the path where the fixture records what it was
/// asked.
pub async fn with_fixture(limits: &str) -> (Harness, Daemon, std::path::PathBuf) {
    with_fixture_granting(limits, &[]).await
}

/// As `with_fixture`, with these toolsets granted to mira besides.
pub async fn with_fixture_granting(
    limits: &str,
    more: &[&str],
) -> (Harness, Daemon, std::path::PathBuf) {
    with_fixture_from(
        limits,
        more,
        std::process::Command::new(crate::binary("collegium")),
    )
    .await
}

/// As `with_fixture_granting`, the daemon started by `launcher` (such as
/// one carrying a test hook's environment).
pub async fn with_fixture_from(
    limits: &str,
    more: &[&str],
    launcher: std::process::Command,
) -> (Harness, Daemon, std::path::PathBuf) {
    let h = Harness::start().await;
    h.limits(limits);
    h.provision().await.expect("provisioned");
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    let mut grants = vec!["workspace", "fixture"];
    grants.extend_from_slice(more);
    h.grant_mira(&grants);
    let mut daemon = h.daemon_from(launcher);
    daemon.wait_for("agents are listening");
    (h, daemon, record)
}

/// A running deployment where Mira (with the workspace) and Theo both hold
/// the tasks toolset (§3.15), under `limits`; `mira_tasks` are Mira's own
/// tasks settings, where a scenario declares them. Ana is in
/// ~town-square, whose id comes last.
pub async fn with_tasks(limits: &str, mira_tasks: Option<&str>) -> (Harness, Daemon, String) {
    with_tasks_from(
        limits,
        mira_tasks,
        std::process::Command::new(crate::binary("collegium")),
    )
    .await
}

/// As `with_tasks`, the daemon started by `launcher` (such as one carrying
/// a test hook's environment).
pub async fn with_tasks_from(
    limits: &str,
    mira_tasks: Option<&str>,
    launcher: std::process::Command,
) -> (Harness, Daemon, String) {
    let h = Harness::start().await;
    h.limits(limits);
    h.grant_mira(&["workspace", "tasks"]);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen("grants = [\"ask\"]", "grants = [\"ask\", \"tasks\"]", 1);
    std::fs::write(&h.config, text).expect("write config");
    if let Some(lines) = mira_tasks {
        h.mira_settings("tasks", lines);
    }
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon_from(launcher);
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    (h, daemon, square)
}

/// People in ~town-square, each created and joined to it; its id.
pub async fn square_with(h: &Harness, people: &[&str]) -> String {
    for person in people {
        h.person(person, &["town-square"]).await;
    }
    h.channel("town-square").await.id
}

/// The channel's (first) status post (§8.1), as it reads now.
pub async fn status_post(h: &Harness, channel: &str) -> mattermost_wire::model::Post {
    h.posts(channel)
        .await
        .into_iter()
        .find(|p| p.props.get("collegium_role") == Some(&serde_json::json!("status")))
        .expect("a status post")
}

/// The channel's status post (§8.1), as its closing line leaves it.
pub async fn closed_status_post(h: &Harness, channel: &str) -> String {
    let status = status_post(h, channel).await;
    h.wait_edit(&status.id, "Done in").await.message
}

/// Posts `body` to the daemon's callback server at `route` as Mattermost
/// would (§6.4): the status and the JSON answer.
pub async fn callback(h: &Harness, route: &str, body: &Value) -> (u16, Value) {
    let url = format!("{}{route}", h.loaded().config.callbacks.public_url);
    let response = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("the callback server answers");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// A scripted reply with no call.
pub fn reply(text: &str) -> Scripted {
    Scripted {
        text: Some(text.into()),
        ..Default::default()
    }
}

/// A scripted completion making these calls, in order.
pub fn calls(list: &[(&str, Value)]) -> Scripted {
    Scripted {
        tool_calls: list
            .iter()
            .map(|(name, arguments)| ScriptedCall {
                name: (*name).into(),
                arguments: arguments.clone(),
                raw_arguments: None,
            })
            .collect(),
        ..Default::default()
    }
}

/// A scripted call whose argument bytes are `raw` exactly.
pub fn raw_call(name: &str, raw: &str) -> Scripted {
    Scripted {
        tool_calls: vec![ScriptedCall {
            name: name.into(),
            arguments: Value::Null,
            raw_arguments: Some(raw.into()),
        }],
        ..Default::default()
    }
}

/// The store, opened beside the running daemon (WAL lets both read).
pub fn store(h: &Harness) -> Store {
    Store::open(&h.state_dir().join("collegium.db")).expect("store")
}

/// The requests that reached the model for turns, the boot probe aside.
pub fn turn_requests(h: &Harness) -> Vec<Value> {
    h.model
        .sim
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["messages"].as_array().is_some_and(|m| m.len() > 2))
        .collect()
}

/// Waits until `n` turn completions have reached the model.
pub async fn completions_reach(h: &Harness, n: usize) {
    for _ in 0..200 {
        if turn_requests(h).len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{n} completions never reached the model");
}

/// The index of the framework's message in a request's messages.
pub fn framework_index(request: &Value) -> usize {
    request["messages"]
        .as_array()
        .and_then(|m| {
            m.iter().position(|m| {
                m["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("[Framework message."))
            })
        })
        .expect("a framework message")
}

/// The framework's message of a request.
pub fn framework_message(request: &Value) -> String {
    request["messages"][framework_index(request)]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Every message after the framework's, as text: the turn's own.
pub fn after_framework(request: &Value) -> Vec<String> {
    let messages = request["messages"].as_array().cloned().unwrap_or_default();
    messages[framework_index(request) + 1..]
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The tool results a request carried, in order.
pub fn tool_results(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The agent's last turn in a channel, once it has ended.
pub async fn ended_turn(
    h: &Harness,
    agent: &str,
    channel: &str,
) -> collegium_control::store::TurnRecord {
    for _ in 0..200 {
        if let Some(turn) = store(h).last_turn(agent, channel).expect("query")
            && turn.ended_at.is_some()
        {
            return turn;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the turn never ended");
}

/// A private channel `owner` makes, with mira added: a channel only its
/// members can read (§3.7, §8.4).
pub async fn private_channel_with_mira(h: &Harness, owner: &str, name: &str) -> String {
    let session = h.session(owner).await;
    let team = h.team().await;
    let channel: mattermost_wire::model::Channel = session
        .post(
            "channels",
            &json!({"team_id": team.id, "name": name, "display_name": "Secret", "type": "P"}),
        )
        .await
        .expect("a private channel");
    let mira = h.user("mira").await;
    let _: serde_json::Value = session
        .post(
            &format!("channels/{}/members", channel.id),
            &json!({"user_id": mira.id}),
        )
        .await
        .expect("mira added");
    channel.id
}

/// A plugin's records in one of its collections, as the store holds them:
/// each id and its data.
pub fn plugin_records(h: &Harness, namespace: &str, collection: &str) -> Vec<(String, Value)> {
    store(h)
        .query_plugin_records(namespace, collection, &[], None)
        .expect("query")
        .into_iter()
        .map(|r| (r.id, serde_json::from_str(&r.data).expect("json")))
        .collect()
}

/// Row count and a checksum of every table of the store but `except`, read
/// by a read-only connection as an operator's query would: "unchanged" is
/// a claim about every row.
pub fn table_digests(
    h: &Harness,
    except: &str,
) -> std::collections::BTreeMap<String, (usize, String)> {
    use sha2::Digest;
    let conn = rusqlite::Connection::open_with_flags(
        h.state_dir().join("collegium.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("read-only connection");
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("tables")
        .collect::<Result<_, _>>()
        .expect("names");
    let mut out = std::collections::BTreeMap::new();
    for name in names.into_iter().filter(|n| n != except) {
        let mut statement = conn
            .prepare(&format!("SELECT * FROM \"{name}\""))
            .expect("select");
        let columns = statement.column_count();
        let mut rows: Vec<String> = statement
            .query_map([], |row| {
                (0..columns)
                    .map(|i| {
                        row.get::<_, rusqlite::types::Value>(i)
                            .map(|v| format!("{v:?}"))
                    })
                    .collect::<Result<Vec<_>, _>>()
                    .map(|values| values.join("\u{1f}"))
            })
            .expect("rows")
            .collect::<Result<_, _>>()
            .expect("values");
        rows.sort();
        let digest = sha2::Sha256::digest(rows.join("\u{1e}").as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        out.insert(name, (rows.len(), hex));
    }
    out
}

/// Ana asks @mira, in `channel`, to write a file with the fixture's gated
/// `write`, and the turn parks on its approval (§3.7): the prompt, and the
/// time just before Ana asked.
pub async fn parked_on_a_write(h: &Harness, channel: &str) -> (mattermost_wire::model::Post, i64) {
    h.model.sim.script(
        "demo-model",
        vec![calls(&[(
            "fixture__write",
            json!({"path": "a.txt", "content": "x"}),
        )])],
    );
    let since = crate::people::now_ms() - 1;
    h.say("ana", channel, "@mira write it").await;
    (
        h.wait_post(channel, "mira", "Approval needed", since).await,
        since,
    )
}
