//! What an attempt must come back as: the command ran, saw its refusal in
//! its own words, and nothing it went after reached its result or changed
//! on the host. A bare non-zero exit proves nothing, so an expectation
//! without both a sign the command met the layer and a check of the real
//! outcome is refused by the table's own test.

use std::time::{Duration, Instant};

use crate::scene::Ran;

/// A check of the host (or of the whole result) after the call ended.
type HostCheck = Box<dyn Fn(&Ran) -> Result<(), String> + Send + Sync>;

#[derive(Default)]
pub struct Expect {
    /// Each entry: one of these must appear in the result.
    says: Vec<Vec<String>>,
    /// None of these may appear anywhere in the result.
    never: Vec<String>,
    stdout: Option<String>,
    status: Option<i32>,
    host: Vec<(String, HostCheck)>,
}

impl Expect {
    pub fn new() -> Self {
        Self::default()
    }

    /// The result says `text`: the command met the layer, and says so.
    pub fn says(self, text: &str) -> Self {
        self.says_any(&[text])
    }

    pub fn says_any(mut self, texts: &[&str]) -> Self {
        self.says
            .push(texts.iter().map(|t| (*t).to_string()).collect());
        self
    }

    /// `secret` shows nowhere in the result.
    pub fn never(mut self, secret: &str) -> Self {
        assert!(!secret.is_empty(), "an empty secret proves nothing");
        self.never.push(secret.to_string());
        self
    }

    /// Stdout is exactly `text`.
    pub fn stdout(mut self, text: &str) -> Self {
        self.stdout = Some(text.to_string());
        self
    }

    pub fn status(mut self, code: i32) -> Self {
        self.status = Some(code);
        self
    }

    /// After the call, `check` holds (`what` names it in a failure).
    pub fn host(
        mut self,
        what: &str,
        check: impl Fn(&Ran) -> Result<(), String> + Send + Sync + 'static,
    ) -> Self {
        self.host.push((what.to_string(), Box::new(check)));
        self
    }

    /// Whether this expectation checks a real outcome: it sees the command
    /// meet the layer (words, an exact stdout or status) and checks what
    /// got through (a secret absent, the host's state, an exact stdout).
    pub fn is_real(&self) -> bool {
        let met = !self.says.is_empty() || self.stdout.is_some() || self.status.is_some();
        let outcome = !self.never.is_empty() || !self.host.is_empty() || self.stdout.is_some();
        met && outcome
    }

    /// What is wrong with `ran`, if anything.
    pub fn problems(&self, ran: &Ran) -> Vec<String> {
        let mut problems = Vec::new();
        if !ran.ran {
            problems.push("the command never ran".to_string());
            return problems;
        }
        for any in &self.says {
            if !any.iter().any(|t| ran.text.contains(t.as_str())) {
                problems.push(format!("the result says none of {any:?}"));
            }
        }
        for secret in &self.never {
            if ran.text.contains(secret.as_str()) {
                problems.push(format!("the result shows `{secret}`"));
            }
        }
        if let Some(stdout) = &self.stdout
            && &ran.stdout != stdout
        {
            problems.push(format!("stdout is {:?}, not {stdout:?}", ran.stdout));
        }
        if let Some(status) = self.status
            && ran.status != Some(status)
        {
            problems.push(format!("the status is {:?}, not {status}", ran.status));
        }
        for (what, check) in &self.host {
            if let Err(why) = check(ran) {
                problems.push(format!("{what}: {why}"));
            }
        }
        problems
    }
}

/// Host checks the table shares.
pub mod host {
    use super::*;
    use crate::scene;

    /// No process running `sleep MARKER` is left on the host within five
    /// seconds; one that is, is killed so the failure leaves nothing.
    pub fn gone(marker: &str) -> impl Fn(&Ran) -> Result<(), String> + Send + Sync + 'static {
        let marker = marker.to_string();
        move |_| {
            let wanted = |cmdline: &str| cmdline.trim_end() == format!("sleep {marker}");
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                let Some(pid) = scene::pid_where(wanted) else {
                    return Ok(());
                };
                if Instant::now() > deadline {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid as i32),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                    return Err(format!("`sleep {marker}` (pid {pid}) outlived its command"));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// The process `pid` still runs, and is neither stopped nor traced.
    pub fn untouched(
        name: &str,
        pid: u32,
    ) -> impl Fn(&Ran) -> Result<(), String> + Send + Sync + use<> {
        let name = name.to_string();
        move |_| {
            if !scene::alive(pid) {
                return Err(format!("{name} (pid {pid}) is gone"));
            }
            let state = scene::state(pid);
            if state == "T" || state == "t" {
                return Err(format!("{name} (pid {pid}) is stopped or traced ({state})"));
            }
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            if !status.contains("TracerPid:\t0\n") {
                return Err(format!("{name} (pid {pid}) is traced"));
            }
            Ok(())
        }
    }

    /// Nothing exists at `path` (not even a link). It only looks: a path
    /// the host already had is never removed on the attempt's account.
    pub fn absent(
        path: &std::path::Path,
    ) -> impl Fn(&Ran) -> Result<(), String> + Send + Sync + use<> {
        let path = path.to_path_buf();
        move |_| match std::fs::symlink_metadata(&path) {
            Ok(_) => Err(format!("{} was made", path.display())),
            Err(_) => Ok(()),
        }
    }

    /// `path` still holds exactly `bytes`.
    pub fn unchanged(
        path: &std::path::Path,
        bytes: Vec<u8>,
    ) -> impl Fn(&Ran) -> Result<(), String> + Send + Sync + use<> {
        let path = path.to_path_buf();
        move |_| {
            let now = std::fs::read(&path).unwrap_or_default();
            if now == bytes {
                Ok(())
            } else {
                Err(format!("{} changed", path.display()))
            }
        }
    }

    /// The SysV IPC objects of the host's IPC namespace owned by `uid`.
    pub fn sysv_owned_by(uid: u32) -> Vec<String> {
        let mut found = Vec::new();
        for kind in ["shm", "sem", "msg"] {
            let text = std::fs::read_to_string(format!("/proc/sysvipc/{kind}")).unwrap_or_default();
            let mut lines = text.lines();
            let Some(header) = lines.next() else {
                continue;
            };
            let Some(column) = header.split_whitespace().position(|c| c == "uid") else {
                continue;
            };
            for line in lines {
                if line.split_whitespace().nth(column) == Some(uid.to_string().as_str()) {
                    found.push(format!("{kind}: {}", line.trim()));
                }
            }
        }
        found
    }

    /// No SysV IPC object of `uid`'s is left in the host's namespace.
    pub fn no_sysv_of(uid: u32) -> impl Fn(&Ran) -> Result<(), String> + Send + Sync + use<> {
        move |_| {
            let left = sysv_owned_by(uid);
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("left on the host: {left:?}"))
            }
        }
    }
}
