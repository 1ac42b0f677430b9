//! The browser worker as the SSRF matrix starts it (§3.4, the SSRF matrix):
//! the real binary, inside the lab's worker namespace, as its own OS user
//! `collegium-browser`, reached over its socket with the daemon's own client
//! and signed grants, exactly as the daemon dispatches `web::fetch`.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use collegium_control::store::{Store, StoreHandle};
use collegium_control::tools::ToolsetDeclaration;
use collegium_control::workers::dispatch::{CallOutcome, Dispatch, Worker, WorkerSpec};
use collegium_control::workers::handshake::SandboxExpectation;
use collegium_proto::toolset::v1::tool_result::Outcome;
use collegium_worker_kit::grant::GrantSigner;
use nix::unistd::User;

use crate::binary;
use crate::ssrf_lab::Lab;

/// The OS user the browser worker runs as (`collegium-provision host` makes it).
pub const USER: &str = "collegium-browser";

/// The host the matrix's worker is told is closed (`--closed-host`).
pub const CLOSED_HOST: &str = "intranet.test";

/// How the worker is started: the configuration's `[web]` as its command
/// line carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub own_network_browsable: bool,
}

/// A running browser worker in the lab, stopped with SIGTERM when dropped.
pub struct BrowserWorker {
    process: Process,
    dirs: tempfile::TempDir,
    store: StoreHandle,
    signer: GrantSigner,
    worker: Worker,
    calls: AtomicU32,
}

/// The browser worker's user, made as `collegium-provision host` makes it
/// where this host lacks it.
pub fn user() -> Result<User, String> {
    let mut outcome = collegium_provision::host::Outcome::default();
    collegium_provision::host::framework_users::converge(&mut outcome)
        .map_err(|e| format!("making the framework workers' users: {e}"))?;
    User::from_name(USER)
        .map_err(|e| format!("looking up {USER}: {e}"))?
        .ok_or_else(|| format!("{USER} does not exist after making it"))
}

/// `dir/web`, the worker's own, closed to others but for `mode`.
fn worker_dir(parent: &Path, account: &User, mode: u32) -> Result<PathBuf, String> {
    let dir = parent.join("web");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    chown(&dir, Some(account.uid.as_raw()), Some(account.gid.as_raw()))
        .map_err(|e| format!("chown {}: {e}", dir.display()))?;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", dir.display()))?;
    Ok(dir)
}

/// A directory the worker's user may pass through to its own beneath.
fn passable(path: &Path) -> Result<(), String> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

/// The `web` toolset as the daemon declares it.
fn declaration() -> Result<ToolsetDeclaration, String> {
    collegium_control::tools::framework::declarations()
        .into_iter()
        .find(|d| d.namespace == "web")
        .ok_or_else(|| "the framework declares no `web` toolset".to_string())
}

impl BrowserWorker {
    /// Starts the worker inside `lab`'s worker namespace under `policy`,
    /// with `intranet.test` closed, and connects to it as the daemon does.
    /// The worker's stderr goes to a file the error quotes if it refuses.
    pub async fn start(lab: &Lab, policy: Policy) -> Result<Self, String> {
        let account = user()?;
        let dirs = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
        let runtime = dirs.path().join("run");
        let audit = dirs.path().join("log");
        for dir in [dirs.path(), &runtime, &audit] {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            passable(dir)?;
        }
        let socket_dir = worker_dir(&runtime, &account, 0o750)?;
        worker_dir(&audit, &account, 0o700)?;
        let process = spawn(lab, policy, dirs.path(), &account)?;
        let store = StoreHandle::spawn(
            Store::open(&dirs.path().join("collegium.db")).map_err(|e| format!("store: {e}"))?,
        )
        .map_err(|e| format!("store thread: {e}"))?;
        let signer = GrantSigner::generate("boot-ssrf");
        let spec = WorkerSpec {
            socket: socket_dir.join("toolset.sock"),
            served_by: Some(account.uid.as_raw()),
            declaration: declaration()?,
            // As the daemon holds it (ARCHITECTURE §4): its own user, no
            // capability, no-new-privileges.
            sandbox: SandboxExpectation {
                uid: account.uid.as_raw(),
                gid: account.gid.as_raw(),
                allowed_capabilities: 0,
                landlock_floor: None,
                command_cgroups: false,
                command_namespaces: &[],
                command_bounds: &[],
            },
        };
        // Held to the policy it reported, at every later handshake, as the
        // daemon holds it once the policy matched the configuration.
        let worker = Worker::connect(&spec, &signer)
            .await
            .map_err(|e| format!("connect to the browser worker: {e}"))?
            .hold_web_scope();
        Ok(Self {
            process,
            dirs,
            store,
            signer,
            worker,
            calls: AtomicU32::new(0),
        })
    }

    /// Stops the worker and starts it again under `policy` on the same
    /// socket, as an operator's restart would, while this client, as the
    /// daemon, stays connected.
    pub fn restart(&mut self, lab: &Lab, policy: Policy) -> Result<(), String> {
        let account = user()?;
        self.process.stop();
        self.process = spawn(lab, policy, self.dirs.path(), &account)?;
        Ok(())
    }

    /// The worker's pid, for [`Lab::attempt`].
    pub fn pid(&self) -> u32 {
        self.process.child.id()
    }

    /// What the worker wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dirs.path().join("worker.stderr")).unwrap_or_default()
    }

    /// `web::fetch` of `url`, dispatched as the daemon dispatches it.
    /// The agent holds `web::fetch` alone.
    pub async fn fetch(&self, url: &str) -> Fetched {
        let held = vec!["web::fetch".to_string()];
        self.dispatch(
            "turn-ssrf",
            "fetch",
            serde_json::json!({ "url": url }),
            held,
        )
        .await
    }

    /// `web::<tool>` with `arguments` in `turn`, dispatched as the daemon
    /// dispatches it, the agent holding every tool of `web` but search.
    pub async fn call(&self, turn: &str, tool: &str, arguments: serde_json::Value) -> Fetched {
        let held = ["fetch", "navigate", "click", "fill", "hover", "select"]
            .iter()
            .map(|t| format!("web::{t}"))
            .collect();
        self.dispatch(turn, tool, arguments, held).await
    }

    async fn dispatch(
        &self,
        turn: &str,
        tool: &str,
        arguments: serde_json::Value,
        held_tools: Vec<String>,
    ) -> Fetched {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        let dispatch = Dispatch {
            call_id: format!("ssrf-{n}"),
            turn_id: turn.into(),
            agent: "mira".into(),
            tool: tool.into(),
            arguments_json: arguments.to_string().into_bytes(),
            settings_json: "{}".into(),
            channel: "research".into(),
            held_tools,
            unit: None,
            decision_id: None,
            deadline: Duration::from_secs(30),
        };
        match self
            .worker
            .invoke(&self.store, &self.signer, dispatch, |_| {})
            .await
        {
            Ok(outcome) => Fetched::from(outcome),
            Err(e) => Fetched::Other(format!("the store failed: {e}")),
        }
    }

    /// Ends `turn` as the daemon does once it is over: its browser goes.
    pub async fn end_turn(&self, turn: &str) {
        self.worker.end_turn(turn).await;
    }
}

/// Starts the worker binary inside `lab`'s worker namespace as `account`,
/// under `policy`, its directories beneath `dir`; its stderr goes to
/// `dir/worker.stderr`, which the error quotes if it does not start.
fn spawn(lab: &Lab, policy: Policy, dir: &Path, account: &User) -> Result<Process, String> {
    let stderr_path = dir.join("worker.stderr");
    let stderr = File::options()
        .create(true)
        .append(true)
        .open(&stderr_path)
        .map_err(|e| format!("stderr file: {e}"))?;
    let mut command = lab.command_in_worker("setpriv");
    command
        .arg(format!("--reuid={}", account.uid))
        .arg(format!("--regid={}", account.gid))
        .args(["--clear-groups", "--"])
        .arg(binary("collegium-worker-browser"))
        .arg("serve")
        .arg("--runtime-dir")
        .arg(dir.join("run"))
        .arg("--audit-dir")
        .arg(dir.join("log"))
        .args(["--allow-uid", "0", "--closed-host", CLOSED_HOST])
        .env("RUST_LOG", "warn");
    if policy.own_network_browsable {
        command.arg("--own-network-browsable");
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("spawn the browser worker: {e}"))?;
    let stdout = child.stdout.take().ok_or("the worker's stdout")?;
    let mut stdout = BufReader::new(stdout);
    let mut first = String::new();
    let _ = stdout.read_line(&mut first);
    let process = Process {
        child,
        _stdout: stdout,
        stopped: false,
    };
    if first.trim() != "ready" {
        drop(process);
        let said = std::fs::read_to_string(&stderr_path).unwrap_or_default();
        return Err(format!("the browser worker did not start: {said}"));
    }
    Ok(process)
}

/// How a fetch ended, as the matrix judges it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    /// A typed refusal, with the text the model reads.
    Refusal(String),
    /// A page read, with the text the model reads.
    Success(String),
    /// Anything else, described.
    Other(String),
}

impl From<CallOutcome> for Fetched {
    fn from(outcome: CallOutcome) -> Self {
        match outcome {
            CallOutcome::Finished(result) => match result.outcome {
                Some(Outcome::Refusal(r)) => Self::Refusal(r.message),
                Some(Outcome::Success(s)) => Self::Success(s.text),
                other => Self::Other(format!("{other:?}")),
            },
            other => Self::Other(format!("{other:?}")),
        }
    }
}

/// The worker's process, stopped with SIGTERM when dropped (a worker that
/// failed its handshake included).
struct Process {
    child: Child,
    /// Held so the worker's stdout stays open while it serves.
    _stdout: BufReader<ChildStdout>,
    /// Once stopped and reaped, its pid may be another process's.
    stopped: bool,
}

impl Process {
    fn stop(&mut self) {
        if self.stopped {
            return;
        }
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
        self.stopped = true;
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}
