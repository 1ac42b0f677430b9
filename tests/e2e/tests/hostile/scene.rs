//! The stage the hostile commands run on (A2, §6.1): a host provisioned for
//! two shell agents, the real shell worker started as root the way the
//! shipped unit starts it, the daemon's own client connected to it through
//! `workers::framework::connect` (so the worker is held to the sandbox the
//! daemon holds it to), a real store holding an approval for every call,
//! and victims a hostile command would go after: the daemon's store,
//! configuration and audit log, the other agent's home, and processes
//! outside the command holding secrets. The daemon's side of each call is
//! `caller`.

use std::os::unix::fs::{PermissionsExt, chown};
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::time::{Duration, Instant};

use collegium_control::store::{Store, StoreHandle};
use collegium_proto::toolset::v1::HealthRequest;
use collegium_worker_kit::grant::GrantSigner;
use e2e::{ADMIN_PASSWORD, Harness};

use crate::caller::open_turns;
pub use crate::caller::{Agent, Caller, Ran};
use e2e::shell_worker::ShellWorker;

/// The secrets the victims hold; no attempt's result may show one.
pub struct Secrets {
    /// In the other agent's running command's environment, and so in the
    /// store's record of what was approved.
    pub theo_token: String,
    /// In that command's arguments.
    pub theo_argv: String,
    /// In a file of the other agent's home, mode 0600.
    pub theo_file: String,
    /// In a POSIX shared memory file the other agent's command made.
    pub theo_shm: String,
    /// In the worker's own environment.
    pub worker_env: String,
}

/// Where the victims are.
pub struct Paths {
    pub roots: PathBuf,
    pub config: PathBuf,
    pub state: PathBuf,
    pub store: PathBuf,
    pub audit_log: PathBuf,
    pub worker_socket: PathBuf,
    pub homes: PathBuf,
    pub mira_home: PathBuf,
    pub theo_home: PathBuf,
    pub workspace: PathBuf,
    /// A file the daemon wrote into mira's workspace, readable, not writable.
    pub notes: PathBuf,
}

/// Processes outside every command, as the host numbers them.
pub struct Pids {
    pub worker: u32,
    /// This process: the daemon's side of the socket.
    pub daemon: u32,
    /// The other agent's running approved command, holding its secrets.
    pub theo_holder: u32,
    /// Mira's running approved command, listening on an abstract socket.
    pub mira_holder: u32,
    /// A process of mira's own user that no command of hers started.
    pub mira_outside: u32,
    /// A process of root's.
    pub root_outside: u32,
}

pub struct Scene {
    pub paths: Paths,
    pub secrets: Secrets,
    pub pids: Pids,
    /// An abstract Unix socket root listens on outside every command.
    pub root_abstract: String,
    pub root_listener: UnixListener,
    /// An abstract Unix socket mira's own running command listens on.
    pub mira_abstract: String,
    pub mira_uid: u32,
    /// The daemon's callback port, which the host's rule keeps agents off.
    pub callback_port: u16,
    caller: Arc<Caller>,
    _process: ShellWorker,
    outside: Vec<Child>,
    holders: Vec<tokio::task::JoinHandle<Ran>>,
    /// The callback listener, bound as the daemon binds it before the
    /// handshake, so the worker's reach probe finds the port live (§6.4).
    _callback: std::net::TcpListener,
    _harness: Harness,
}

/// The commands the two holders run: each waits for its stop file.
const READY: &str = ".holder-ready";
const STOP: &str = ".holder-stop";

impl Scene {
    /// The stage, as root. Panics where any piece cannot be set up: an
    /// attempt against a stage that is not there would prove nothing.
    pub async fn set_up() -> Self {
        let h = Harness::start().await;
        let roots = std::env::temp_dir().join(format!("collegium-hostile-{}", std::process::id()));
        deploy_both_shells(&h, &roots);
        collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
        let loaded = h.loaded();
        let layout = collegium_control::host::layout(&loaded, "collegium").expect("layout");
        let place = |agent: &str| {
            layout
                .agents
                .iter()
                .find(|p| p.agent == agent)
                .cloned()
                .expect("an agent's place")
        };
        let (mira, theo) = (place("mira"), place("theo"));
        let mira_user = user(&Agent::Mira.os_user());
        let theo_user = user(&Agent::Theo.os_user());
        let tag = format!("{:x}", std::process::id());
        let secrets = Secrets {
            theo_token: format!("tok-theo-{tag}-9f3c"),
            theo_argv: format!("argv-theo-{tag}-71ab"),
            theo_file: format!("file-theo-{tag}-c0de"),
            theo_shm: format!("shm-theo-{tag}-5eed"),
            worker_env: format!("env-worker-{tag}-beef"),
        };
        let theo_home = theo.home.clone().expect("theo's home");
        let mira_home = mira.home.clone().expect("mira's home");
        let workspace = mira.workspace.clone().expect("mira's workspace");
        write_owned(
            &theo_home.join("secret.txt"),
            &secrets.theo_file,
            theo_user.uid.as_raw(),
            theo_user.gid.as_raw(),
            0o600,
        );
        let daemon = user(&layout.daemon_user);
        let notes = workspace.join("notes.txt");
        write_owned(
            &notes,
            "from the daemon\n",
            daemon.uid.as_raw(),
            mira_user.gid.as_raw(),
            0o640,
        );
        // A set-user-ID copy of `id`, root's, where mira may run it.
        let suid = mira_home.join("suid-id");
        std::fs::copy("/usr/bin/id", &suid).expect("copy id");
        chown(&suid, Some(0), Some(0)).expect("chown");
        std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).expect("chmod");

        let store_path = layout.state_dir.join("collegium.db");
        let store = StoreHandle::spawn(Store::open(&store_path).expect("the store"))
            .expect("the store's thread");
        open_turns(&store).await;
        let process =
            start_worker(&h.config, &secrets.worker_env).expect("the shell worker started");
        let worker_pid = process.0.id();
        let callback = std::net::TcpListener::bind(loaded.config.callbacks.bind)
            .expect("the callback port, bound as the daemon binds it");
        let signer = GrantSigner::generate("boot-hostile");
        let workers = collegium_control::workers::framework::connect(
            &loaded,
            &collegium_control::tools::Registry::framework(),
            &signer,
        )
        .await
        .unwrap_or_else(|e| panic!("the daemon's handshake with the shell worker: {e}"));
        let worker = workers.get("shell").cloned().expect("the shell worker");

        let root_abstract = format!("collegium-hostile-root-{tag}");
        let root_listener = abstract_listener(&root_abstract);
        let mut outside = Vec::new();
        let mira_outside = Command::new("sleep")
            .arg(format!("{}.11", 4000 + std::process::id() % 1000))
            .uid(mira_user.uid.as_raw())
            .gid(mira_user.gid.as_raw())
            .spawn()
            .expect("mira's outside process");
        let root_outside = Command::new("sleep")
            .arg(format!("{}.22", 4000 + std::process::id() % 1000))
            .spawn()
            .expect("root's outside process");
        let (mira_outside_pid, root_outside_pid) = (mira_outside.id(), root_outside.id());
        outside.push(mira_outside);
        outside.push(root_outside);

        let mut scene = Self {
            paths: Paths {
                config: h.config.clone(),
                state: layout.state_dir.clone(),
                store: store_path,
                audit_log: layout.audit_dir.join("shell/shell.audit.jsonl"),
                worker_socket: layout.runtime_dir.join("shell/toolset.sock"),
                homes: layout.homes_root.clone(),
                mira_home,
                theo_home,
                workspace,
                notes,
                roots,
            },
            secrets,
            pids: Pids {
                worker: worker_pid,
                daemon: std::process::id(),
                theo_holder: 0,
                mira_holder: 0,
                mira_outside: mira_outside_pid,
                root_outside: root_outside_pid,
            },
            root_abstract,
            root_listener,
            mira_abstract: format!("collegium-hostile-mira-{tag}"),
            mira_uid: mira_user.uid.as_raw(),
            caller: Arc::new(Caller {
                worker,
                store,
                signer,
                calls: AtomicU32::new(0),
            }),
            _process: process,
            outside,
            holders: Vec::new(),
            callback_port: loaded.config.callbacks.bind.port(),
            _callback: callback,
            _harness: h,
        };
        scene.start_holders().await;
        scene
    }

    /// Sends `command` as `agent`'s approved `shell::run` (see [`Caller`]).
    pub async fn run(&self, agent: Agent, command: &str, deadline: Duration) -> Ran {
        self.caller.run(agent, command, deadline).await
    }

    /// The daemon's side, for calls made from other tasks.
    pub fn caller(&self) -> Arc<Caller> {
        self.caller.clone()
    }

    /// The worker's Health, asked over a connection of its own.
    pub async fn health(&self) -> bool {
        let Ok(mut client) =
            collegium_worker_kit::client::connect(&self.paths.worker_socket, Some(0)).await
        else {
            return false;
        };
        client
            .health(HealthRequest::default())
            .await
            .is_ok_and(|r| r.into_inner().ready)
    }

    /// Whether the worker process is still running.
    pub fn worker_alive(&self) -> bool {
        alive(self.pids.worker)
    }

    /// Starts the two long-running approved commands the attempts go after:
    /// theo's, carrying a credential in its environment and arguments and
    /// holding SysV IPC objects and a shared-memory file; and one of mira's
    /// own, listening on an abstract Unix socket.
    async fn start_holders(&mut self) {
        let theo = format!(
            "export DEPLOY_TOKEN={token}
ipcmk -M 65536 >/dev/null && ipcmk -S 1 >/dev/null && ipcmk -Q >/dev/null
echo {shm} > /dev/shm/theo-notes
: > ~/{READY}
exec -a 'deploy --token={argv}' bash -c 'until [ -e ~/{STOP} ]; do sleep 0.1; done; echo holder done'",
            token = self.secrets.theo_token,
            shm = self.secrets.theo_shm,
            argv = self.secrets.theo_argv,
        );
        let mira = format!(
            "python3 -c '
import os, socket, time
s = socket.socket(socket.AF_UNIX)
s.bind(b\"\\0{name}\")
s.listen(8)
s.setblocking(False)
open(os.path.expanduser(\"~/{READY}\"), \"w\").close()
accepted = 0
while not os.path.exists(os.path.expanduser(\"~/{STOP}\")):
    try:
        s.accept()
        accepted += 1
    except BlockingIOError:
        time.sleep(0.1)
print(\"accepted\", accepted)
'",
            name = self.mira_abstract
        );
        for (agent, command, home) in [
            (Agent::Theo, theo, self.paths.theo_home.clone()),
            (Agent::Mira, mira, self.paths.mira_home.clone()),
        ] {
            let _ = std::fs::remove_file(home.join(READY));
            let _ = std::fs::remove_file(home.join(STOP));
            let caller = self.caller.clone();
            self.holders.push(tokio::spawn(async move {
                caller.run(agent, &command, Duration::from_secs(170)).await
            }));
            eventually(&format!("{agent:?}'s holder is ready"), || {
                home.join(READY).exists()
            })
            .await;
        }
        let argv = self.secrets.theo_argv.clone();
        let mut found = None;
        eventually("theo's holder shows on the host", || {
            // After its exec: before it, bash's environment holds no token.
            found = pid_where(|cmdline| {
                cmdline.starts_with("deploy --token=") && cmdline.contains(&argv)
            });
            found.is_some()
        })
        .await;
        self.pids.theo_holder = found.unwrap_or_default();
        let name = self.mira_abstract.clone();
        self.pids.mira_holder =
            pid_where(|cmdline| cmdline.starts_with("python3") && cmdline.contains(&name))
                .expect("mira's holder shows on the host");
        // The victim really holds what the attempts go after: root sees it.
        let environ =
            std::fs::read(format!("/proc/{}/environ", self.pids.theo_holder)).expect("environ");
        assert!(
            String::from_utf8_lossy(&environ).contains(&self.secrets.theo_token),
            "theo's holder carries its token"
        );
    }

    /// Stops the holders and gives their results: each must have run to its
    /// own end, untouched by every attempt.
    pub async fn stop_holders(&mut self) -> Vec<(Agent, Ran)> {
        for home in [&self.paths.theo_home, &self.paths.mira_home] {
            std::fs::write(home.join(STOP), "").expect("the stop file");
        }
        let mut ended = Vec::new();
        for (agent, holder) in [Agent::Theo, Agent::Mira]
            .into_iter()
            .zip(std::mem::take(&mut self.holders))
        {
            ended.push((agent, holder.await.expect("the holder's task")));
        }
        ended
    }

    /// Ends what the scene started outside the worker and removes its tree.
    pub fn tear_down(&mut self) {
        for child in &mut self.outside {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_dir_all(&self.paths.roots);
    }

    /// What `path` holds on the host, for checks that it did not change.
    pub fn host_bytes(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap_or_default()
    }

    pub fn admin_password() -> &'static str {
        ADMIN_PASSWORD
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        // A failed run still ends the holders before their homes go and
        // the worker stops (it waits for the calls it is serving).
        for home in [&self.paths.theo_home, &self.paths.mira_home] {
            let _ = std::fs::write(home.join(STOP), "");
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while [self.pids.theo_holder, self.pids.mira_holder]
            .iter()
            .any(|pid| *pid != 0 && alive(*pid))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(50));
        }
        self.tear_down();
    }
}

/// The harness's deployment with both agents holding the shell, their
/// homes and workspaces under `roots` (the harness's own directory becomes
/// the configuration's, closed to agents), and `nobody` as the daemon's
/// user.
fn deploy_both_shells(h: &Harness, roots: &Path) {
    h.agent_roots_at(roots);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text
        .replacen(
            "grants = [\"workspace\"]",
            "grants = [\"workspace\", \"shell\"]",
            1,
        )
        .replacen("grants = [\"ask\"]", "grants = [\"ask\", \"shell\"]", 1);
    std::fs::write(&h.config, text).expect("write config");
}

/// The shell worker, started as the shipped unit starts it (no
/// `--cgroup-root`: it finds the host's hierarchy; the unit's Landlock
/// floor), allowing this process's uid, with a secret in its environment.
fn start_worker(config: &Path, secret: &str) -> Result<ShellWorker, String> {
    e2e::shell_worker::start(config, 3, &[("COLLEGIUM_HOSTILE_WORKER_SECRET", secret)])
}

/// The worker's answer when started by anyone but root.
pub fn worker_refusal_as_non_root() -> String {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("collegium.toml");
    std::fs::write(&config, "").expect("config");
    match start_worker(&config, "unused") {
        Ok(_) => String::from("it started"),
        Err(refusal) => refusal,
    }
}

fn user(name: &str) -> nix::unistd::User {
    nix::unistd::User::from_name(name)
        .expect("lookup")
        .unwrap_or_else(|| panic!("the user {name} exists"))
}

fn write_owned(path: &Path, text: &str, uid: u32, gid: u32, mode: u32) {
    std::fs::write(path, text).expect("write");
    chown(path, Some(uid), Some(gid)).expect("chown");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A listener on the abstract Unix socket `name`, which accepts nothing
/// until asked.
fn abstract_listener(name: &str) -> UnixListener {
    use std::os::linux::net::SocketAddrExt;
    let address =
        std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).expect("a name");
    let listener = UnixListener::bind_addr(&address).expect("an abstract listener");
    listener.set_nonblocking(true).expect("nonblocking");
    listener
}

/// Whether `pid` runs (a zombie has ended).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .and_then(|(_, after)| after.split_whitespace().next().map(str::to_string))
            .is_some_and(|state| state != "Z")
    })
}

/// A process's state letter (`S`, `T`, …), as the host sees it.
pub fn state(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, after)| after.split_whitespace().next().map(str::to_string))
        })
        .unwrap_or_default()
}

/// The first process on the host whose command line (NULs as spaces)
/// satisfies `wanted`.
pub fn pid_where(wanted: impl Fn(&str) -> bool) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|bytes| {
                !bytes.is_empty() && wanted(&String::from_utf8_lossy(&bytes).replace('\0', " "))
            })
        })
}

/// Polls `check` until it holds, for at most ten seconds.
pub async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "{what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
