//! Agents' users cannot reach the daemon's callback port or any worker
//! (§6.4; ARCHITECTURE §4): `collegium-provision host` converges an
//! nftables table rejecting the agents' uids' connections to the callback
//! port, and nothing else; the shell worker tries every endpoint as each
//! agent's user at the handshake, and the daemon refuses to boot on one an
//! agent reached. CI runs as root; as anyone else the provisioner and the
//! worker refuse up front, which the host and shell scenarios check.

use std::process::Command;
use std::time::{Duration, Instant};

use collegium_control::host::reach::table_name;
use collegium_provision::host::provision;
use e2e::{Harness, binary};
use nix::unistd::User;
use serde_json::Value;

/// The harness's deployment with @mira holding the shell, its home and
/// workspace under a directory agents may pass through.
fn shell_deployment(h: &Harness, name: &str) -> std::path::PathBuf {
    let roots =
        std::env::temp_dir().join(format!("collegium-reach-e2e-{}-{name}", std::process::id()));
    h.agent_roots_at(&roots);
    h.grant_mira(&["workspace", "shell"]);
    roots
}

/// The deployment's table as `nft -j` lists it; none where it is absent.
fn table(h: &Harness) -> Option<Vec<Value>> {
    let output = Command::new("nft")
        .args(["-j", "list", "table", "inet", &table_name(&h.state_dir())])
        .output()
        .expect("run nft");
    if !output.status.success() {
        return None;
    }
    let listed: Value = serde_json::from_slice(&output.stdout).expect("nft's JSON");
    Some(listed["nftables"].as_array().cloned().unwrap_or_default())
}

/// A named set's elements in the listing.
fn elements(listing: &[Value], set: &str) -> Vec<u64> {
    listing
        .iter()
        .filter_map(|o| o.get("set"))
        .find(|s| s["name"] == set)
        .and_then(|s| s["elem"].as_array())
        .map(|e| e.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

fn callback_port(h: &Harness) -> u16 {
    h.loaded().config.callbacks.bind.port()
}

fn mira() -> User {
    User::from_name("cg-mira")
        .expect("lookup")
        .expect("mira's OS user exists")
}

/// Connects to `port` on loopback as `uid`, from a process of that user's
/// own: how long it took, and whether it connected.
fn connect_as(uid: u32, gid: u32, port: u16) -> (Duration, Result<(), String>) {
    use std::os::unix::process::CommandExt;
    let started = Instant::now();
    let output = Command::new("/bin/bash")
        .args(["-c", &format!("exec 3<>/dev/tcp/127.0.0.1/{port}")])
        .uid(uid)
        .gid(gid)
        .output()
        .expect("run bash");
    let took = started.elapsed();
    if output.status.success() {
        (took, Ok(()))
    } else {
        (
            took,
            Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        )
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_the_host_provisioner_converges_one_table_of_the_agents_uids_and_the_callback_port() {
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "table");
    e2e::require_root();
    let table_name = table_name(&h.state_dir());
    let first = provision(&h.loaded()).expect("provisioned");
    assert!(
        first.changes.iter().any(|c| c.starts_with(&format!(
            "created the nftables table inet {table_name}: connections from the agents' uids {} to port {} of this host are rejected",
            mira().uid,
            callback_port(&h)
        ))),
        "{:?}",
        first.changes
    );
    let listing = table(&h).expect("the table exists");
    assert_eq!(
        elements(&listing, "agents"),
        [u64::from(mira().uid.as_raw())]
    );
    assert_eq!(
        elements(&listing, "ports"),
        [u64::from(callback_port(&h))],
        "only the callback port"
    );
    let chains: Vec<&Value> = listing.iter().filter_map(|o| o.get("chain")).collect();
    assert!(
        chains.len() == 1 && chains[0]["hook"] == "output" && chains[0]["policy"] == "accept",
        "one output chain, accepting what the rule does not match: {chains:?}"
    );
    assert_eq!(
        listing.iter().filter(|o| o.get("rule").is_some()).count(),
        1,
        "{listing:?}"
    );

    // A converged host changes nothing.
    let second = provision(&h.loaded()).expect("provisioned");
    assert!(second.changes.is_empty(), "{:?}", second.changes);

    // Drift is put back: a uid slipped into the set goes.
    let added = Command::new("nft")
        .args(["add", "element", "inet", &table_name, "agents", "{ 0 }"])
        .status()
        .expect("nft");
    assert!(added.success());
    let repaired = provision(&h.loaded()).expect("provisioned");
    assert!(
        repaired.changes.len() == 1
            && repaired.changes[0]
                .starts_with(&format!("converged the nftables table inet {table_name}")),
        "{:?}",
        repaired.changes
    );
    assert_eq!(
        elements(&table(&h).expect("the table"), "agents"),
        [u64::from(mira().uid.as_raw())]
    );

    // No agent holds the shell: no table.
    let text = std::fs::read_to_string(&h.config).expect("config");
    std::fs::write(
        &h.config,
        text.replacen(
            "grants = [\"workspace\", \"shell\"]",
            "grants = [\"workspace\"]",
            1,
        ),
    )
    .expect("write config");
    let removed = provision(&h.loaded()).expect("provisioned");
    assert!(
        removed.changes.contains(&format!(
            "removed the nftables table inet {table_name}: no agent holds the shell"
        )),
        "{:?}",
        removed.changes
    );
    assert!(table(&h).is_none());
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_an_agents_connection_to_the_callback_port_is_rejected_and_nothing_else_is() {
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "connect");
    e2e::require_root();
    provision(&h.loaded()).expect("provisioned");
    let port = callback_port(&h);
    let _listening = std::net::TcpListener::bind(("127.0.0.1", port)).expect("bind the port");
    let mattermost: u16 = h
        .mattermost
        .url
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok())
        .expect("the simulator's port");
    let mira = mira();
    let (uid, gid) = (mira.uid.as_raw(), mira.gid.as_raw());

    let (took, refused) = connect_as(uid, gid, port);
    let refused = refused.expect_err("mira's user is refused the callback port");
    assert!(refused.contains("Connection refused"), "{refused}");
    assert!(
        took < Duration::from_secs(2),
        "refused at once, not left to time out: {took:?}"
    );
    connect_as(uid, gid, mattermost)
        .1
        .expect("mira's user reaches another local port: the rest of the network is as it was");
    // Only the agents' uids are matched.
    let nobody = User::from_name("nobody").expect("lookup").expect("nobody");
    connect_as(nobody.uid.as_raw(), nobody.gid.as_raw(), port)
        .1
        .expect("a user that is no agent's reaches the callback port");
    connect_as(0, 0, port)
        .1
        .expect("root reaches the callback port");
    let _ = std::fs::remove_dir_all(&roots);
}

fn start_worker(h: &Harness) -> e2e::shell_worker::ShellWorker {
    e2e::shell_worker::start(&h.config, 1, &[]).expect("the shell worker started")
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_boot_refuses_while_an_agents_user_reaches_the_callback_port_and_boots_once_it_cannot()
{
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "boot");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    provision(&h.loaded()).expect("the host provisioned");
    // The host as it is before the rule: the provisioner's table removed.
    let removed = Command::new("nft")
        .args(["delete", "table", "inet", &table_name(&h.state_dir())])
        .status()
        .expect("nft");
    assert!(removed.success());
    let _worker = start_worker(&h);
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    let port = callback_port(&h);
    assert!(
        stderr.contains(&format!(
            "agent_reach.mira: cg-mira reached tcp 127.0.0.1:{port}, so @mira's commands could too"
        )) && stderr.contains("run `collegium-provision host --config FILE` as root"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("toolset.sock"),
        "the worker's socket stays closed to mira: {stderr}"
    );

    // Provisioned again, the same worker's next handshake finds the port
    // closed to mira's user, and the daemon boots.
    provision(&h.loaded()).expect("the host provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_a_host_without_nft_is_told_which_package_to_install() {
    let h = Harness::start().await;
    let roots = shell_deployment(&h, "nonft");
    e2e::require_root();
    // A PATH with the user tools the provisioner runs, and no nft.
    let tools = h.dir.path().join("tools");
    std::fs::create_dir_all(&tools).expect("tools");
    for tool in ["useradd", "usermod"] {
        let found = ["/usr/sbin", "/sbin", "/usr/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists())
            .expect("the tool is installed");
        std::os::unix::fs::symlink(found, tools.join(tool)).expect("link");
    }
    let output = Command::new(binary("collegium-provision"))
        .args(["host", "--config"])
        .arg(&h.config)
        .env("PATH", &tools)
        .output()
        .expect("run the provisioner");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("the nft command is not installed; install the nftables package"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&roots);
}
