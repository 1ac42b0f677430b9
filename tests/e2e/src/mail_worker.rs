//! The mail worker as the end-to-end tests start it (§3.13): the real
//! binary, started as root beside the daemon and dropping to its own user
//! `collegium-mail`, reading the harness's configuration, against a real
//! Dovecot and a real OpenSMTPD delivering into it.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use mail_servers::{Dovecot, Smtpd, User};

use crate::{Harness, binary};

/// The mailbox @mira is given.
pub const ADDRESS: &str = "mira@mail.test";
pub const PASSWORD: &str = "harbour-light-4410";

/// Real mail servers for one test, and the files the worker reads.
pub struct MailServers {
    pub dovecot: Dovecot,
    pub smtpd: Smtpd,
    dir: tempfile::TempDir,
}

impl MailServers {
    /// Dovecot serving @mira's mailbox and OpenSMTPD delivering into it.
    pub fn start() -> Result<Self, String> {
        let dovecot = Dovecot::start(&[User::new(ADDRESS, PASSWORD)]).map_err(|e| e.to_string())?;
        let smtpd = Smtpd::start(dovecot.lmtp).map_err(|e| e.to_string())?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        std::fs::write(dir.path().join("ca.pem"), dovecot.ca_pem()).map_err(|e| e.to_string())?;
        Ok(Self {
            dovecot,
            smtpd,
            dir,
        })
    }

    /// The test CA's certificate, for `--trust`.
    pub fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Grants @mira `mail` with this mailbox announced in ~research, its
    /// password (or `password` instead) in a file only root may read.
    pub fn configure(&self, h: &Harness, password: &str) {
        let file = self.dir.path().join("mail.password");
        std::fs::write(&file, format!("{password}\n")).expect("password file");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        h.grant_mira(&["mail"]);
        h.mira_settings(
            "mail.mailbox",
            &format!("address = \"{ADDRESS}\"\nannounce_channel = \"research\""),
        );
        h.mira_settings(
            "mail.mailbox.imap",
            &format!(
                "host = \"localhost\"\nport = {}\nusername = \"{ADDRESS}\"\npassword = {{ file = \"{}\" }}",
                self.dovecot.imaps.port(),
                file.display()
            ),
        );
        h.mira_settings(
            "mail.mailbox.smtp",
            &format!(
                "host = \"127.0.0.1\"\nport = {}\nusername = \"{ADDRESS}\"\npassword = {{ file = \"{}\" }}\ntls = \"none\"",
                self.smtpd.smtp.port(),
                file.display()
            ),
        );
    }
}

/// A running mail worker, stopped with SIGTERM when dropped.
pub struct MailWorker(pub Child);

impl Drop for MailWorker {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.0.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.0.wait();
    }
}

/// Starts the worker for `config` as root, allowing the daemon (root in
/// the tests) and trusting `ca`; the worker once it printed `ready`, else
/// what it printed on stderr as it refused.
pub fn start(config: &Path, ca: &Path) -> Result<MailWorker, String> {
    let mut child = Command::new(binary("collegium-worker-mail"))
        .args(["serve", "--allow-uid", "0", "--config"])
        .arg(config)
        .arg("--trust")
        .arg(ca)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn the mail worker: {e}"))?;
    let stdout = child.stdout.take().ok_or("the worker's stdout")?;
    let mut first = String::new();
    let _ = BufReader::new(stdout).read_line(&mut first);
    if first.trim() == "ready" {
        return Ok(MailWorker(child));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    Err(String::from_utf8_lossy(&output.stderr).into_owned())
}
