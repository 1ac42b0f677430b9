//! One OpenSMTPD instance on a free loopback port, delivering every
//! recipient over LMTP into a test's Dovecot, so what a sender submitted is
//! read back from real mailboxes. OpenSMTPD keeps its queue and control
//! socket at fixed paths (`/var/spool/smtpd`, `/var/run/smtpd.sock`); each
//! instance runs in a mount namespace of its own with both bound to its
//! directory, so instances run side by side and the host's is untouched.

use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::ports;

/// How long OpenSMTPD may take to listen once started.
const STARTING: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum SmtpdError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("smtpd did not listen within {STARTING:?}; it said:\n{log}")]
    NotListening { log: String },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> SmtpdError {
    let what = what.into();
    move |source| SmtpdError::Io { what, source }
}

/// A domain whose every recipient the server refuses at RCPT.
pub const REFUSED_DOMAIN: &str = "refused.test";

/// A running OpenSMTPD.
pub struct Smtpd {
    dir: tempfile::TempDir,
    child: Option<Child>,
    /// Where a client submits (plain SMTP, no authentication: loopback only).
    pub smtp: SocketAddr,
}

impl Smtpd {
    /// Starts OpenSMTPD accepting mail for any recipient and delivering it
    /// over LMTP to `lmtp`.
    pub fn start(lmtp: SocketAddr) -> Result<Self, SmtpdError> {
        let dir = tempfile::Builder::new()
            .prefix("collegium-smtpd-")
            .tempdir()
            .map_err(io("a directory for smtpd"))?;
        let smtp = ports::free().map_err(io("a free port for SMTP"))?;
        let root = dir.path();
        for (sub, mode) in [("spool", 0o711), ("run", 0o755)] {
            let path = root.join(sub);
            std::fs::create_dir(&path).map_err(io(format!("make {sub}")))?;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))
                .map_err(io(format!("chmod {sub}")))?;
        }
        // The mount point the namespace binds the queue over.
        std::fs::create_dir_all("/var/spool/smtpd").map_err(io("make /var/spool/smtpd"))?;
        // LMTP delivery is local delivery to OpenSMTPD, which looks each
        // recipient up as a user; a catch-all virtual table accepts every
        // address, and `rcpt-to` hands Dovecot the address as sent. Mail for
        // `REFUSED_DOMAIN` is refused at RCPT (550), as a server refuses a
        // recipient it will not take.
        std::fs::write(root.join("virtuals"), "@ nobody\n").map_err(io("write virtuals"))?;
        let config = format!(
            "listen on 127.0.0.1 port {port}\n\
             table catchall file:{virtuals}\n\
             action \"deliver\" lmtp \"127.0.0.1:{lmtp_port}\" rcpt-to virtual <catchall>\n\
             match from any for domain \"{REFUSED_DOMAIN}\" reject\n\
             match from any for any action \"deliver\"\n",
            port = smtp.port(),
            virtuals = root.join("virtuals").display(),
            lmtp_port = lmtp.port(),
        );
        std::fs::write(root.join("smtpd.conf"), config).map_err(io("write smtpd.conf"))?;
        let mut this = Self {
            dir,
            child: None,
            smtp,
        };
        this.run()?;
        Ok(this)
    }

    /// What OpenSMTPD printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("smtpd.log")).unwrap_or_default()
    }

    fn run(&mut self) -> Result<(), SmtpdError> {
        let root = self.dir.path();
        let log = std::fs::File::create(root.join("smtpd.log")).map_err(io("smtpd.log"))?;
        let script = format!(
            "mount --bind '{spool}' /var/spool/smtpd && mount --bind '{run}' /run && exec smtpd -d -f '{conf}'",
            spool = root.join("spool").display(),
            run = root.join("run").display(),
            conf = root.join("smtpd.conf").display(),
        );
        let child = Command::new("unshare")
            .args(["--mount", "--propagation", "private", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(io("smtpd.log"))?)
            .stderr(log)
            .process_group(0)
            .spawn()
            .map_err(io("start smtpd"))?;
        self.child = Some(child);
        let deadline = Instant::now() + STARTING;
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&self.smtp, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop();
        Err(SmtpdError::NotListening { log: self.log() })
    }

    /// Stops OpenSMTPD and every process it started.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(0));
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGTERM);
            let _ = child.wait();
        }
    }
}

impl Drop for Smtpd {
    fn drop(&mut self) {
        self.stop();
    }
}
