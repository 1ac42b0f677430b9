//! The shell worker as the tests start it: the real binary, `serve`d as
//! root beside the daemon (or beside the daemon's own client), allowing
//! this process's uid, stopped with SIGTERM when dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::binary;

/// A running shell worker, stopped when dropped.
pub struct ShellWorker(pub Child);

impl ShellWorker {
    pub fn pid(&self) -> u32 {
        self.0.id()
    }
}

impl Drop for ShellWorker {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.0.wait();
    }
}

/// Starts the worker for `config` under the Landlock `floor`, with `env`
/// added to its environment; the worker once it printed `ready`, else what
/// it printed on stderr as it refused.
pub fn start(config: &Path, floor: u8, env: &[(&str, &str)]) -> Result<ShellWorker, String> {
    let mut command = Command::new(binary("collegium-worker-shell"));
    command.envs(env.iter().copied());
    started(command, config, floor, &[])
}

/// Starts the worker as its shipped unit does under systemd: inside a
/// cgroup of its own (`unit`, standing for the unit's, which
/// `Delegate=yes` hands to it) and with `--delegated-cgroup`.
pub fn start_in_unit_cgroup(config: &Path, floor: u8, unit: &Path) -> Result<ShellWorker, String> {
    let mut command = Command::new("sh");
    // The shell joins the cgroup, then becomes the worker: the worker's
    // first instruction already runs inside it, as under systemd.
    command
        .args(["-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\""])
        .arg(unit)
        .arg(binary("collegium-worker-shell"));
    started(command, config, floor, &["--delegated-cgroup"])
}

fn started(
    mut command: Command,
    config: &Path,
    floor: u8,
    more: &[&str],
) -> Result<ShellWorker, String> {
    let mut child = command
        .args(["serve", "--allow-uid", "0", "--landlock-floor"])
        .arg(floor.to_string())
        .arg("--config")
        .arg(config)
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn the shell worker: {e}"))?;
    let stdout = child.stdout.take().ok_or("the worker's stdout")?;
    let mut first = String::new();
    let _ = BufReader::new(stdout).read_line(&mut first);
    if first.trim() == "ready" {
        return Ok(ShellWorker(child));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    Err(String::from_utf8_lossy(&output.stderr).into_owned())
}
