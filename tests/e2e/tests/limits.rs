//! The daemon's descriptor limit (§6.4): a hostile neighbour holding
//! connections open must not exhaust the descriptors every other agent's
//! turn needs, so the daemon raises its soft limit to the hard limit before
//! it serves. Its own test binary: the limit is lowered for this process,
//! which the daemon inherits.

use e2e::Harness;
use nix::sys::resource::{Resource, getrlimit, setrlimit};

/// The soft and hard "Max open files" of process `pid`.
fn open_files_limit(pid: u32) -> (u64, u64) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("a descriptor limit");
    let numbers: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| match w {
            "unlimited" => Some(u64::MAX),
            number => number.parse().ok(),
        })
        .collect();
    (numbers[0], numbers[1])
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_the_daemon_raises_its_descriptor_limit_to_the_hard_limit() {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let (_, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    let low = 512;
    assert!(
        hard > low,
        "this host's hard descriptor limit ({hard}) leaves no raise to show"
    );
    setrlimit(Resource::RLIMIT_NOFILE, low, hard).expect("lower the soft limit");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("collegium is running");
    assert!(
        seen.iter()
            .any(|v| v["message"] == "descriptor limit raised to the hard limit"),
        "{seen:#?}"
    );
    // An unlimited hard limit is met at the kernel's ceiling.
    let ceiling = if hard == nix::libc::RLIM_INFINITY {
        std::fs::read_to_string("/proc/sys/fs/nr_open")
            .expect("nr_open")
            .trim()
            .parse()
            .expect("a number")
    } else {
        hard
    };
    assert_eq!(
        open_files_limit(daemon.child.id()),
        (ceiling, hard),
        "started at {low}, the daemon runs at its hard limit"
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}
