//! A plugin with a user of its own, run by its own unit
//! (`collegium-plugin@NAME.service`) beside a daemon that is not root
//! (issue 22 item 1, §3.14, ARCHITECTURE §6): the daemon starts nothing as
//! another user; it connects to the socket the plugin serves, holds it to
//! that user, and serves its `Storage` on a listening socket that binds each
//! connection to its plugin by the peer's uid. Here the test plays systemd:
//! it starts the plugin as its user with the unit's arguments. CI runs as
//! root; as anyone else there are no users to make and this returns.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use e2e::accounts::{SystemUser, effective_uid};
use e2e::people::now_ms;
use e2e::scenario::{calls, plugin_records, reply, square_with, tool_results, turn_requests};
use e2e::{Harness, binary};
use nix::unistd::User;
use serde_json::{Value, json};

fn bookmarks(h: &Harness) -> Vec<(String, Value)> {
    plugin_records(h, "bookmark", "bookmarks")
}

/// `dir`, owned by `user` and `group`, with `mode`.
fn owned_dir(dir: &Path, user: &User, group: nix::unistd::Gid, mode: u32) {
    std::fs::create_dir_all(dir).expect("mkdir");
    nix::unistd::chown(dir, Some(user.uid), Some(group)).expect("chown");
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// The plugin's process, killed and reaped however the test ends: a process
/// left running would outlive the test and keep its user from being removed.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What collegium-plugin@bookmark.service starts: the plugin's `serve` as
/// its user, with the unit's arguments, waited on until it prints `ready`.
fn start_as_its_unit(h: &Harness, plugin: &User, daemon: &User) -> Running {
    let run = h.dir.path().join("run");
    let mut child = Command::new(h.dir.path().join("plugins/bookmark/serve"))
        .arg("--socket")
        .arg(run.join("bookmark/toolset.sock"))
        .arg("--audit")
        .arg(h.dir.path().join("audit/bookmark/bookmark.audit.jsonl"))
        .args(["--allow-uid", &daemon.uid.to_string()])
        .arg("--storage-socket")
        .arg(run.join("storage.sock"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .uid(plugin.uid.as_raw())
        .gid(plugin.gid.as_raw())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the plugin");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte).expect("read") == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    let child = Running(child);
    assert_eq!(String::from_utf8_lossy(&line), "ready");
    assert_eq!(effective_uid(child.0.id()), plugin.uid.as_raw());
    child
}

/// @mira lists the bookmarks holding "RUST", and the list's result.
async fn list_rust(h: &Harness, square: &str) -> String {
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("bookmark__list", json!({"contains": "RUST"}))]),
            reply("Listed."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", square, "@mira which Rust bookmarks?").await;
    h.wait_post(square, "mira", "Listed.", since).await;
    tool_results(&turn_requests(h).pop().expect("completions"))
        .pop()
        .expect("the list's result")
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_run_by_its_own_unit_is_connected_to_and_its_storage_bound_by_its_uid() {
    let h = Harness::start().await;
    e2e::require_root();
    h.limits("debounce_window_ms = 0");
    h.install_bookmark_plugin();
    h.grant_mira(&["workspace", "bookmark"]);
    let daemon_account = SystemUser::create("d");
    let plugin_account = SystemUser::create("p");
    let (daemon_user, plugin_user) = (daemon_account.user(), plugin_account.user());
    h.run_plugin_as("bookmark", &plugin_account.name);
    h.provision_for_daemon_user(&daemon_user).await;
    // The unit's RuntimeDirectory= (the plugin's, the daemon's group
    // passing) and LogsDirectory= (the plugin's alone).
    owned_dir(
        &h.dir.path().join("run/bookmark"),
        &plugin_user,
        daemon_user.gid,
        0o750,
    );
    owned_dir(
        &h.dir.path().join("audit/bookmark"),
        &plugin_user,
        plugin_user.gid,
        0o700,
    );
    let plugin = start_as_its_unit(&h, &plugin_user, &daemon_user);

    let mut command = Command::new(binary("collegium"));
    command
        .uid(daemon_user.uid.as_raw())
        .gid(daemon_user.gid.as_raw());
    let mut daemon = h.daemon_from(command);
    let seen = daemon.wait_for("agents are listening");
    let ready = seen
        .iter()
        .find(|v| v["message"] == "plugin ready")
        .unwrap_or_else(|| panic!("no plugin ready line in {seen:#?}"));
    assert_eq!(ready["plugin"], "bookmark");
    assert_eq!(ready["tools"], 3);
    assert_eq!(
        effective_uid(daemon.child.id()),
        daemon_user.uid.as_raw(),
        "the daemon is not root"
    );
    let square = square_with(&h, &["ana"]).await;

    // An approved save reaches the store through the listening socket,
    // bound to `bookmark` by the plugin's uid.
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "bookmark__save",
                json!({"url": "https://doc.rust-lang.org/book/", "title": "Rust book"}),
            )]),
            reply("Saved it."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira save the Rust book").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Saved it.", since).await;
    let saved = bookmarks(&h);
    assert_eq!(saved.len(), 1, "{saved:?}");
    let id = saved[0].0.clone();
    assert_eq!(saved[0].1["title"], "Rust book");

    // A connection from a uid that is no plugin's is closed unanswered,
    // and said in the log: root's, here.
    let mut stranger =
        std::os::unix::net::UnixStream::connect(h.dir.path().join("run/storage.sock"))
            .expect("the storage socket listens");
    stranger
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    let _ = stranger.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    let mut answer = Vec::new();
    let _ = stranger.read_to_end(&mut answer);
    assert!(answer.is_empty(), "{answer:?}");
    let refused = daemon.wait_for("plugin storage connection refused");
    let line = refused.last().expect("the refusal");
    assert_eq!(line["refusal"], "uid 0 is the user of no plugin", "{line}");

    // systemd restarts a plugin that died: the daemon hands the new process
    // its key at the next call and holds it to its boot description, and
    // the new process's storage connection is bound again by its uid.
    drop(plugin);
    let mut plugin = start_as_its_unit(&h, &plugin_user, &daemon_user);
    assert_eq!(
        list_rust(&h, &square).await,
        format!(
            "Bookmarks holding \"RUST\":\n- {id} · Rust book · https://doc.rust-lang.org/book/"
        )
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    assert!(
        plugin.0.try_wait().expect("status").is_none(),
        "a unit-run plugin is its unit's to stop, not the daemon's"
    );
}
