//! Toolset processes the daemon starts itself (ARCHITECTURE §4, §6; spec
//! §3.14): a granted plugin is started, handed the boot's key, described and
//! checked before the daemon runs; what does not check out refuses boot,
//! naming the plugin and what is wrong.

use e2e::Harness;
use std::time::Duration;

use e2e::people::now_ms;
use e2e::procs::{self, Process};
use e2e::scenario::{calls, reply, turn_requests};
use serde_json::json;

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
    assert_eq!(ready["tools"], 10);
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
    assert_eq!(warned.len(), 9, "every fixture tool but read: {warned:?}");
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
/// as that user (a daemon that is not root connects to its unit instead:
/// plugin_own_unit.rs): the handshake holds it to that uid with no capabilities,
/// and its socket and audit log live in directories it owns.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_runs_under_its_own_user_when_the_daemon_is_root() {
    use std::os::unix::fs::MetadataExt;
    let mut h = Harness::start().await;
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
        assert!(
            stderr.contains(&format!("it runs from its own unit as {WORKER_USER}")),
            "{stderr}"
        );
        return;
    }
    let user = nix::unistd::User::from_name(WORKER_USER)
        .expect("lookup")
        .unwrap_or_else(|| panic!("no OS user {WORKER_USER}: run tests/setup.sh"));
    // The host as the provisioner lays it out: the plugin tree is passable
    // only by the plugin users' group, so the plugin reaches its own code
    // only if it was started holding its user's groups (§6.1).
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "[deployment]\n",
        "[deployment]\ndaemon_user = \"nobody\"\n",
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
    h.config_in_its_own_dir();
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    let plugins_group = nix::unistd::Group::from_name("nobody-plugins")
        .expect("lookup")
        .expect("the plugin users' group");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    assert!(
        seen.iter().any(|v| v["message"] == "plugin ready"),
        "{seen:#?}"
    );
    let groups = groups_of_processes_of(user.uid.as_raw(), h.dir.path());
    let daemon_gid = nix::unistd::User::from_name("nobody")
        .expect("lookup")
        .expect("nobody")
        .gid
        .as_raw();
    assert!(!groups.is_empty(), "the plugin runs as {WORKER_USER}");
    for held in &groups {
        assert!(
            held.contains(&plugins_group.gid.as_raw()) && !held.contains(&daemon_gid),
            "the plugin holds the plugin users' group and not the daemon's: {held:?}"
        );
    }
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

/// Installs the fixture plugin and grants @mira `grants`; the path of the
/// fixture's record.
fn fixture_deployment(h: &Harness, grants: &[&str]) -> std::path::PathBuf {
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(grants);
    record
}

/// The tools a turn's first completion offered the model, by name.
fn offered(h: &Harness) -> Vec<String> {
    turn_requests(h)
        .first()
        .and_then(|r| r["tools"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// §3.4: a plugin's effective settings are the deployment's defaults with
/// the agent's own merged over them, shallowly, and each call carries them.
/// A tool that works only under a setting is offered once it is set.
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_plugin_call_carries_the_agents_effective_settings() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    let record = fixture_deployment(&h, &["workspace", "fixture"]);
    h.deployment_settings(
        "fixture",
        "greeting = \"Hello\"\nsignature = \"the deployment\"",
    );
    h.mira_settings("fixture", "signature = \"Mira\"");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![calls(&[("fixture__greet", json!({}))]), reply("Greeted.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "greet the team").await;
    h.wait_post(&dm, "mira", "Greeted.", since).await;
    assert!(
        offered(&h).contains(&"fixture__greet".to_string()),
        "{:?}",
        offered(&h)
    );
    let asked = fixture_toolset::asked(&record);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0]["tool"], "greet");
    assert_eq!(
        asked[0]["settings"],
        json!({"greeting": "Hello", "signature": "Mira"}),
        "the agent's own key over the default, the default's other key kept"
    );
    // The plugin is told the turn ended, once, after its reply (§3.4).
    let turn = e2e::scenario::store(&h)
        .turns_of("mira", &dm)
        .expect("turns")[0]
        .id
        .clone();
    for _ in 0..200 {
        if !fixture_toolset::ended(&record).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(fixture_toolset::ended(&record), vec![turn]);
}

/// §3.4: a namespace grant leaves out a plugin tool whose settings the
/// agent lacks, as it does a framework tool's.
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_namespace_grant_leaves_out_a_plugin_tool_without_its_settings() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    fixture_deployment(&h, &["workspace", "fixture"]);
    h.mira_settings("fixture", "signature = \"Mira\"");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script("demo-model", vec![reply("Hello.")]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "hello").await;
    h.wait_post(&dm, "mira", "Hello.", since).await;
    let tools = offered(&h);
    assert!(tools.contains(&"fixture__read".to_string()), "{tools:?}");
    assert!(
        !tools.contains(&"fixture__greet".to_string()),
        "greet works only with a greeting: {tools:?}"
    );
}

/// §3.4, §3.14: settings that do not fit the schema the plugin declares
/// refuse boot, each problem naming the agent and the key that set it.
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_plugin_settings_that_fail_its_schema_refuse_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    fixture_deployment(&h, &["workspace", "fixture"]);
    h.deployment_settings("fixture", "signature = 7");
    h.mira_settings("fixture", "greeting = 5\ncolour = \"red\"");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("plugin `fixture`: what its agents are configured with does not fit"),
        "{stderr}"
    );
    for line in [
        "@mira: agents[0].settings.fixture.greeting: the number 5, but it must be of type",
        "@mira: agents[0].settings.fixture.colour: unknown key",
        "@mira: settings.fixture.signature: the number 7, but it must be of type",
    ] {
        assert!(stderr.contains(line), "{line:?} in {stderr}");
    }
}

/// §3.4: naming a plugin tool by ref without the settings it works under
/// refuses boot, naming the agent, the grant and the missing key.
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_a_plugin_tool_granted_by_ref_without_its_settings_refuses_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    fixture_deployment(&h, &["workspace", "fixture::read", "fixture::greet"]);
    h.mira_settings("fixture", "signature = \"Mira\"");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "@mira: agents[0].grants[2]: `fixture::greet` works only with the setting `greeting` under [agents.settings.fixture] or [settings.fixture], and none is given (§3.4)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("fixture::read`"), "{stderr}");
}

/// §3.14: a settings schema that is not one refuses boot rather than being
/// taken for "any settings".
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_whose_settings_schema_is_malformed_refuses_boot() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    h.install_plugin(
        "fixture",
        &format!(
            "#!/bin/sh\nFIXTURE_SETTINGS_SCHEMA='{{\"type\": ' exec '{}' \"$@\"\n",
            e2e::binary("collegium-fixture-toolset").display()
        ),
    );
    h.grant_mira(&["workspace", "fixture"]);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("plugin `fixture` is refused (§3.14):")
            && stderr.contains("its settings schema is not JSON"),
        "{stderr}"
    );
}

/// The fixture plugin a running daemon started, found as its child.
fn plugin_of(daemon: &e2e::Daemon) -> Vec<Process> {
    let found = procs::children_named(daemon.child.id(), "collegium-fixture-toolset");
    assert_eq!(found.len(), 1, "the daemon started one plugin: {found:?}");
    found
}

/// How long a plugin may take to end once its daemon has.
const ENDS_WITHIN: Duration = Duration::from_secs(5);

/// §3.14: a plugin dies with the daemon that started it however the daemon
/// ends; a SIGKILL runs none of the daemon's own code.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_dies_with_a_daemon_killed_outright() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    fixture_deployment(&h, &["workspace", "fixture"]);
    let mut daemon = h.daemon();
    daemon.wait_for("collegium is running");
    let plugin = plugin_of(&daemon);
    daemon.child.kill().expect("SIGKILL");
    daemon.child.wait().expect("wait");
    procs::assert_ended(&plugin, ENDS_WITHIN);
}

/// As above, for a plugin running as its own OS user: the switch to that
/// user would clear a parent-death signal set before it.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_under_its_own_user_dies_with_a_daemon_killed_outright() {
    e2e::require_root();
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    fixture_deployment(&h, &["workspace", "fixture"]);
    h.run_plugin_as("fixture", WORKER_USER);
    let mut daemon = h.daemon();
    daemon.wait_for("collegium is running");
    let plugin = plugin_of(&daemon);
    daemon.child.kill().expect("SIGKILL");
    daemon.child.wait().expect("wait");
    procs::assert_ended(&plugin, ENDS_WITHIN);
}

/// The suite leaves no process running: a scenario's daemon is killed when
/// it is dropped, as its test ends whether it passed or not, and the plugins
/// it started end with it.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_dropped_deployment_leaves_no_plugin_running() {
    let plugin = {
        let h = Harness::start().await;
        h.provision().await.expect("provisioned");
        fixture_deployment(&h, &["workspace", "fixture"]);
        let mut daemon = h.daemon();
        daemon.wait_for("collegium is running");
        plugin_of(&daemon)
    };
    procs::assert_ended(&plugin, ENDS_WITHIN);
}

/// The supplementary groups of each running process of `uid` whose
/// command line names a path under `dir` (this test's deployment).
fn groups_of_processes_of(uid: u32, dir: &std::path::Path) -> Vec<Vec<u32>> {
    let mut found = Vec::new();
    let dir = dir.to_string_lossy().into_owned();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(status) = std::fs::read_to_string(entry.path().join("status")) else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmdline).contains(&dir) {
            continue;
        }
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|rest| {
                    rest.split_whitespace()
                        .filter_map(|n| n.parse::<u32>().ok())
                        .collect::<Vec<u32>>()
                })
                .unwrap_or_default()
        };
        if field("Uid:").first() == Some(&uid) {
            found.push(field("Groups:"));
        }
    }
    found
}
