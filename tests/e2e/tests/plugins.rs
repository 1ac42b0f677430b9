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
    let socket = h.state_dir().join("run").join("fixture.sock");
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
