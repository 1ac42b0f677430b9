//! One command cannot starve the host (§6.1; issue 16 item 3), against the
//! real launcher with real OS users, under the rlimits a host that delegates
//! no cgroup controller gets (this CI host's cgroup v2 hierarchy offers only
//! hugetlb): a fork bomb stays under its process bound while the host still
//! forks, a memory hog and a file past its bound fail naming the bound, the
//! private TMPDIR holds no more than the memory bound, and a home over its
//! cap runs commands shrink-only until enough is removed. Each test has a
//! user of its own: the process bound is counted per user. CI runs as root;
//! as anyone else the launcher refuses, which `confinement.rs` checks.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use collegium_control::tools::shell_bounds::ShellBounds;
use collegium_proto::toolset::v1::tool_result::Outcome;
use collegium_proto::toolset::v1::{Success, ToolResult};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_shell::bounds::{InForce, Mechanisms};
use collegium_worker_shell::output;
use collegium_worker_shell::request::LaunchRequest;
use collegium_worker_shell::run::{Ending, Finished, run};
use collegium_worker_shell::service::{AgentUser, ShellWorker};
use collegium_worker_shell::settings::ShellSettings;
use nix::unistd::User;
use support::{dir, ensure_user, err, launcher, out};

mod support;

/// Where the tests' homes go: a root directory agents may pass through.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("collegium-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&root).expect("mkdir");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        root
    })
}

/// An agent user of this test's own, with an empty home (0700).
fn agent(name: &str) -> (User, PathBuf) {
    let user = ensure_user(name);
    let home = root().join(name);
    let _ = std::fs::remove_dir_all(&home);
    dir(&home, user.uid.as_raw(), user.gid.as_raw(), 0o700);
    (user, home)
}

/// The bounds under rlimits, as this host gives them.
fn in_force(bounds: ShellBounds) -> InForce {
    InForce {
        bounds,
        mechanisms: Mechanisms::RLIMITS,
        shrink_only: false,
    }
}

fn request(user: &User, home: &Path, command: &str, in_force: &InForce) -> LaunchRequest {
    LaunchRequest {
        uid: user.uid.as_raw(),
        gid: user.gid.as_raw(),
        groups: vec![user.gid.as_raw()],
        home: home.to_path_buf(),
        workspace: None,
        command: command.to_string(),
        cgroup: None,
        landlock_floor: 1,
        limits: in_force.launch_limits(),
        nonce: String::new(),
    }
}

async fn sh(user: &User, home: &Path, command: &str, in_force: &InForce) -> Finished {
    run(
        &launcher(),
        &request(user, home, command, in_force),
        None,
        Duration::from_secs(60),
    )
    .await
    .expect("ran")
}

/// How many processes and threads `uid` runs on the host now.
fn tasks_of(uid: u32) -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("status")).ok())
        .filter(|status| {
            status.lines().any(|l| {
                l.strip_prefix("Uid:")
                    .and_then(|ids| ids.split_whitespace().next())
                    .is_some_and(|real| real == uid.to_string())
            })
        })
        .map(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Threads:"))
                .and_then(|n| n.trim().parse::<usize>().ok())
                .unwrap_or(1)
        })
        .sum()
}

fn bounds(max_processes: u64, memory_mib: u64, max_file_mib: u64) -> ShellBounds {
    ShellBounds {
        max_processes,
        memory_mib,
        max_file_mib,
        home_cap_mib: 2048,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_fork_bomb_is_bounded_and_the_host_still_forks() {
    support::require_root();
    let (user, home) = agent("cg-boundtest-bomb");
    let limit = 64;
    let in_force = in_force(bounds(limit, 1024, 1024));
    // A binary fork bomb, nine levels deep so that even unbounded it stops
    // at about two thousand processes: with its bound it never gets there.
    let bomb =
        "f() { if [ \"$1\" -gt 0 ]; then f $(($1 - 1)) & f $(($1 - 1)) & fi; sleep 6; }; f 9";
    let (path, bombing) = (launcher(), request(&user, &home, bomb, &in_force));
    let launched = run(&path, &bombing, None, Duration::from_secs(5));
    let uid = user.uid.as_raw();
    let watching = tokio::spawn(async move {
        let mut most = 0;
        let mut host_forked = true;
        let until = Instant::now() + Duration::from_secs(4);
        while Instant::now() < until {
            most = most.max(tasks_of(uid));
            host_forked &= Command::new("true").status().is_ok_and(|s| s.success());
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (most, host_forked)
    });
    let finished = launched.await.expect("ran");
    let (most, host_forked) = watching.await.expect("watched");
    assert!(
        most <= limit as usize,
        "the agent's user ran {most} processes, past its bound of {limit}"
    );
    assert!(
        most >= limit as usize / 2,
        "the bomb reached {most} processes: it should have pressed on its bound"
    );
    assert!(host_forked, "the host could not fork while the bomb ran");
    assert!(
        err(&finished).contains("Resource temporarily unavailable"),
        "{}",
        err(&finished)
    );
    let gone = Instant::now() + Duration::from_secs(10);
    while tasks_of(uid) > 0 {
        assert!(
            Instant::now() < gone,
            "{} of the bomb's processes outlived its command",
            tasks_of(uid)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_memory_hog_is_bounded_and_its_failure_states_the_bound() {
    support::require_root();
    let (user, home) = agent("cg-boundtest-mem");
    let in_force = in_force(bounds(256, 128, 1024));
    let hog = "python3 -c 'b = bytearray(512 * 1024 * 1024); print(\"allocated\")'";
    let finished = sh(&user, &home, hog, &in_force).await;
    assert_eq!(finished.ending, Ending::Exited(1), "{}", err(&finished));
    assert!(!out(&finished).contains("allocated"));
    assert!(err(&finished).contains("MemoryError"), "{}", err(&finished));
    let text = output::text(&finished, 8192, &in_force);
    assert!(
        text.contains("at most 128 MiB of memory per process (memory_mib)"),
        "{text}"
    );
    // Under its bound the same program runs.
    let fits = "python3 -c 'b = bytearray(32 * 1024 * 1024); print(\"allocated\")'";
    let finished = sh(&user, &home, fits, &in_force).await;
    assert_eq!(out(&finished), "allocated\n", "{}", err(&finished));
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_file_past_the_file_bound_ends_naming_the_bound() {
    support::require_root();
    let (user, home) = agent("cg-boundtest-file");
    let in_force = in_force(bounds(256, 1024, 1));
    let finished = sh(&user, &home, "head -c 3M /dev/zero > ~/big", &in_force).await;
    assert_eq!(
        finished.ending,
        Ending::Exited(128 + nix::libc::SIGXFSZ),
        "{}",
        err(&finished)
    );
    let text = output::text(&finished, 8192, &in_force);
    assert!(
        text.starts_with("killed by signal 25\n[bound met: a file reached the file-size bound of 1 MiB (max_file_mib)"),
        "{text}"
    );
    let size = std::fs::metadata(home.join("big")).expect("big").len();
    assert_eq!(size, 1024 * 1024, "the file stopped at its bound");
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_the_tmpdir_cannot_be_filled_past_the_memory_bound() {
    support::require_root();
    let (user, home) = agent("cg-boundtest-tmp");
    let in_force = in_force(bounds(256, 32, 1024));
    let finished = sh(
        &user,
        &home,
        "head -c 100M /dev/zero > \"$TMPDIR/fill\"; stat -c %s \"$TMPDIR/fill\"",
        &in_force,
    )
    .await;
    let written: u64 = out(&finished).trim().parse().expect("a size");
    assert!(
        written <= 32 * 1024 * 1024,
        "the TMPDIR took {written} bytes past the 32 MiB memory bound"
    );
    assert!(
        err(&finished).contains("No space left on device"),
        "{}",
        err(&finished)
    );
}

/// A shell worker serving `agent` alone, without command cgroups, under
/// rlimits, as the service runs it.
fn worker(name: &str, user: &User, home: &Path) -> ShellWorker {
    let audit = root().join(format!("{name}.audit.jsonl"));
    let _ = std::fs::remove_file(&audit);
    let served: BTreeSet<String> = ["run".to_string()].into();
    let admission = Admission::new(
        "shell",
        GrantVerifier::new("shell", served.clone(), served),
        AuditLog::open(&audit, "shell").expect("audit log"),
    );
    ShellWorker {
        admission: Arc::new(admission),
        agents: BTreeMap::from([(
            name.to_string(),
            AgentUser {
                uid: user.uid.as_raw(),
                gid: user.gid.as_raw(),
                home: home.to_path_buf(),
                workspace: None,
            },
        )]),
        launcher: launcher(),
        namespaces: Vec::new(),
        cgroup_root: None,
        mechanisms: Mechanisms::RLIMITS,
        homes: Default::default(),
        reach: Vec::new(),
        landlock_floor: 1,
        landlock_abi: collegium_worker_shell::confine::kernel_abi(),
        commands: BTreeMap::new(),
    }
}

/// The text of a command's result through the worker.
async fn through(worker: &ShellWorker, agent: &str, command: &str, settings: &str) -> String {
    let result: ToolResult = worker
        .run_command(
            agent,
            &format!("call-{command}"),
            command.to_string(),
            &ShellSettings::parse(settings),
            Instant::now() + Duration::from_secs(60),
        )
        .await;
    match result.outcome {
        Some(Outcome::Success(Success { text, .. })) => text,
        other => panic!("`{command}`: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_home_over_its_cap_runs_shrink_only_until_enough_is_removed() {
    support::require_root();
    let name = "cg-boundtest-home";
    let (user, home) = agent(name);
    let worker = worker(name, &user, &home);
    let capped = r#"{"home_cap_mib": 1}"#;
    let filled = through(&worker, name, "head -c 3M /dev/zero > ~/big", capped).await;
    let lead = format!(
        "[home over its cap: your home, {}, holds 3.0 MiB; its cap is 1.0 MiB (home_cap_mib). Remove at least 2.1 MiB. Until it is under the cap every command runs shrink-only: no file can grow",
        home.display()
    );
    assert!(filled.starts_with(&lead), "{filled}");
    assert!(filled.contains("exit status 0"), "{filled}");
    // Over the cap: nothing grows, and the result leads with what to remove.
    let grown = through(&worker, name, "echo more > ~/small", capped).await;
    assert!(
        grown.starts_with(&lead.replace("shrink-only:", "shrink-only, as this one did:")),
        "{grown}"
    );
    assert!(
        grown.contains("[bound met: your home is over its cap, so no file may grow"),
        "{grown}"
    );
    assert_eq!(
        std::fs::metadata(home.join("small")).expect("small").len(),
        0
    );
    // Removing is allowed, and brings the home back under its cap.
    let removed = through(&worker, name, "rm ~/big ~/small", capped).await;
    assert!(
        removed.starts_with(&format!(
            "[home under its cap again: this command ran shrink-only; your home, {}, now holds",
            home.display()
        )),
        "{removed}"
    );
    let normal = through(
        &worker,
        name,
        "head -c 1000 /dev/zero > ~/ok && stat -c %s ~/ok",
        capped,
    )
    .await;
    assert_eq!(
        normal, "exit status 0\n[stdout]\n1000\n[stderr: empty]\n",
        "a later command runs normally"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_home_that_cannot_be_measured_whole_counts_as_over_and_says_why() {
    support::require_root();
    let name = "cg-boundtest-hide";
    let (user, home) = agent(name);
    let worker = worker(name, &user, &home);
    let hidden = through(
        &worker,
        name,
        "mkdir ~/hidden && head -c 2M /dev/zero > ~/hidden/big && chmod 000 ~/hidden",
        r#"{"home_cap_mib": 1}"#,
    )
    .await;
    assert!(
        hidden.starts_with("[home over its cap: your home, ")
            && hidden.contains(
                "could not be measured whole: 1 of its directories cannot be read by your own user (make them readable with chmod u+rwx)"
            ),
        "{hidden}"
    );
    let shown = through(
        &worker,
        name,
        "chmod 700 ~/hidden",
        r#"{"home_cap_mib": 1}"#,
    )
    .await;
    assert!(
        shown.contains("holds 2.0 MiB; its cap is 1.0 MiB"),
        "measured whole once readable: {shown}"
    );
}

/// Under rlimits the process bound counts every process of the agent's
/// user on the host: a launch refused because the agent's other command
/// already holds it names the bound, not a confinement step (§6.1).
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_launch_refused_at_the_users_process_bound_names_the_bound() {
    support::require_root();
    let (user, home) = agent("cg-boundtest-full");
    let uid = user.uid.as_raw();
    let holding = in_force(bounds(256, 1024, 1024));
    let holder = {
        let (user, home) = (user.clone(), home.clone());
        tokio::spawn(async move {
            sh(
                &user,
                &home,
                "for i in $(seq 10); do sleep 3 & done; wait",
                &holding,
            )
            .await
        })
    };
    let until = Instant::now() + Duration::from_secs(5);
    while tasks_of(uid) < 12 && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(tasks_of(uid) >= 12, "the other command holds its processes");
    let refused = sh(&user, &home, "echo ran", &in_force(bounds(8, 1024, 1024))).await;
    match &refused.ending {
        Ending::Refused(reason) => assert!(
            reason.contains("the agent's user is at its process bound of 8 (max_processes)"),
            "{reason}"
        ),
        other => panic!("{other:?}: {}", out(&refused)),
    }
    holder.await.expect("the other command");
}
