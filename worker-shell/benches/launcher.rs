//! What the launcher adds to a command (issue 16; recorded in
//! `docs/benchmarks.md`): `bash -c true` spawned directly against the same
//! command through the launcher, as the shell worker runs it: a fresh
//! launcher exec, the uid switch, the user, PID, mount and IPC namespaces
//! with their private `/proc` and tmpfs, Landlock, and, where the host has
//! cgroup v2, a command cgroup made, joined, killed and removed; and, in
//! the last row, the home measured after the command as the worker does
//! for its cap (`home_cap_mib`). The command runs under the default bounds,
//! by rlimits (the development host delegates no controller).
//!
//! `cargo bench -p collegium-worker-shell --bench launcher` (as root: the
//! launcher takes the agent's user). Under `cargo test` it runs a few
//! rounds only, so the path stays checked.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use collegium_control::tools::shell_bounds::ShellBounds;
use collegium_worker_shell::bounds::{InForce, Mechanisms};
use collegium_worker_shell::request::LaunchRequest;
use collegium_worker_shell::run::{CommandCgroup, Ending, run};
use collegium_worker_shell::{cgroups, home};
use nix::unistd::User;
use tokio::io::AsyncReadExt;

#[path = "../tests/support/mod.rs"]
mod support;

/// The same user the confinement matrix runs as.
const AGENT: &str = "cg-shelltest-a";

fn agent() -> User {
    support::ensure_user(AGENT)
}

fn home(root: &Path, user: &User) -> PathBuf {
    support::dir(root, 0, 0, 0o755);
    let home = root.join("home");
    support::dir(&home, user.uid.as_raw(), user.gid.as_raw(), 0o700);
    home
}

/// The baseline: the command spawned as the worker would spawn anything,
/// its streams piped and read to their end.
async fn direct() -> Duration {
    let started = Instant::now();
    let mut child = tokio::process::Command::new("/bin/bash")
        .args(["-c", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bash");
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut stdout = child.stdout.take().expect("stdout");
    let mut stderr = child.stderr.take().expect("stderr");
    let (a, b, status) = tokio::join!(
        stdout.read_to_end(&mut out),
        stderr.read_to_end(&mut err),
        child.wait()
    );
    a.expect("stdout");
    b.expect("stderr");
    assert!(status.expect("wait").success());
    started.elapsed()
}

async fn launched(launcher: &Path, request: &LaunchRequest, cgroups: Option<&Path>) -> Duration {
    static CALL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let started = Instant::now();
    let cgroup = cgroups.map(|root| {
        let n = CALL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        CommandCgroup::create(
            root,
            &cgroups::command_name(std::process::id(), &n.to_string()),
        )
        .expect("a command cgroup")
    });
    let mut request = request.clone();
    request.cgroup = cgroup.as_ref().map(|c| c.path().to_path_buf());
    let finished = run(launcher, &request, cgroup.as_ref(), Duration::from_secs(30))
        .await
        .expect("run");
    drop(cgroup);
    assert_eq!(
        finished.ending,
        Ending::Exited(0),
        "{}",
        String::from_utf8_lossy(&finished.stderr.bytes)
    );
    started.elapsed()
}

fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() - 1) as f64 * q).round() as usize;
    samples[at]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main]
async fn main() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "the launcher benchmark runs as root: the launcher takes the agent's user"
    );
    let benching = std::env::args().any(|a| a == "--bench");
    let (warmup, runs) = if benching { (20, 300) } else { (2, 10) };
    let user = agent();
    let root = tempfile::tempdir().expect("tempdir");
    let request = LaunchRequest {
        uid: user.uid.as_raw(),
        gid: user.gid.as_raw(),
        groups: vec![user.gid.as_raw()],
        home: home(root.path(), &user),
        workspace: None,
        command: "true".into(),
        cgroup: None,
        landlock_floor: 1,
        nonce: String::new(),
        limits: InForce {
            bounds: ShellBounds::default(),
            mechanisms: Mechanisms::RLIMITS,
            shrink_only: false,
        }
        .launch_limits(),
    };
    let launcher = support::launcher();
    let cgroup_root = cgroups::host_root().filter(|r| cgroups::prepare(r).is_ok());

    let mut rows: Vec<(&str, Vec<Duration>)> = Vec::new();
    let mut samples = Vec::new();
    for n in 0..warmup + runs {
        let took = direct().await;
        if n >= warmup {
            samples.push(took);
        }
    }
    rows.push(("bash -c true, spawned directly", samples));
    let mut samples = Vec::new();
    for n in 0..warmup + runs {
        let took = launched(&launcher, &request, None).await;
        if n >= warmup {
            samples.push(took);
        }
    }
    rows.push(("through the launcher (namespaces, Landlock)", samples));
    if let Some(root) = &cgroup_root {
        let mut samples = Vec::new();
        for n in 0..warmup + runs {
            let took = launched(&launcher, &request, Some(root)).await;
            if n >= warmup {
                samples.push(took);
            }
        }
        rows.push(("through the launcher, with a command cgroup", samples));
        let measure = home::MeasureRequest {
            uid: request.uid,
            gid: request.gid,
            groups: request.groups.clone(),
            home: request.home.clone(),
            time_ms: 10_000,
        };
        let mut samples = Vec::new();
        for n in 0..warmup + runs {
            let started = Instant::now();
            launched(&launcher, &request, Some(root)).await;
            home::measure(&launcher, &measure)
                .await
                .expect("the home measured");
            if n >= warmup {
                samples.push(started.elapsed());
            }
        }
        rows.push(("... and the home measured after it", samples));
    }

    println!("one command, {runs} runs after {warmup} of warm-up:");
    let mut medians = Vec::new();
    for (name, samples) in &mut rows {
        let (p50, p90) = (quantile(samples, 0.5), quantile(samples, 0.9));
        medians.push(p50);
        println!("  {name:<46} p50 {:>9}  p90 {:>9}", ms(p50), ms(p90));
    }
    let first = medians[0];
    let confined = medians[medians.len().min(3) - 1];
    println!(
        "  added by the launcher, cgroup included (p50): {} (target: under 5 ms)",
        ms(confined.saturating_sub(first))
    );
    if medians.len() > 3 {
        println!(
            "  added with the home's measure (p50): {}",
            ms(medians[3].saturating_sub(first))
        );
    }
    if cgroup_root.is_none() {
        println!("  this host has no cgroup v2 hierarchy: the cgroup row is missing");
    }
}
