//! Toolset processes the daemon starts itself (ARCHITECTURE §4, §6; spec
//! §3.14): a granted plugin is started, handed the boot's key, described and
//! checked before the daemon runs; what does not check out refuses boot,
//! naming the plugin and what is wrong.

use e2e::Harness;

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_granted_plugin_is_started_checked_and_stopped_with_the_daemon() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(&["workspace", "fixture"]);

    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    let ready = seen
        .iter()
        .find(|v| v["message"] == "plugin ready")
        .unwrap_or_else(|| panic!("no plugin ready line in {seen:#?}"));
    assert_eq!(ready["plugin"], "fixture");
    assert_eq!(ready["tools"], 9);
    let socket = h
        .dir
        .path()
        .join("run")
        .join("fixture")
        .join("toolset.sock");
    assert!(socket.exists(), "the plugin serves on {}", socket.display());

    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let status = daemon.child.wait().expect("wait");
    assert!(status.success());
    assert!(
        !socket.exists(),
        "the plugin was stopped with the daemon and removed its socket"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_grant_of_a_tool_the_plugin_does_not_serve_refuses_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    h.grant_mira(&["workspace", "fixture::read", "fixture::nope"]);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "agents[0] (mira): granted `fixture::nope`, which the plugin `fixture` does not serve"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("fixture::read`, which"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_tool_no_agent_holds_is_warned_of_not_refused() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    h.grant_mira(&["workspace", "fixture::read"]);
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    let warned: Vec<&str> = seen
        .iter()
        .filter(|v| v["message"] == "no agent is granted this plugin tool")
        .filter_map(|v| v["tool"].as_str())
        .collect();
    assert_eq!(warned.len(), 8, "every fixture tool but read: {warned:?}");
    assert!(!warned.contains(&"read"));
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_that_never_becomes_ready_refuses_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_plugin("broken", "#!/bin/sh\necho 'starting up'\nexit 3\n");
    h.grant_mira(&["workspace", "broken"]);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("plugin `broken`: printed \"starting up\" where `ready` was expected"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_without_no_new_privileges_refuses_boot_naming_the_field() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_plugin(
        "fixture",
        &format!(
            "#!/bin/sh\nFIXTURE_WITHOUT_NO_NEW_PRIVILEGES=1 exec '{}' \"$@\"\n",
            e2e::binary("collegium-fixture-toolset").display()
        ),
    );
    h.grant_mira(&["workspace", "fixture"]);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("worker `fixture` does not match what this deployment expects"),
        "{stderr}"
    );
    assert!(
        stderr.contains("sandbox.no_new_privileges: not set"),
        "{stderr}"
    );
}

/// The OS user `tests/setup.sh` creates for workers.
const WORKER_USER: &str = "collegium-test-worker";

/// With the daemon as root, a plugin configured with a user of its own runs
/// as that user: the handshake holds it to that uid with no capabilities,
/// and its socket and audit log live in directories it owns.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_runs_under_its_own_user_when_the_daemon_is_root() {
    use std::os::unix::fs::MetadataExt;
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let records = h.dir.path().join("records");
    std::fs::create_dir(&records).expect("records");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&records, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    }
    h.install_fixture_plugin(&records.join("asked.jsonl"));
    h.grant_mira(&["workspace", "fixture"]);
    h.run_plugin_as("fixture", WORKER_USER);
    if !nix::unistd::geteuid().is_root() {
        let (code, stderr) = h.daemon_refusal();
        assert_eq!(code, Some(1), "{stderr}");
        assert!(stderr.contains("only a daemon running as root"), "{stderr}");
        return;
    }
    let user = nix::unistd::User::from_name(WORKER_USER)
        .expect("lookup")
        .unwrap_or_else(|| panic!("no OS user {WORKER_USER}: run tests/setup.sh"));
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    assert!(
        seen.iter().any(|v| v["message"] == "plugin ready"),
        "{seen:#?}"
    );
    for dir in [
        h.dir.path().join("run").join("fixture"),
        h.dir.path().join("audit").join("fixture"),
    ] {
        let meta = std::fs::metadata(&dir).expect("dir");
        assert_eq!(meta.uid(), user.uid.as_raw(), "{}", dir.display());
        assert_eq!(meta.mode() & 0o777, 0o700, "{}", dir.display());
    }
    let log = h
        .dir
        .path()
        .join("audit")
        .join("fixture")
        .join("fixture.audit.jsonl");
    assert_eq!(
        std::fs::metadata(&log).expect("audit log").uid(),
        user.uid.as_raw(),
        "the plugin writes its own log"
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}
