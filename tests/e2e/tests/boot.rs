//! The daemon's boot against a real (simulated) Mattermost and model provider
//! (§3.1, §7.3, §8.4): it runs and stops cleanly once provisioned; it refuses
//! to start, naming what is missing and the command that fixes it, when a
//! token, the `/collegium` command or a channel is missing; it verifies its
//! models first.

use collegium_control::store::Store;
use e2e::Harness;
use mattermost_wire::model::Command;
use serde_json::{Value, json};

const FIX: &str = "collegium-provision mattermost --config";

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_the_daemon_runs_once_provisioned_and_stops_cleanly_on_sigterm() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    assert!(
        seen.iter()
            .any(|v| v["message"] == "model verified" && v["model"] == "demo"),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|v| v["message"] == "Mattermost is provisioned for this configuration"),
        "{seen:#?}"
    );
    assert!(
        seen.iter()
            .any(|v| v["message"] == "first run against this store"),
        "{seen:#?}"
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    assert!(daemon.child.wait().expect("wait").success());

    let store = Store::open(&h.state_dir().join("collegium.db")).expect("store");
    let run = store
        .previous_run("another boot")
        .expect("query")
        .expect("recorded");
    assert!(run.stopped_at.is_some(), "a clean stop time");
    drop(store);

    let mut again = h.daemon();
    let seen = again.wait_for("collegium is running");
    assert!(
        seen.iter()
            .any(|v| v["message"] == "previous run stopped cleanly"),
        "{seen:#?}"
    );
    again.terminate();
    again.wait_for("stopped cleanly");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_boot_refuses_an_unprovisioned_server_naming_the_fix() {
    let h = Harness::start().await;
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("Mattermost is not provisioned"), "{stderr}");
    assert!(stderr.contains("there are no bot tokens"), "{stderr}");
    assert!(stderr.contains(FIX), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_boot_refuses_a_token_that_no_longer_authenticates() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let held = h.credentials();
    let _: Value = h
        .admin
        .post(
            "users/tokens/revoke",
            &json!({"token_id": held.accounts["mira"].token_id}),
        )
        .await
        .expect("revoke");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the token held for @mira does not authenticate"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("@theo"),
        "only what is missing is named: {stderr}"
    );
    assert!(stderr.contains(FIX), "{stderr}");

    // The provisioner repairs it, and boot goes on.
    h.provision().await.expect("repair");
    let mut daemon = h.daemon();
    daemon.wait_for("collegium is running");
}

#[tokio::test(flavor = "multi_thread")]
async fn s8_4_boot_refuses_without_the_collegium_command_or_with_one_posting_elsewhere() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let team = h.team().await;
    let command = h
        .admin
        .commands(&team.id)
        .await
        .expect("commands")
        .into_iter()
        .find(|c| c.trigger == "collegium")
        .expect("registered");

    let elsewhere = Command {
        url: "http://127.0.0.1:9/elsewhere".into(),
        ..command.clone()
    };
    let _: Command = h.admin.update_command(&elsewhere).await.expect("repoint");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the /collegium command posts to http://127.0.0.1:9/elsewhere"),
        "{stderr}"
    );

    let _: Value = h
        .admin
        .delete(&format!("commands/{}", command.id))
        .await
        .expect("delete");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the /collegium command is not registered"),
        "{stderr}"
    );
    assert!(stderr.contains(FIX), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_boot_refuses_when_a_configured_channel_does_not_exist() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.write_config(&["launches"]);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the channel ~launches does not exist"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_boot_refuses_when_mattermost_cannot_be_reached() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let text = std::fs::read_to_string(&h.config).expect("read").replace(
        &h.mattermost.url,
        &format!("http://127.0.0.1:{}", e2e::free_port()),
    );
    std::fs::write(&h.config, text).expect("write");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("cannot reach Mattermost"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_a_model_that_refuses_its_credential_refuses_boot_naming_the_agents_it_strands() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.model.sim.script(
        "demo-model",
        vec![model_sim::script::Scripted {
            fail: Some(model_sim::script::Failure {
                status: Some(401),
                ..Default::default()
            }),
            ..Default::default()
        }],
    );
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("model `demo` refused its credential; it strands mira, theo"),
        "{stderr}"
    );
    assert!(!stderr.contains("collegium is running"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_3_an_unreachable_model_is_recorded_unverified_and_never_verified() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let text = std::fs::read_to_string(&h.config).expect("read").replace(
        &format!("{}/v1", h.model.url),
        &format!("http://127.0.0.1:{}/v1", e2e::free_port()),
    );
    std::fs::write(&h.config, text).expect("write");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    let unverified = seen
        .iter()
        .find(|v| v["message"] == "model unverified at boot")
        .unwrap_or_else(|| panic!("{seen:#?}"));
    assert_eq!(unverified["model"], "demo");
    assert_eq!(
        unverified["reason"],
        "provider outage: the provider refused the connection"
    );
    assert!(!seen.iter().any(|v| v["message"] == "model verified"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_10_boot_refuses_a_respond_to_all_channel_holding_two_agents() {
    let h = Harness::start().await;
    let text = std::fs::read_to_string(&h.config).expect("config");
    std::fs::write(
        &h.config,
        text.replacen(
            "name = \"research\"\n",
            "name = \"research\"\ntriggering = \"respond-to-all\"\n",
            1,
        ),
    )
    .expect("write config");
    h.provision().await.expect("provisioned");
    let team = h.team().await;
    let research = h
        .admin
        .channel_by_name(&team.id, "research")
        .await
        .expect("lookup")
        .expect("~research");
    let mira = h.user("mira").await;
    let theo = h.user("theo").await;
    for user in [&mira, &theo] {
        h.admin
            .add_channel_member(&research.id, &user.id)
            .await
            .expect("a person adds the agent");
    }

    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the respond-to-all channel ~research has 2 agents (mira, theo)"),
        "{stderr}"
    );

    // One agent is what such a channel may hold.
    let _: Value = h
        .admin
        .delete(&format!("channels/{}/members/{}", research.id, theo.id))
        .await
        .expect("a person removes theo");
    let mut daemon = h.daemon();
    daemon.wait_for("collegium is running");
}
