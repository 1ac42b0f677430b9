//! The reach probe (§6.4) against the real launcher and a real OS user:
//! confined as a command is, as the agent's user, it connects to each
//! endpoint in process and the worker judges what each connect met. CI runs
//! as root; as anyone else the launcher refuses, and that is what is
//! checked.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use collegium_control::host::reach::Endpoint;
use collegium_proto::toolset::v1::{EndpointReach, Reach};
use collegium_worker_shell::reach::{controls, probe};
use collegium_worker_shell::request::LaunchRequest;
use nix::unistd::geteuid;
use support::{dir, ensure_user, launcher};

mod support;

const AGENT: &str = "cg-reachtest";

/// A Unix socket listening at `dir/toolset.sock`, open to anyone who
/// reaches it, as the workers' sockets are.
fn socket(dir: &Path) -> (std::os::unix::net::UnixListener, PathBuf) {
    let path = dir.join("toolset.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    (listener, path)
}

fn found<'a>(report: &'a [EndpointReach], endpoint: &Endpoint) -> &'a EndpointReach {
    report
        .iter()
        .find(|r| r.endpoint == endpoint.to_string())
        .unwrap_or_else(|| panic!("{endpoint} is in the report: {report:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_the_probe_connects_as_the_agent_confined_and_judges_each_endpoint() {
    let launcher = launcher();
    let root = tempfile::tempdir().expect("tempdir");
    if !geteuid().is_root() {
        let request = LaunchRequest {
            uid: 65534,
            gid: 65534,
            groups: vec![65534],
            home: root.path().to_path_buf(),
            workspace: None,
            command: String::new(),
            cgroup: None,
            landlock_floor: 1,
            nonce: String::new(),
            limits: Default::default(),
        };
        let endpoint = Endpoint::Unix(root.path().join("none.sock"));
        let report = probe(&launcher, &request, std::slice::from_ref(&endpoint), &[]).await;
        assert_eq!(found(&report, &endpoint).reach, Reach::Failed as i32);
        return;
    }
    let agent = ensure_user(AGENT);
    let (uid, gid) = (agent.uid.as_raw(), agent.gid.as_raw());
    dir(root.path(), 0, 0, 0o755);
    let home = root.path().join("home");
    dir(&home, uid, gid, 0o700);
    // A worker's socket directory, closed to the agent; and one that is
    // the agent's own, which it passes.
    let closed = root.path().join("closed");
    dir(&closed, 0, 0, 0o700);
    let open = root.path().join("open");
    dir(&open, uid, gid, 0o700);
    let (_closed_listener, closed_socket) = socket(&closed);
    let (_open_listener, open_socket) = socket(&open);
    let absent = open.join("absent.sock");
    // A TCP port something listens on, with no rule for this user; and
    // one nothing listens on.
    let listening = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let idle = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let endpoints = vec![
        Endpoint::Tcp(listening.local_addr().expect("addr")),
        Endpoint::Tcp(idle),
        Endpoint::Unix(closed_socket),
        Endpoint::Unix(open_socket),
        Endpoint::Unix(absent),
    ];
    let request = LaunchRequest {
        uid,
        gid,
        groups: vec![gid],
        home,
        workspace: None,
        command: String::new(),
        cgroup: None,
        landlock_floor: 1,
        nonce: String::new(),
        limits: Default::default(),
    };
    let controls = controls(&endpoints).await;
    let report = probe(&launcher, &request, &endpoints, &controls).await;
    let reach = |i: usize| Reach::try_from(found(&report, &endpoints[i]).reach).expect("reach");
    assert_eq!(reach(0), Reach::Reached, "{report:?}");
    assert_eq!(
        reach(1),
        Reach::Unverified,
        "nothing listens, so the refusal tells nothing: {report:?}"
    );
    assert_eq!(
        reach(2),
        Reach::Blocked,
        "root's 0700 directory is closed to the agent's user (root would pass it): {report:?}"
    );
    assert_eq!(
        reach(3),
        Reach::Reached,
        "the agent's own directory: {report:?}"
    );
    assert_eq!(reach(4), Reach::Unverified, "{report:?}");
    assert!(
        found(&report, &endpoints[2])
            .detail
            .contains("Permission denied"),
        "{report:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_the_probe_walks_each_directory_as_the_agent_and_the_kernel_decides() {
    support::require_root();
    let launcher = launcher();
    let root = tempfile::tempdir().expect("tempdir");
    let agent = ensure_user(AGENT);
    let (uid, gid) = (agent.uid.as_raw(), agent.gid.as_raw());
    dir(root.path(), 0, 0, 0o755);
    let home = root.path().join("home");
    dir(&home, uid, gid, 0o700);
    // An app root as a careless install leaves it, one as
    // deploy/tmpfiles.d makes it, and a plugins root beneath the closed
    // one, open itself: the walk stops at the app root.
    let open = root.path().join("open");
    dir(&open, 0, 0, 0o755);
    let closed = root.path().join("closed");
    dir(&closed, 0, 0, 0o750);
    let beneath = closed.join("plugins");
    dir(&beneath, 0, 0, 0o755);
    let endpoints = vec![
        Endpoint::Directory(open),
        Endpoint::Directory(closed),
        Endpoint::Directory(beneath),
        Endpoint::Directory(root.path().join("absent")),
    ];
    let request = LaunchRequest {
        uid,
        gid,
        groups: vec![gid],
        home,
        workspace: None,
        command: String::new(),
        cgroup: None,
        landlock_floor: 1,
        nonce: String::new(),
        limits: Default::default(),
    };
    let report = probe(&launcher, &request, &endpoints, &[]).await;
    let reach = |i: usize| Reach::try_from(found(&report, &endpoints[i]).reach).expect("reach");
    assert_eq!(reach(0), Reach::Reached, "{report:?}");
    assert_eq!(reach(1), Reach::Blocked, "root's 0750: {report:?}");
    assert_eq!(
        reach(2),
        Reach::Blocked,
        "behind a closed directory: {report:?}"
    );
    assert_eq!(reach(3), Reach::Blocked, "{report:?}");
    assert!(
        found(&report, &endpoints[3])
            .detail
            .contains("nothing to traverse"),
        "{report:?}"
    );
}
