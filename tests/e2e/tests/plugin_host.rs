//! The plugin host (§3.14, §6.1, §7.1, §9; issue 22 items 1–3): each boot
//! refusal with its message, found by `collegium config check`, which
//! starts each plugin as the daemon would, and by the daemon's own boot;
//! the ungranted warning; a plugin's environment and descriptors; a plugin
//! killed mid-call, restarted, and held to how it described itself at boot.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use e2e::people::now_ms;
use e2e::procs;
use e2e::scenario::{calls, ended_turn, reply, tool_results, turn_requests};
use e2e::{Harness, binary};
use serde_json::{Value, json};

/// `collegium config check` of the harness's configuration: whether it
/// passed, and what it printed.
fn config_check(h: &Harness) -> (bool, String) {
    let out = Command::new(binary("collegium"))
        .args(["config", "check"])
        .arg(&h.config)
        .output()
        .expect("collegium config check");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

/// Installs the fixture as the plugin `fixture`, its `serve` setting `env`
/// (`NAME=value` words) before it starts the fixture.
fn install_fixture_with(h: &Harness, env: &str, record: &Path) -> PathBuf {
    h.install_plugin(
        "fixture",
        &format!(
            "#!/bin/sh\n{env} exec '{}' --record '{}' \"$@\"\n",
            binary("collegium-fixture-toolset").display(),
            record.display()
        ),
    )
}

/// §3.14: each malformed description refuses, naming the plugin and the
/// tool or field, at `config check` as at boot. One fixture, its
/// description chosen by `FIXTURE_DESCRIBE`.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_each_malformed_description_is_refused_naming_the_plugin_and_the_tool() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.grant_mira(&["workspace", "fixture"]);
    let record = h.dir.path().join("asked.jsonl");
    let table = [
        (
            "protocol-range",
            "protocol range: it speaks versions 2 to 3, and this daemon speaks 1",
        ),
        ("no-gate", "tools.read: states no gate; declare a render"),
        (
            "budget-exempt",
            "tools.read: claims to be exempt from the action budget",
        ),
        ("core", "tools.read: claims to be a core tool"),
        ("duplicate", "tools.read: declared twice"),
        ("malformed-name", "the tool name `Read::All` is malformed"),
        (
            "settings-schema",
            "its settings schema is not a JSON Schema",
        ),
        (
            "silent",
            "it gave no `Describe` answer within 5 s of serving",
        ),
    ];
    for (variant, message) in table {
        install_fixture_with(&h, &format!("FIXTURE_DESCRIBE={variant}"), &record);
        let (passed, text) = config_check(&h);
        assert!(!passed, "{variant}: {text}");
        assert!(
            text.contains("plugin `fixture` is refused (§3.14):") && text.contains(message),
            "{variant}: {message:?} in {text}"
        );
    }
    // The daemon's own boot refuses the same way.
    install_fixture_with(&h, "FIXTURE_DESCRIBE=no-gate", &record);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("plugin `fixture` is refused (§3.14):")
            && stderr.contains("tools.read: states no gate"),
        "{stderr}"
    );
}

/// §3.14: the layout refuses before anything runs: a directory without its
/// executable, a directory taking a framework namespace, a malformed skill
/// the plugin ships, assigned or not.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_directory_laid_out_wrong_is_refused_naming_the_file() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.grant_mira(&["workspace", "fixture"]);
    let dir = h.dir.path().join("plugins").join("fixture");
    std::fs::create_dir_all(&dir).expect("plugin directory");
    let (passed, text) = config_check(&h);
    assert!(!passed, "{text}");
    assert!(
        text.contains(&format!("{} cannot be read", dir.join("serve").display()))
            && text.contains("holds its executable under the name `serve`"),
        "{text}"
    );

    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    let skill = dir.join("skills").join("broken");
    std::fs::create_dir_all(&skill).expect("skill");
    std::fs::write(skill.join("SKILL.md"), "no frontmatter\n").expect("SKILL.md");
    let (passed, text) = config_check(&h);
    assert!(!passed, "{text}");
    assert!(
        text.contains(&format!("{}:", skill.join("SKILL.md").display())),
        "{text}"
    );
    std::fs::remove_dir_all(dir.join("skills")).expect("rm skills");

    let memory = h.dir.path().join("plugins").join("memory");
    std::fs::create_dir_all(&memory).expect("memory");
    let (passed, text) = config_check(&h);
    assert!(!passed, "{text}");
    assert!(
        text.contains(&format!(
            "{}: `memory` is a framework namespace",
            memory.display()
        )),
        "{text}"
    );
}

/// §3.14: `config check` starts the plugin, and warns of each tool of it no
/// agent is granted without refusing.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_config_check_starts_each_plugin_and_warns_of_ungranted_tools() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    h.grant_mira(&["workspace", "fixture::read"]);
    let (passed, text) = config_check(&h);
    assert!(passed, "{text}");
    assert!(
        text.contains("plugins (1), each started and its agents' settings checked against its schema:")
            && text.contains(
                "  fixture: 10 tools · warning: no agent is granted fixture::lookup, fixture::write, fixture::confirm,"
            ),
        "{text}"
    );
    assert!(!text.contains("fixture::read,"), "{text}");
    // Settings that do not fit its schema are found by the check too.
    h.mira_settings("fixture", "greeting = 5");
    let (passed, text) = config_check(&h);
    assert!(!passed, "{text}");
    assert!(
        text.contains("@mira: agents[0].settings.fixture.greeting: the number 5"),
        "{text}"
    );
}

/// §6.1: a plugins root anyone can write — the daemon's user included,
/// whoever it is — refuses boot, naming it and the fix.
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_plugins_root_the_daemons_user_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    h.grant_mira(&["workspace", "fixture"]);
    let root = h.dir.path().join("plugins");
    std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    let uid = nix::unistd::geteuid().as_raw();
    assert!(
        stderr.contains("the plugins' code is writable by someone other than root (§6.1)")
            && stderr.contains(&format!("{} (uid {uid}, gid", root.display()))
            && stderr.contains(&format!("is writable by the daemon's user (uid {uid})"))
            && stderr.contains(&format!("chmod go-w {}", root.display())),
        "{stderr}"
    );
}

/// §3.14: from inside a plugin, its environment holds nothing of the
/// daemon's, and its descriptors are its stdio alone.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugins_environment_and_descriptors_hold_no_daemon_secret() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let process = h.dir.path().join("process.json");
    install_fixture_with(
        &h,
        &format!("FIXTURE_RECORD_PROCESS='{}'", process.display()),
        &h.dir.path().join("asked.jsonl"),
    );
    h.grant_mira(&["workspace", "fixture"]);
    let mut launcher = Command::new(binary("collegium"));
    launcher.env("COLLEGIUM_TEST_SECRET", "hunter2");
    let mut daemon = h.daemon_from(launcher);
    daemon.wait_for("collegium is running");
    let seen: Value =
        serde_json::from_str(&std::fs::read_to_string(&process).expect("recorded")).expect("json");
    let env = seen["env"].as_object().expect("env");
    // What the daemon sets, what a shell running `serve` adds of its own,
    // and what `serve` itself set.
    let allowed = [
        "PATH",
        "LANG",
        "HOME",
        "JOURNAL_STREAM",
        "RUST_LOG",
        "TZ",
        "PWD",
        "OLDPWD",
        "SHLVL",
        "_",
        "FIXTURE_RECORD_PROCESS",
        // The plugin wire convention: where its Storage connection is.
        "COLLEGIUM_STORAGE_FD",
    ];
    for (name, value) in env {
        assert!(allowed.contains(&name.as_str()), "{name}={value}");
        assert!(!value.to_string().contains("hunter2"), "{name}={value}");
    }
    assert_eq!(env["PATH"], "/usr/local/bin:/usr/bin:/bin");
    assert_eq!(env["COLLEGIUM_STORAGE_FD"], "3");
    let fds = seen["fds"].as_object().expect("fds");
    assert!(
        fds.get("3")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("socket:")),
        "the Storage connection at fd 3: {fds:?}"
    );
    for (fd, target) in fds {
        let target = target.as_str().unwrap_or_default();
        let listing = target.starts_with("/proc/") && target.ends_with("/fd");
        // fd 3 is the plugin's Storage socket where the daemon hands one
        // (the plugin wire convention); nothing else is inherited.
        let storage = fd == "3" && target.starts_with("socket:");
        assert!(
            ["0", "1", "2"].contains(&fd.as_str()) || listing || storage,
            "fd {fd} -> {target}: {fds:?}"
        );
    }
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}

/// The fixture plugin's process under `daemon`; waits for one whose pid is
/// not `not`.
fn plugin_pid(daemon: &e2e::Daemon, not: Option<u32>) -> u32 {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let found = procs::children_named(daemon.child.id(), "collegium-fixture-toolset");
        if let Some(p) = found.iter().find(|p| Some(p.pid) != not) {
            return p.pid;
        }
        assert!(
            Instant::now() < deadline,
            "no fixture plugin other than {not:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn kill9(pid: u32) {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid")),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("SIGKILL");
}

/// §7.1, §3.14: a plugin killed mid-call is a tool that threw — the turn
/// ends as a semantic error — and the next call finds it restarted.
#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_plugin_killed_mid_call_ends_the_turn_and_the_next_call_finds_it_restarted() {
    let (h, daemon, record) = e2e::scenario::with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__hang_write", json!({}))]),
            calls(&[("fixture__read", json!({"key": "k"}))]),
            reply("Read it again."),
        ],
    );
    let before = plugin_pid(&daemon, None);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira go").await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while fixture_toolset::asked(&record).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the call never reached the plugin"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    kill9(before);
    let said = h
        .wait_post(&square, "mira", "fixture::hang_write failed", since)
        .await;
    assert!(
        said.message
            .contains("the plugin's process ended during the call"),
        "{}",
        said.message
    );
    let turn = ended_turn(&h, "mira", &square).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("tool_failed"));

    let after = plugin_pid(&daemon, Some(before));
    assert_ne!(after, before);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira try again").await;
    h.wait_post(&square, "mira", "Read it again.", since).await;
    let read = turn_requests(&h)
        .last()
        .map(tool_results)
        .unwrap_or_default();
    assert!(
        read.iter().any(|r| r.contains("the value of k")),
        "the restarted plugin answered: {read:?}"
    );
}

/// §9: a plugin restarted after a crash that describes itself otherwise
/// than at boot answers as unavailable until the daemon restarts; a gated
/// tool of it is refused before anyone is asked to approve it.
#[tokio::test(flavor = "multi_thread")]
async fn s9_a_restarted_plugin_describing_itself_otherwise_answers_as_unavailable() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    let marker = h.dir.path().join("started-once");
    let record = h.dir.path().join("asked.jsonl");
    h.install_plugin(
        "fixture",
        &format!(
            "#!/bin/sh\nif [ -e '{marker}' ]; then export FIXTURE_DESCRIBE=otherwise; fi\ntouch '{marker}'\nexec '{bin}' --record '{record}' \"$@\"\n",
            marker = marker.display(),
            bin = binary("collegium-fixture-toolset").display(),
            record = record.display()
        ),
    );
    h.grant_mira(&["workspace", "fixture"]);
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let before = plugin_pid(&daemon, None);
    kill9(before);
    plugin_pid(&daemon, Some(before));
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("fixture__read", json!({"key": "k"}))]),
            calls(&[("fixture__write", json!({"path": "a.txt", "content": "x"}))]),
            reply("It is unavailable."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira read k").await;
    h.wait_post(&square, "mira", "It is unavailable.", since)
        .await;
    let requests = turn_requests(&h);
    for request in &requests[requests.len() - 2..] {
        let results = tool_results(request);
        assert!(
            results.iter().any(|r| r.contains(
                "the plugin `fixture` is unavailable until the daemon restarts: it was restarted after its process ended and describes itself differently from boot (tools.read)"
            )),
            "{results:?}"
        );
    }
    assert!(
        fixture_toolset::asked(&record).is_empty(),
        "no call reached the plugin"
    );
    assert!(
        !h.posts(&square).await.iter().any(|p| p
            .message
            .starts_with("🔐 **Approval needed** for `fixture::write`")),
        "no approval prompt was posted"
    );
}

/// §3.14: each call carries the channel's handle and the unit its turn
/// serves as assignee: the one whose assignment post started the turn,
/// none for a turn a person started.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_call_carries_the_unit_its_turn_serves_and_the_channel() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(&["workspace", "tasks", "fixture"]);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "grants = [\"ask\"]",
        "grants = [\"ask\", \"tasks\", \"fixture\"]",
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    let assign = json!({
        "assignee": "theo",
        "outcome": "A one-paragraph summary of the March invoice",
        "criteria": "Names the amount and the due date",
        "context": "The invoice is in the shared drive."
    });
    h.model.sim.script(
        "demo-model",
        vec![
            // Mira's turn, started by Ana: no unit.
            calls(&[("fixture__read", json!({"key": "mira"}))]),
            calls(&[("tasks__assign", assign)]),
            reply("I handed the summary to Theo."),
            // Theo's turn, started by the assignment post: U-1.
            calls(&[("fixture__read", json!({"key": "theo"}))]),
            calls(&[("tasks__report", json!({"unit": "U-1", "state": "review", "report": "Amount 1,200 EUR, due 31 March."}))]),
            reply("Reported."),
            // Mira's turn, started by the report: she created U-1, and
            // serves no unit as assignee.
            calls(&[("tasks__read", json!({"unit": "U-1"}))]),
            calls(&[("tasks__close", json!({"unit": "U-1", "state": "done", "verdict": "Delivered."}))]),
            reply("The summary is in."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira get the March invoice summarised")
        .await;
    h.wait_post(&square, "mira", "The summary is in.", since)
        .await;
    let asked = fixture_toolset::asked(&record);
    assert_eq!(asked.len(), 2, "{asked:#?}");
    assert_eq!(asked[0]["arguments"]["key"], "mira");
    assert_eq!(asked[0]["unit"], "", "a turn a person started serves none");
    assert_eq!(asked[0]["channel"], "town-square");
    assert!(
        asked[0]["held_tools"]
            .as_array()
            .is_some_and(|held| held.iter().any(|t| t == "tasks::assign")),
        "{asked:#?}"
    );
    assert_eq!(asked[1]["arguments"]["key"], "theo");
    assert_eq!(asked[1]["unit"], "U-1", "the assignment post started it");
    assert_eq!(asked[1]["channel"], "town-square");
}
