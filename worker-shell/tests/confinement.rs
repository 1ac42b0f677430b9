//! The confinement matrix (A2, §6.1), against the real launcher with real
//! OS users, owners and modes. Every escape attempt is refused; everyday
//! commands work; the command's bytes reach bash unchanged; output floods
//! are bounded; a deadline kills what double-forked. CI runs as root; as
//! anyone else the launcher refuses, and that refusal is what is checked.

use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

use collegium_worker_shell::request::LaunchRequest;
use collegium_worker_shell::run::{CommandCgroup, Ending, Finished, run};
use nix::unistd::{Group, User};
use support::{dir, ensure_user, err, file, launcher, out};

mod support;

const AGENT: &str = "cg-shelltest-a";
const OTHER: &str = "cg-shelltest-b";

/// The host as the provisioner would leave it, made once per test binary.
struct Host {
    root: PathBuf,
    agent: User,
    other: User,
}

impl Host {
    fn home(&self, user: &str) -> PathBuf {
        self.root.join("homes").join(user)
    }
    fn workspace(&self) -> PathBuf {
        self.root.join("workspaces").join(AGENT)
    }
}

fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(|| {
        let agent = ensure_user(AGENT);
        let other = ensure_user(OTHER);
        let root = std::env::temp_dir().join(format!("collegium-shell-{}", std::process::id()));
        dir(&root, 0, 0, 0o755);
        dir(&root.join("framework"), 0, 0, 0o750);
        file(
            &root.join("framework/collegium.toml"),
            "secret = 1\n",
            0,
            0,
            0o640,
        );
        dir(&root.join("state"), 0, 0, 0o700);
        file(&root.join("state/collegium.db"), "store", 0, 0, 0o600);
        file(&root.join("state/collegium.db-wal"), "wal", 0, 0, 0o600);
        dir(&root.join("homes"), 0, 0, 0o755);
        dir(&root.join("workspaces"), 0, 0, 0o755);
        let (a, b) = (&agent, &other);
        dir(
            &root.join("homes").join(AGENT),
            a.uid.as_raw(),
            a.gid.as_raw(),
            0o700,
        );
        dir(
            &root.join("homes").join(OTHER),
            b.uid.as_raw(),
            b.gid.as_raw(),
            0o700,
        );
        file(
            &root.join("homes").join(OTHER).join("secret"),
            "b's",
            b.uid.as_raw(),
            b.gid.as_raw(),
            0o600,
        );
        let workspace = root.join("workspaces").join(AGENT);
        dir(&workspace, 0, a.gid.as_raw(), 0o2750);
        file(
            &workspace.join("report.txt"),
            "from the daemon\n",
            0,
            a.gid.as_raw(),
            0o640,
        );
        // A set-user-ID copy of `id` the agent may run: under
        // no-new-privileges it must not make it root.
        let suid = root.join("homes").join(AGENT).join("suid-id");
        std::fs::copy("/usr/bin/id", &suid).expect("copy id");
        chown(&suid, Some(0), Some(0)).expect("chown");
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).expect("chmod");
        Host { root, agent, other }
    })
}

fn request(command: &str) -> LaunchRequest {
    let host = host();
    LaunchRequest {
        uid: host.agent.uid.as_raw(),
        gid: host.agent.gid.as_raw(),
        groups: vec![host.agent.gid.as_raw()],
        home: host.home(AGENT),
        workspace: Some(host.workspace()),
        command: command.to_string(),
        cgroup: None,
        landlock_floor: 1,
        limits: Default::default(),
        nonce: String::new(),
    }
}

async fn sh(command: &str) -> Finished {
    run(
        &launcher(),
        &request(command),
        None,
        Duration::from_secs(30),
    )
    .await
    .expect("ran")
}

/// Runs `command`, which must fail; what it said.
async fn refused(command: &str) -> String {
    let finished = sh(command).await;
    assert!(
        matches!(finished.ending, Ending::Exited(code) if code != 0),
        "`{command}` should have been refused: {:?} out {} err {}",
        finished.ending,
        out(&finished),
        err(&finished)
    );
    err(&finished)
}

/// The launcher started as `user`: a copy `user` may run (the build's own
/// may sit under a directory only root traverses), behind `setpriv`.
fn launcher_as(root: &Path, user: &User) -> PathBuf {
    let at = root.join("launcher-as-user");
    dir(&at, 0, 0, 0o755);
    let copy = at.join("collegium-shell-launch");
    std::fs::copy(launcher(), &copy).expect("copy the launcher");
    std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let wrapper = at.join("as-user");
    file(
        &wrapper,
        &format!(
            "#!/bin/sh\nexec setpriv --reuid={} --regid={} --clear-groups {} \"$@\"\n",
            user.uid.as_raw(),
            user.gid.as_raw(),
            copy.display()
        ),
        0,
        0,
        0o755,
    );
    wrapper
}

/// A2: the launcher drops to an agent's user itself, so it refuses to run
/// unless it starts as root. The test, as root, starts it as the agent's
/// user, the one a command could try to start it as.
#[tokio::test(flavor = "multi_thread")]
async fn a2_as_anyone_but_root_the_launcher_refuses_to_run() {
    support::require_root();
    let host = host();
    let as_agent = launcher_as(&host.root, &host.agent);
    let finished = run(&as_agent, &request("id"), None, Duration::from_secs(10))
        .await
        .expect("ran");
    assert!(
        matches!(&finished.ending, Ending::Refused(r) if r.contains("must start as root")),
        "{:?}",
        finished.ending
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_inside_the_shell_no_capability_is_left_and_no_new_privileges_is_set() {
    support::require_root();
    let status = out(&sh("cat /proc/self/status").await);
    for set in ["CapInh", "CapPrm", "CapEff", "CapAmb"] {
        assert!(
            status.contains(&format!("{set}:\t0000000000000000")),
            "{set}: {status}"
        );
    }
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    let ids = out(&sh("id -u; id -g; id -G").await);
    let host = host();
    assert_eq!(
        ids,
        format!(
            "{0}\n{1}\n{1}\n",
            host.agent.uid.as_raw(),
            host.agent.gid.as_raw()
        )
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_every_escape_is_refused() {
    support::require_root();
    let host = host();
    let root = host.root.display();
    let other = host.home(OTHER);
    let other = other.display();
    let workspace = host.workspace();
    let workspace = workspace.display();
    // The framework's tree, its configuration, the store and its WAL.
    refused(&format!("cat {root}/framework/collegium.toml")).await;
    refused(&format!("ls {root}/framework")).await;
    refused(&format!("cat {root}/state/collegium.db")).await;
    refused(&format!("cat {root}/state/collegium.db-wal")).await;
    // Another agent's home.
    refused(&format!("ls {other}")).await;
    refused(&format!("cat {other}/secret")).await;
    refused(&format!("cat ~/../{OTHER}/secret")).await;
    // Its own workspace is read-only.
    assert_eq!(
        out(&sh(&format!("cat {workspace}/report.txt")).await),
        "from the daemon\n"
    );
    refused(&format!("echo x > {workspace}/new.txt")).await;
    refused(&format!("rm -f {workspace}/report.txt")).await;
    refused(&format!("mkdir {workspace}/d")).await;
    // Nothing outside its home and its private TMPDIR is writable.
    refused("touch /tmp/collegium-escape-$$").await;
    refused("touch /var/tmp/collegium-escape-$$").await;
    refused(&format!("touch {root}/escape")).await;
    // Symbolic links and `..` lead nowhere new.
    refused(&format!(
        "ln -sf {root}/state/collegium.db ~/db && cat ~/db"
    ))
    .await;
    refused(&format!("cat {workspace}/../../state/collegium.db")).await;
    // /proc leaks nothing: no inherited descriptor, no other root.
    let fds = out(&sh("ls /proc/self/fd").await);
    assert_eq!(
        fds.split_whitespace().count(),
        4,
        "0, 1, 2 and ls's own: {fds}"
    );
    refused("cat /proc/1/root/etc/shadow").await;
    refused("cat /proc/1/environ").await;
    // A set-user-ID binary gives nothing under no-new-privileges.
    assert_eq!(
        out(&sh("~/suid-id -u").await).trim(),
        host.agent.uid.as_raw().to_string()
    );
    refused("su -c id root </dev/null").await;
    // Another user's process can be neither signalled nor traced.
    let mut sleeper = Command::new("sleep")
        .arg("60")
        .spawn()
        .expect("a root process");
    let pid = sleeper.id();
    refused(&format!("kill -0 {pid}")).await;
    refused(&format!("cat /proc/{pid}/mem")).await;
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    // A user namespace grants nothing the agent could not already reach.
    refused(&format!("unshare -U -r cat {root}/state/collegium.db")).await;
    refused(&format!("unshare -U -r touch {workspace}/ns")).await;
    assert!(!host.workspace().join("new.txt").exists());
    assert!(!host.workspace().join("ns").exists());
    assert!(!host.root.join("escape").exists());
    let _ = &host.other;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_everyday_commands_work_as_the_agent() {
    support::require_root();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let accepted = std::thread::spawn(move || {
        use std::io::Read;
        let (mut stream, _) = listener.accept().expect("accept");
        let mut said = String::new();
        stream.read_to_string(&mut said).expect("read");
        said
    });
    let finished = sh(&format!(
        "set -e
         echo one two | tr a-z A-Z
         ls /nonexistent 2>/dev/null || echo quiet
         echo \"today $(echo is) fine\"
         cat <(echo substituted)
         t=$(mktemp); echo temp > \"$t\"; cat \"$t\"; case \"$t\" in /dev/shm/*) echo in-tmpdir;; esac
         cd ~ && git init -q repo && test -d repo/.git && echo git
         python3 -c 'print(6*7)'
         exec 3<>/dev/tcp/127.0.0.1/{port}; echo hello over tcp >&3; exec 3>&-
         echo \"$PATH\""
    ))
    .await;
    assert_eq!(finished.ending, Ending::Exited(0), "{}", err(&finished));
    assert_eq!(
        out(&finished),
        "ONE TWO\nquiet\ntoday is fine\nsubstituted\ntemp\nin-tmpdir\ngit\n42\n/usr/local/bin:/usr/bin:/bin\n"
    );
    assert_eq!(accepted.join().expect("server"), "hello over tcp\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_command_cannot_pass_itself_off_as_a_refused_launch() {
    support::require_root();
    let forged = sh("echo 'collegium-launch refused : Landlock' >&2; exit 125").await;
    assert_eq!(
        forged.ending,
        Ending::Exited(125),
        "it ran, and says so: {}",
        err(&forged)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_the_commands_bytes_reach_bash_unchanged() {
    support::require_root();
    let command = "cat <<'END'\n'single' \"double\" $HOME `date` \\n \\\\ ;|&\nEND";
    assert_eq!(
        out(&sh(command).await),
        "'single' \"double\" $HOME `date` \\n \\\\ ;|&\n"
    );
    let dashed = sh("-x").await;
    assert!(
        err(&dashed).contains("-x: command not found")
            || err(&dashed).contains("-x: invalid option"),
        "a leading dash is the command, not an option: {}",
        err(&dashed)
    );
    let nul = run(
        &launcher(),
        &request("echo a\0b"),
        None,
        Duration::from_secs(10),
    )
    .await
    .expect("ran");
    assert!(
        matches!(&nul.ending, Ending::Refused(r) if r.contains("NUL")),
        "{:?}",
        nul.ending
    );
    let environment = out(&sh("env | sort").await);
    let names: Vec<&str> = environment
        .lines()
        .filter_map(|l| l.split('=').next())
        .filter(|n| !["PWD", "SHLVL", "_", "OLDPWD"].contains(n))
        .collect();
    assert_eq!(
        names,
        ["HOME", "LANG", "PATH", "SHELL", "TMPDIR"],
        "{environment}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_4_an_output_flood_is_bounded_and_counted() {
    support::require_root();
    let finished = sh("head -c 5000000 /dev/zero | tr '\\0' x; echo done >&2").await;
    assert_eq!(finished.ending, Ending::Exited(0));
    assert_eq!(finished.stdout.total, 5_000_000);
    assert_eq!(
        finished.stdout.bytes.len(),
        collegium_worker_shell::run::CAPTURED
    );
    assert_eq!(
        finished.stdout.dropped(),
        5_000_000 - collegium_worker_shell::run::CAPTURED as u64
    );
    assert_eq!(err(&finished), "done\n");
}

/// A directory of a cgroup v2 hierarchy the test may use: the host's own
/// where it runs v2, else one mounted for the purpose.
fn cgroup_root() -> PathBuf {
    let unified = PathBuf::from("/sys/fs/cgroup/unified");
    for candidate in [PathBuf::from("/sys/fs/cgroup"), unified.clone()] {
        if candidate.join("cgroup.controllers").exists() {
            let ours = candidate.join("collegium-test");
            let _ = std::fs::create_dir(&ours);
            return ours;
        }
    }
    std::fs::create_dir_all(&unified).expect("mount point");
    let mounted = Command::new("mount")
        .args(["-t", "cgroup2", "none"])
        .arg(&unified)
        .status()
        .expect("mount");
    assert!(mounted.success(), "mounting a cgroup v2 hierarchy");
    let ours = unified.join("collegium-test");
    let _ = std::fs::create_dir(&ours);
    ours
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_deadline_kills_the_command_and_what_double_forked_from_it() {
    support::require_root();
    let marker = format!("collegium-grandchild-{}", std::process::id());
    let cgroup = CommandCgroup::create(&cgroup_root(), &marker).expect("cgroup");
    let mut request = request(&format!(
        "(setsid bash -c 'exec -a {marker} sleep 300' &) ; sleep 300"
    ));
    request.cgroup = Some(cgroup.path().to_path_buf());
    let started = std::time::Instant::now();
    let finished = run(&launcher(), &request, Some(&cgroup), Duration::from_secs(1))
        .await
        .expect("ran");
    assert_eq!(finished.ending, Ending::Killed);
    assert!(started.elapsed() < Duration::from_secs(10));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let survivors = Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .expect("pgrep");
    assert!(
        survivors.stdout.is_empty(),
        "a double-forked grandchild survived: {}",
        String::from_utf8_lossy(&survivors.stdout)
    );
    drop(cgroup);
    let _ = Group::from_name(AGENT);
}

/// A launch of `command` as the other agent, whose home holds nothing of
/// the first's.
fn other_request(command: &str) -> LaunchRequest {
    let host = host();
    LaunchRequest {
        uid: host.other.uid.as_raw(),
        gid: host.other.gid.as_raw(),
        groups: vec![host.other.gid.as_raw()],
        home: host.home(OTHER),
        workspace: None,
        command: command.to_string(),
        cgroup: None,
        landlock_floor: 1,
        limits: Default::default(),
        nonce: String::new(),
    }
}

/// Runs `request` while the test goes on; aborting the task kills the
/// launcher, and the command's namespace with it.
fn in_background(request: LaunchRequest) -> tokio::task::JoinHandle<Finished> {
    tokio::spawn(async move {
        run(&launcher(), &request, None, Duration::from_secs(30))
            .await
            .expect("ran")
    })
}

/// Polls `check` until it holds, for at most ten seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_command_sees_only_its_own_processes() {
    support::require_root();
    // Another agent's command, running, with a secret in its arguments.
    let marker = format!("collegium-secret-{}", std::process::id());
    let other = in_background(other_request(&format!("exec -a {marker} sleep 30")));
    eventually("the other agent's command started", || {
        Command::new("pgrep")
            .args(["-f", &marker])
            .output()
            .is_ok_and(|o| !o.stdout.is_empty())
    })
    .await;
    let listing = out(&sh("ps -e -o pid=,args=").await);
    let strangers: Vec<&str> = listing
        .lines()
        .map(str::trim)
        .filter(|line| {
            !(line.starts_with("1 ") && line.ends_with("/collegium-shell-launch launch"))
        })
        .filter(|line| !line.contains("ps -e -o pid=,args="))
        .collect();
    assert!(
        strangers.is_empty(),
        "the namespace's init and the command alone: {listing}"
    );
    let seen = out(&sh("cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '").await);
    assert!(!seen.contains(&marker), "{seen}");
    assert!(!seen.contains("cargo") && !seen.contains("serve"), "{seen}");
    let first = out(&sh("tr '\\0' ' ' </proc/1/cmdline").await);
    assert!(
        first.contains("launch"),
        "pid 1 is the command's own: {first}"
    );
    // Nor by the number the host knows it by.
    let pgrep = Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .expect("pgrep");
    for pid in String::from_utf8_lossy(&pgrep.stdout).split_whitespace() {
        let probe = out(&sh(&format!("tr '\\0' ' ' </proc/{pid}/cmdline; true")).await);
        assert!(!probe.contains(&marker), "pid {pid}: {probe}");
    }
    other.abort();
    let _ = Command::new("pkill").args(["-f", &marker]).status();
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_sysv_ipc_dies_with_the_command_and_is_invisible_to_others() {
    support::require_root();
    let made = sh("ipcmk -M 4096 >/dev/null && ipcmk -S 1 >/dev/null && ipcmk -Q >/dev/null && ipcs -m -s -q | grep -c 0x").await;
    assert_eq!(out(&made).trim(), "3", "{}", err(&made));
    // Made by a command still running, seen by no one else's.
    let ready = host().home(AGENT).join("ipc-ready");
    let _ = std::fs::remove_file(&ready);
    let holder = in_background(request(
        "ipcmk -M 4096 >/dev/null && touch ~/ipc-ready && sleep 30",
    ));
    eventually("the holder made its segment", || ready.exists()).await;
    let seen = out(&run(
        &launcher(),
        &other_request("ipcs -m -s -q | grep -c 0x; true"),
        None,
        Duration::from_secs(30),
    )
    .await
    .expect("ran"));
    assert_eq!(seen.trim(), "0", "another agent sees the segment: {seen}");
    let later = out(&sh("ipcs -m -s -q | grep -c 0x; true").await);
    assert_eq!(
        later.trim(),
        "0",
        "a later command sees what an earlier left: {later}"
    );
    // Dropping the run kills its launcher, and the namespace with it.
    holder.abort();
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_commands_tmpdir_is_a_private_tmpfs_gone_when_it_ends() {
    support::require_root();
    let first = sh("set -e; test -z \"$(ls -A \"$TMPDIR\")\" && echo empty
         stat -f -c %T \"$TMPDIR\"; stat -c %a \"$TMPDIR\"
         echo left > \"$TMPDIR/left\"; cat \"$TMPDIR/left\"")
    .await;
    assert_eq!(first.ending, Ending::Exited(0), "{}", err(&first));
    assert_eq!(out(&first), "empty\ntmpfs\n700\nleft\n");
    // Neither a later command of the same agent nor another agent's
    // command finds what it left.
    let later = sh("ls -A \"$TMPDIR\"").await;
    assert_eq!(out(&later), "", "{}", err(&later));
    let other = run(
        &launcher(),
        &other_request("ls -A \"$TMPDIR\""),
        None,
        Duration::from_secs(30),
    )
    .await
    .expect("ran");
    assert_eq!(out(&other), "", "{}", err(&other));
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_replacing_the_old_tmp_directory_with_a_file_breaks_no_later_command() {
    support::require_root();
    let broke = sh("rm -rf ~/.tmp; echo not a directory > ~/.tmp").await;
    assert_eq!(broke.ending, Ending::Exited(0), "{}", err(&broke));
    let later = sh("t=$(mktemp) && echo fine > \"$t\" && cat \"$t\"").await;
    assert_eq!(later.ending, Ending::Exited(0), "{}", err(&later));
    assert_eq!(out(&later), "fine\n");
    let _ = std::fs::remove_file(host().home(AGENT).join(".tmp"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_a_command_cannot_reach_an_abstract_socket_made_outside_it() {
    support::require_root();
    if collegium_worker_shell::confine::kernel_abi() < 6 {
        // Scoping came with Landlock ABI 6; below it the network namespace
        // the command shares is all that holds (docs/workers.md).
        return;
    }
    // A listener outside the command's domain, as a daemon or another
    // agent's program would make one: abstract sockets have no path, so no
    // file mode guards them.
    let name = format!("collegium-confinement-{}", std::process::id());
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let address = SocketAddr::from_abstract_name(name.as_bytes()).expect("an abstract name");
    let listener = UnixListener::bind_addr(&address).expect("an abstract listener");
    let connect = format!(
        "python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect(\"\\0{name}\"); print(\"connected\")'"
    );
    let said = refused(&connect).await;
    assert!(said.contains("PermissionError"), "{said}");
    drop(listener);
}
