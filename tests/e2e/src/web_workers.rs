//! The browser and PDF workers as the tests start them: the real binaries,
//! each as its own OS user (`collegium-browser`, `collegium-pdf`, made by
//! `collegium-provision host`, whose directories under the harness's runtime
//! and audit directories it also makes), allowing root (the daemon's side in
//! the tests), stopped with SIGTERM when dropped.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};

use crate::{Harness, binary};

/// A running worker, stopped when dropped.
pub struct WorkerProcess(pub Child);

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.0.wait();
    }
}

/// Declares the deployment's `[web]`: its own network browsable or not.
pub fn declare_web(h: &Harness, own_network_browsable: bool) {
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    text.push_str(&format!(
        "\n[web]\nown_network_browsable = {own_network_browsable}\n"
    ));
    std::fs::write(&h.config, text).expect("write config");
}

/// Provisions the host for the workers and lets their users pass through
/// the harness's directory to their own.
pub fn provision_workers(h: &Harness) {
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    std::fs::set_permissions(h.dir.path(), std::fs::Permissions::from_mode(0o711))
        .expect("the harness's directory passable");
}

/// Starts `program` with `args` as `user`; the worker once it printed
/// `ready`, else what it printed on stderr as it refused.
fn start_as(user: &str, program: &str, args: &[String]) -> Result<WorkerProcess, String> {
    let account = nix::unistd::User::from_name(user)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no OS user {user}: provision the host first"))?;
    let mut child = Command::new("setpriv")
        .arg(format!("--reuid={}", account.uid))
        .arg(format!("--regid={}", account.gid))
        .args(["--clear-groups", "--"])
        .arg(binary(program))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn {program}: {e}"))?;
    let stdout = child.stdout.take().ok_or("the worker's stdout")?;
    let mut first = String::new();
    let _ = BufReader::new(stdout).read_line(&mut first);
    if first.trim() == "ready" {
        return Ok(WorkerProcess(child));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    Err(String::from_utf8_lossy(&output.stderr).into_owned())
}

/// The browser worker for the harness's deployment, with `extra` flags.
pub fn start_browser(h: &Harness, extra: &[&str]) -> Result<WorkerProcess, String> {
    let root = h.dir.path();
    let mut args: Vec<String> = vec![
        "serve".into(),
        "--runtime-dir".into(),
        root.join("run").display().to_string(),
        "--audit-dir".into(),
        root.join("audit").display().to_string(),
        "--allow-uid".into(),
        "0".into(),
    ];
    args.extend(extra.iter().map(|a| (*a).to_string()));
    start_as("collegium-browser", "collegium-worker-browser", &args)
}

/// The PDF worker for the harness's deployment.
pub fn start_pdf(h: &Harness) -> Result<WorkerProcess, String> {
    let root = h.dir.path();
    let args: Vec<String> = vec![
        "serve".into(),
        "--socket".into(),
        root.join("run/pdf/reader.sock").display().to_string(),
        "--audit".into(),
        root.join("audit/pdf/pdf.audit.jsonl").display().to_string(),
        "--allow-uid".into(),
        "0".into(),
    ];
    start_as("collegium-pdf", "collegium-worker-pdf", &args)
}

/// Processes of `user` still running whose name says they are Chromium's.
pub fn chromium_processes_of(user: &str) -> Vec<u32> {
    let Ok(Some(account)) = nix::unistd::User::from_name(user) else {
        return Vec::new();
    };
    let uid = account.uid.as_raw();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let owned = status.lines().any(|l| {
                l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some(&uid.to_string())
            });
            let name = status.lines().next().unwrap_or_default().to_lowercase();
            owned && name.contains("chrom")
        })
        .collect()
}
