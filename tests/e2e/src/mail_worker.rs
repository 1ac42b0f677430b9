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

    /// Grants @mira `mail` with this mailbox announced in ~research and
    /// read every second, its password (or `password` instead) in a file
    /// only root may read.
    pub fn configure(&self, h: &Harness, password: &str) {
        let file = self.dir.path().join("mail.password");
        std::fs::write(&file, format!("{password}\n")).expect("password file");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        h.grant_mira(&["mail"]);
        h.mira_settings(
            "mail.mailbox",
            &format!(
                "address = \"{ADDRESS}\"\nannounce_channel = \"research\"\npoll_interval_secs = 1"
            ),
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

/// The servers, the configuration and the host laid out for the worker.
pub async fn deployment(h: &Harness, password: &str) -> MailServers {
    let servers = MailServers::start().unwrap_or_else(|e| panic!("{e}"));
    servers.configure(h, password);
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    collegium_provision::host::provision(&h.loaded()).expect("the host provisioned");
    // The worker's user passes through the harness's directory to its own
    // beneath (a deployment's /run and /var/log are open to pass).
    let loaded = h.loaded();
    let deployment = &loaded.config.deployment;
    for dir in [
        h.config.parent().expect("the configuration's directory"),
        deployment.runtime_dir.as_path(),
        deployment.audit_dir.as_path(),
    ] {
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }
    servers
}

impl MailServers {
    /// Stores a message from Ana in @mira's INBOX, its Message-ID made of
    /// its subject.
    pub fn seed_from_ana(&self, subject: &str, body: &str) {
        let message = format!(
            "From: Ana <ana@outside.test>\r\nTo: {ADDRESS}\r\nSubject: {subject}\r\nMessage-ID: <{subject}@outside.test>\r\nDate: Tue, 1 Dec 2026 09:00:00 +0000\r\n\r\n{body}\r\n"
        );
        self.dovecot
            .seed(ADDRESS, "INBOX", message.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }
}
