//! Running one command (§3.4, §7.1): the launcher (its own small program,
//! beside the worker's) is spawned, handed the request on stdin, and its output
//! captured into bounded buffers. At the deadline the process group gets
//! SIGINT, SIGTERM and SIGKILL in turn (CAP_KILL crosses the uid), and the
//! command's cgroup is killed whole, which reaches what double-forked out of
//! the group. A command's cgroup is killed when it ends as well: nothing an
//! agent starts outlives its command.
//!
//! The launcher is reaped last. Its exit is awaited on a pidfd, which does
//! not reap it, so while its process group is signalled its pid is still
//! held by its zombie and cannot name a process that came after it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;

use collegium_control::host::reach::Endpoint;

use crate::reach::ReachRequest;
use crate::request::{LAUNCH_REFUSED, LaunchRequest, REFUSED};

/// The launcher's program, installed beside the worker's
/// (`src/bin/collegium-shell-launch.rs`).
pub const LAUNCHER: &str = "collegium-shell-launch";
/// How much of each stream the result shows.
pub const SHOWN: usize = 8 * 1024;
/// How much of each stream is captured whole (for the workspace copy).
pub const CAPTURED: usize = 1024 * 1024;
/// How long output may keep arriving after the command exited.
const DRAIN: Duration = Duration::from_millis(500);
/// The pause between the deadline's signals.
const GRACE: Duration = Duration::from_secs(1);

/// One stream's output: what was captured, and how much there was.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Capture {
    pub bytes: Vec<u8>,
    pub total: u64,
}

impl Capture {
    /// What did not fit the capture.
    pub fn dropped(&self) -> u64 {
        self.total - self.bytes.len() as u64
    }
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// It exited with this status (a signal's number plus 128).
    Exited(i32),
    /// It passed its deadline and was killed: whether it completed what it
    /// set out to do cannot be confirmed (§7.1).
    Killed,
    /// The launcher refused before the command ran.
    Refused(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finished {
    pub ending: Ending,
    pub stdout: Capture,
    pub stderr: Capture,
    /// What the kernel counted of the command meeting its cgroup's bounds,
    /// where it ran in one (§6.1).
    pub events: Option<crate::cgroups::Events>,
}

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("the launcher could not be started: {0}")]
    Spawn(std::io::Error),
    #[error("the command's cgroup: {0}")]
    Cgroup(std::io::Error),
}

/// A per-command cgroup under `root` (a directory of a cgroup v2
/// hierarchy the worker may write), removed when dropped.
pub struct CommandCgroup {
    path: PathBuf,
}

impl CommandCgroup {
    pub fn create(root: &Path, name: &str) -> Result<Self, RunError> {
        let path = root.join(name);
        std::fs::create_dir(&path).map_err(RunError::Cgroup)?;
        Ok(Self { path })
    }

    /// An existing command cgroup, to be killed and removed when dropped.
    pub fn adopt(path: PathBuf) -> Self {
        Self { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Kills every process in it, however it got there.
    pub fn kill(&self) {
        let _ = std::fs::write(self.path.join("cgroup.kill"), "1\n");
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        self.kill();
        // The kernel empties a killed cgroup asynchronously.
        for _ in 0..100 {
            if std::fs::remove_dir(&self.path).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// What the launcher does once it has confined itself as the agent.
#[derive(Debug, Clone, Copy)]
pub enum Then<'a> {
    /// Execs the request's command under bash.
    Command,
    /// Tries each endpoint, in process, and reports (`reach`).
    Reach(&'a [Endpoint]),
}

/// Runs `request` through the launcher at `launcher`, for at most
/// `deadline`.
pub async fn run(
    launcher: &Path,
    request: &LaunchRequest,
    cgroup: Option<&CommandCgroup>,
    deadline: Duration,
) -> Result<Finished, RunError> {
    run_then(launcher, Then::Command, request, cgroup, deadline).await
}

/// As [`run`], with the launcher doing `then` once confined.
pub async fn run_then(
    launcher: &Path,
    then: Then<'_>,
    request: &LaunchRequest,
    cgroup: Option<&CommandCgroup>,
    deadline: Duration,
) -> Result<Finished, RunError> {
    let mut request = request.clone();
    request.nonce = fresh_nonce();
    let request = &request;
    let (mode, text) = match then {
        Then::Command => ("launch", serde_json::to_vec(request)),
        Then::Reach(endpoints) => (
            "probe-reach",
            serde_json::to_vec(&ReachRequest {
                launch: request.clone(),
                endpoints: endpoints.to_vec(),
            }),
        ),
    };
    let mut child = Command::new(launcher)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(RunError::Spawn)?;
    let pid = child.id().and_then(|id| i32::try_from(id).ok());
    let exit = Exit::watch(pid).map_err(RunError::Spawn)?;
    if let Some(mut stdin) = child.stdin.take() {
        // Serialising plain data cannot fail; an empty request is refused
        // by the launcher in any case.
        let text = text.as_deref().unwrap_or_default();
        // A launcher that died early closes its stdin; its exit says why.
        let _ = stdin.write_all(text).await;
    }
    let stdout = capture(child.stdout.take());
    let stderr = capture(child.stderr.take());
    let killed = tokio::time::timeout(deadline, exit.exited()).await.is_err();
    if killed {
        stop(pid, cgroup).await;
        exit.exited().await;
    }
    // Output may still come from what the command left running: the
    // streams are read to their end, or for a moment at most, then
    // whatever is left in its cgroup, or its group, is killed. In its own
    // PID namespace nothing of the command's outlives the launcher, so the
    // streams end at once and no command waits the moment out. The
    // launcher is not reaped yet, so its pid still names its own group.
    let drained = tokio::time::Instant::now() + DRAIN.min(deadline);
    let stdout = finish(stdout, drained).await;
    let stderr = finish(stderr, drained).await;
    let events = cgroup.map(|c| crate::cgroups::events(c.path()));
    if let Some(cgroup) = cgroup {
        cgroup.kill();
    } else if let Some(pid) = pid {
        let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let ending = match child.wait().await {
        _ if killed => Ending::Killed,
        Ok(status) => Ending::Exited(
            status
                .code()
                .or_else(|| std::os::unix::process::ExitStatusExt::signal(&status).map(|s| 128 + s))
                .unwrap_or(-1),
        ),
        Err(_) => Ending::Killed,
    };
    let ending = match ending {
        Ending::Exited(LAUNCH_REFUSED) => {
            let text = String::from_utf8_lossy(&stderr.bytes);
            let marker = format!("{REFUSED}{}: ", request.nonce);
            match text.lines().find_map(|l| l.strip_prefix(marker.as_str())) {
                Some(reason) => Ending::Refused(reason.to_string()),
                None => Ending::Exited(LAUNCH_REFUSED),
            }
        }
        other => other,
    };
    Ok(Finished {
        ending,
        stdout,
        stderr,
        events,
    })
}

/// The launcher's exit, watched through a pidfd: readable once it has
/// exited, without reaping it.
struct Exit(Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>);

impl Exit {
    fn watch(pid: Option<i32>) -> std::io::Result<Self> {
        let Some(pid) = pid.and_then(rustix::process::Pid::from_raw) else {
            // No pid: the child was already reaped, and there is nothing
            // to wait for or signal.
            return Ok(Self(None));
        };
        let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::NONBLOCK)?;
        // SAFETY: the descriptor is a fresh pidfd owned by the `AsyncFd`,
        // which neither replaces nor closes it while it is registered.
        #[allow(unsafe_code)]
        let watched = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)?
        };
        Ok(Self(Some(watched)))
    }

    /// Returns once the launcher has exited (it stays a zombie).
    async fn exited(&self) {
        let Some(fd) = &self.0 else { return };
        // A pidfd only ever turns readable, and stays so: one readiness
        // is the exit. An error from the reactor means the same wait is
        // over for good; the reap that follows reports the status.
        let _ = fd.readable().await;
    }
}

/// A launch's nonce: 128 bits from the kernel's random source.
fn fresh_nonce() -> String {
    let mut bytes = [0u8; 16];
    if let Ok(mut random) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = random.read_exact(&mut bytes);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SIGINT, SIGTERM, then SIGKILL to the command's process group, a grace
/// between each; then the cgroup, for what left the group.
async fn stop(pid: Option<i32>, cgroup: Option<&CommandCgroup>) {
    if let Some(pid) = pid {
        for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGKILL] {
            if killpg(Pid::from_raw(pid), signal).is_err() {
                break;
            }
            tokio::time::sleep(GRACE).await;
        }
    }
    if let Some(cgroup) = cgroup {
        cgroup.kill();
    }
}

type Shared = std::sync::Arc<std::sync::Mutex<Capture>>;

/// Reads a stream into a bounded capture another task can take at any
/// moment.
fn capture(
    stream: Option<impl AsyncRead + Unpin + Send + 'static>,
) -> (Shared, tokio::task::JoinHandle<()>) {
    let shared = Shared::default();
    let sink = shared.clone();
    let reading = tokio::spawn(async move {
        let Some(mut stream) = stream else {
            return;
        };
        let mut buffer = [0u8; 16 * 1024];
        loop {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    let mut captured = sink
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    captured.total += n as u64;
                    let room = CAPTURED.saturating_sub(captured.bytes.len());
                    captured.bytes.extend_from_slice(&buffer[..n.min(room)]);
                }
            }
        }
    });
    (shared, reading)
}

/// What was captured: the stream read to its end, or, where something the
/// command left still holds it open, what had arrived after a moment.
async fn finish(
    (shared, reading): (Shared, tokio::task::JoinHandle<()>),
    by: tokio::time::Instant,
) -> Capture {
    let abort = reading.abort_handle();
    if tokio::time::timeout_at(by, reading).await.is_err() {
        abort.abort();
    }
    std::mem::take(
        &mut *shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}
