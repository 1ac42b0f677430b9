//! `shell::run` end to end (A2, §3.4, §6.1): the shell worker started as
//! root beside the daemon, the host provisioned, and an agent's approved
//! command run as its own OS user, reading by its path a file the daemon
//! wrote into its workspace, and unable to write there. CI runs as root;
//! as anyone else the worker refuses to start, and that is what is checked.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with, tool_results, turn_requests};
use serde_json::json;

fn start_worker(h: &Harness) -> Result<e2e::shell_worker::ShellWorker, String> {
    e2e::shell_worker::start(&h.config, 1, &[])
}

/// The harness's deployment with @mira holding the shell, its home and
/// workspace under a directory agents may pass through.
fn shell_deployment(h: &Harness, name: &str) -> std::path::PathBuf {
    let roots =
        std::env::temp_dir().join(format!("collegium-shell-e2e-{}-{name}", std::process::id()));
    h.agent_roots_at(&roots);
    h.grant_mira(&["workspace", "shell"]);
    roots
}

#[tokio::test(flavor = "multi_thread")]
async fn a2_an_approved_command_runs_as_the_agent_and_reads_what_the_daemon_wrote() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "runs");
    if !nix::unistd::geteuid().is_root() {
        let refused = start_worker(&h).err().expect("refused");
        assert!(refused.contains("runs as root"), "{refused}");
        return;
    }
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let _worker = start_worker(&h).expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    let workspace = roots.join("workspaces/mira");
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "workspace__write",
                json!({"path": "notes.txt", "content": "from the daemon\n"}),
            )]),
            calls(&[(
                "shell__run",
                json!({"command": format!(
                    "id -un; cat {0}/notes.txt; echo x > {0}/mine 2>/dev/null || echo read-only",
                    workspace.display()
                )}),
            )]),
            calls(&[(
                "shell__run",
                json!({"command": "head -c 20000 /dev/zero | tr '\\0' y"}),
            )]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira note it and check").await;
    let write = h.wait_post(&square, "mira", "Approval needed", since).await;
    h.click("ana", &write.id, "approve").await;
    let run = h.wait_post(&square, "mira", "`shell::run`", since).await;
    assert!(run.message.contains("id -un"), "{}", run.message);
    h.click("ana", &run.id, "approve").await;
    h.wait_edit(&run.id, "Approved by @ana").await;
    let flood = h.wait_post(&square, "mira", "head -c 20000", since).await;
    h.click("ana", &flood.id, "approve").await;
    h.wait_post(&square, "mira", "Done.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[1].starts_with(
            "exit status 0\n[stdout]\ncg-mira\nfrom the daemon\nread-only\n[stderr]\n"
        ) && results[1].ends_with("/mine: Permission denied\n"),
        "the command ran as mira's user, read the daemon's file, could not write: {}",
        results[1]
    );
    assert!(!workspace.join("mine").exists());
    // The preamble names the home and what the worker found there (§3.4).
    let system = turn_requests(&h)[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.contains(&format!(
            "shell::run runs in your home directory, {}",
            roots.join("homes/mira").display()
        )),
        "{system}"
    );
    assert!(
        system.contains("Commands found for you on this host: git, python3"),
        "{system}"
    );
    // Output past the shown prefix is kept whole in the workspace (§3.4).
    let kept = results[2]
        .split('`')
        .find(|part| part.starts_with("shell-output/"))
        .unwrap_or_else(|| panic!("the result names the kept output: {}", results[2]));
    assert!(
        results[2].contains("[The whole stdout (20000 bytes) is in your workspace at"),
        "{}",
        results[2]
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join(kept)).expect("kept"),
        "y".repeat(20_000)
    );
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_the_shell_settings_bound_what_a_command_shows_and_how_long_it_runs() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "settings");
    e2e::require_root();
    // The deployment's shell settings (§3.4): a 5-byte prefix and a 2 s
    // deadline, far under the 114 s the daemon's call deadline leaves.
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    text.push_str("\n[settings.shell]\noutput_prefix_bytes = 5\ndeadline_secs = 2\n");
    std::fs::write(&h.config, text).expect("write config");
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let _worker = start_worker(&h).expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("shell__run", json!({"command": "echo 0123456789"}))]),
            calls(&[("shell__run", json!({"command": "sleep 60"}))]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira count, then wait").await;
    let count = h.wait_post(&square, "mira", "echo 0123456789", since).await;
    h.click("ana", &count.id, "approve").await;
    let wait = h.wait_post(&square, "mira", "sleep 60", since).await;
    h.click("ana", &wait.id, "approve").await;
    // Killed at the agent's 2 s, not the daemon's 114 s: the notice comes
    // well inside the wait's 30 s.
    h.wait_post(
        &square,
        "mira",
        "shell::run did not answer in time, and whether it completed cannot be confirmed",
        since,
    )
    .await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].starts_with("exit status 0\n[stdout]\n01234\n")
            && results[0].contains("[stdout: the first 5 of 11 bytes are shown; 6 more were not]"),
        "{}",
        results[0]
    );
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_bound_met_and_a_home_over_its_cap_reach_the_models_tool_result() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "bounds");
    e2e::require_root();
    // A 1 MiB file bound and a 1 MiB home (§6.1): a 3 MiB write stops at
    // the first, and what it left puts the home over the second.
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    text.push_str("\n[settings.shell]\nmax_file_mib = 1\nhome_cap_mib = 1\n");
    std::fs::write(&h.config, text).expect("write config");
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let _worker = start_worker(&h).expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "shell__run",
                json!({"command": "head -c 3M /dev/zero > ~/big"}),
            )]),
            calls(&[("shell__run", json!({"command": "rm ~/big"}))]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira fill, then clean").await;
    let fill = h.wait_post(&square, "mira", "head -c 3M", since).await;
    h.click("ana", &fill.id, "approve").await;
    let clean = h.wait_post(&square, "mira", "rm ~/big", since).await;
    h.click("ana", &clean.id, "approve").await;
    h.wait_post(&square, "mira", "Done.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    let home = roots.join("homes/mira");
    assert!(
        results[0].starts_with(&format!(
            "[home over its cap: your home, {}, holds 1.0 MiB; its cap is 1.0 MiB (home_cap_mib). Remove at least ",
            home.display()
        )) && results[0].contains(" KiB. Until it is under the cap every command runs shrink-only")
            && results[0].contains(
            "killed by signal 25\n[bound met: a file reached the file-size bound of 1 MiB (max_file_mib)"
        ),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with("[home under its cap again: this command ran shrink-only"),
        "{}",
        results[1]
    );
    let system = turn_requests(&h)[0]["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        system.contains("write files of at most 1 MiB")
            && system.contains("Your home can hold at most 1 MiB."),
        "the preamble states the agent's bounds: {system}"
    );
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_child_that_left_its_session_does_not_outlive_its_command_on_this_host() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "outlive");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    // Started as the shipped unit starts it: no --cgroup-root, so the worker
    // finds the host's cgroup v2 hierarchy itself, hybrid hosts included.
    let _worker = start_worker(&h).expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    // A sleep no other process runs: its length is this test's own.
    let marker = format!("{}.5", 100_000 + std::process::id() % 100_000);
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "shell__run",
                json!({"command": format!(
                    "setsid sleep {marker} </dev/null >/dev/null 2>&1 & echo started"
                )}),
            )]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira start it").await;
    let run = h.wait_post(&square, "mira", "setsid sleep", since).await;
    h.click("ana", &run.id, "approve").await;
    h.wait_post(&square, "mira", "Done.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].starts_with("exit status 0\n[stdout]\nstarted\n"),
        "{}",
        results[0]
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sleeping(&marker) {
        assert!(
            std::time::Instant::now() < deadline,
            "the command's setsid child outlived it"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = std::fs::remove_dir_all(&roots);
}

/// Whether a `sleep MARKER` is running anywhere on the host.
fn sleeping(marker: &str) -> bool {
    let wanted = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .any(|cmdline| cmdline == wanted.as_bytes())
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_boot_refuses_a_shell_agent_the_host_is_not_laid_out_for() {
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "refused");
    h.provision().await.expect("provisioned");
    // Mattermost is ready; the host is not: no home, no workspace.
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the host is not ready for the shell")
            && stderr.contains("agent mira:")
            && stderr.contains("collegium-provision host"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_the_worker_never_follows_a_link_where_its_own_directory_goes() {
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "linked");
    e2e::require_root();
    // The runtime directory is the daemon's user's: a link it left where
    // the worker's socket directory goes is refused, not followed.
    let run = h.dir.path().join("run");
    std::fs::create_dir_all(&run).expect("run");
    let elsewhere = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, run.join("shell")).expect("link");
    let refused = start_worker(&h).err().expect("refused");
    assert!(
        refused.contains("is not a directory of root's"),
        "{refused}"
    );
    assert!(
        std::fs::read_dir(&elsewhere).expect("dir").next().is_none(),
        "nothing was made through the link"
    );
    let _ = std::fs::remove_dir_all(&roots);
}

/// Approves a `sleep MARKER` for @mira and waits until it runs; its pid.
async fn a_sleep_running(h: &Harness, square: &str, marker: &str) -> u32 {
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("shell__run", json!({"command": format!("sleep {marker}")}))]),
            reply("Done."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", square, "@mira wait a while").await;
    let run = h.wait_post(square, "mira", "sleep", since).await;
    h.click("ana", &run.id, "approve").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(pid) = sleeping_pid(marker) {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the approved sleep never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// The pid of the `sleep MARKER` running anywhere on the host.
fn sleeping_pid(marker: &str) -> Option<u32> {
    let wanted = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .find(|entry| {
            std::fs::read(entry.path().join("cmdline")).is_ok_and(|c| c == wanted.as_bytes())
        })
        .and_then(|entry| entry.file_name().to_str()?.parse().ok())
}

/// Waits until no `sleep MARKER` runs, failing after ten seconds.
fn gone(marker: &str, why: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while sleeping(marker) {
        assert!(std::time::Instant::now() < deadline, "{why}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Issue 21 item 1, §6.1: under systemd the worker's unit delegates its
/// cgroup (`Delegate=yes`) and the worker runs with `--delegated-cgroup`,
/// so each command's cgroup sits inside the unit's. Stopping the unit
/// (`KillMode=control-group` kills the whole cgroup, as `cgroup.kill`
/// does here) then stops every command it runs; under the host's
/// hierarchy the command would have run on.
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_stopping_the_workers_unit_stops_the_commands_it_runs() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "unit");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
    let mount =
        collegium_worker_shell::cgroups::unified_mount(&mountinfo).expect("a cgroup v2 hierarchy");
    let unit = mount.join(format!("collegium-e2e-unit-{}", std::process::id()));
    std::fs::create_dir_all(&unit).expect("the unit's cgroup");
    let worker = e2e::shell_worker::start_in_unit_cgroup(&h.config, 1, &unit)
        .expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    let marker = format!("{}.7", 100_000 + std::process::id() % 100_000);
    let pid = a_sleep_running(&h, &square, &marker).await;
    let cgroup = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).expect("its cgroup");
    let inside = format!(
        "0::/{}/cmd-",
        unit.strip_prefix(&mount)
            .expect("under the mount")
            .display()
    );
    assert!(
        cgroup.lines().any(|l| l.starts_with(&inside)),
        "the command's cgroup is inside the unit's: {cgroup}"
    );
    let leaf = std::fs::read_to_string(unit.join("worker/cgroup.procs")).expect("the leaf");
    assert_eq!(
        leaf.trim(),
        worker.pid().to_string(),
        "the worker moved itself into its leaf"
    );

    std::fs::write(unit.join("cgroup.kill"), "1").expect("the unit stopped");
    gone(&marker, "the command outlived its worker's unit");
    drop(worker);
    drop(daemon);
    // The unit's cgroup is systemd's to remove; here, the test's.
    for child in std::fs::read_dir(&unit)
        .expect("unit")
        .filter_map(Result::ok)
    {
        if child.path().is_dir() {
            let _ = std::fs::remove_dir(child.path());
        }
    }
    let _ = std::fs::remove_dir(&unit);
    let _ = std::fs::remove_dir_all(&roots);
}

/// §6.1: a worker stopped by SIGTERM kills the commands it runs before it
/// ends, wherever their cgroups are: under the host's hierarchy they sit
/// outside its own, where no unit's stop would reach them.
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_stopped_worker_leaves_no_command_running() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let roots = shell_deployment(&h, "stop");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let worker = start_worker(&h).expect("the shell worker started");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    let marker = format!("{}.9", 100_000 + std::process::id() % 100_000);
    a_sleep_running(&h, &square, &marker).await;
    // Stopped as systemd stops it: the command ends now, not at its
    // deadline, which the worker would otherwise wait out.
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(worker.pid()).expect("pid")),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    gone(&marker, "the command outlived its stopped worker");
    drop(worker);
    drop(daemon);
    let _ = std::fs::remove_dir_all(&roots);
}
