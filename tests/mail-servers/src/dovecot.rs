//! One Dovecot instance: IMAP over TLS and LMTP on free loopback ports, its
//! configuration, users, mail and logs in a directory of its own, run in
//! the foreground as the test's child and stopped when dropped.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::ca::TestCa;
use crate::maildir::{self, NOBODY};
use crate::ports;

/// How long Dovecot may take to listen once started.
const STARTING: Duration = Duration::from_secs(20);

/// A mailbox's owner: the login and its password.
#[derive(Debug, Clone)]
pub struct User {
    pub login: String,
    pub password: String,
}

impl User {
    pub fn new(login: &str, password: &str) -> Self {
        Self {
            login: login.into(),
            password: password.into(),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DovecotError {
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    #[error("the test CA: {0}")]
    Certificate(#[from] rcgen::Error),
    #[error("dovecot did not listen within {STARTING:?}; its log:\n{log}")]
    NotListening { log: String },
    #[error(
        "{user}'s {mailbox} holds {held} messages; `fill` numbers from UID 1, so it fills only an empty mailbox"
    )]
    NotEmpty {
        user: String,
        mailbox: String,
        held: u32,
    },
    #[error("`doveadm {args}` failed: {said}")]
    Doveadm { args: String, said: String },
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> DovecotError {
    let what = what.into();
    move |source| DovecotError::Io { what, source }
}

/// A running Dovecot.
pub struct Dovecot {
    dir: tempfile::TempDir,
    child: Option<Child>,
    /// IMAP with implicit TLS.
    pub imaps: SocketAddr,
    /// LMTP, plain, where a test's SMTP server delivers.
    pub lmtp: SocketAddr,
    ca: TestCa,
}

impl Dovecot {
    /// Starts Dovecot serving `users`, each with an empty INBOX.
    pub fn start(users: &[User]) -> Result<Self, DovecotError> {
        let dir = tempfile::Builder::new()
            .prefix("collegium-dovecot-")
            .tempdir()
            .map_err(io("a directory for dovecot"))?;
        // Dovecot's own users (dovecot, dovenull) and the mail user
        // (nobody) pass through it.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .map_err(io("chmod the dovecot directory"))?;
        let ca = TestCa::new()?;
        let imaps = ports::free().map_err(io("a free port for IMAP"))?;
        let lmtp = ports::free().map_err(io("a free port for LMTP"))?;
        let mut this = Self {
            dir,
            child: None,
            imaps,
            lmtp,
            ca,
        };
        this.write_files(users)?;
        this.run()?;
        Ok(this)
    }

    /// The authority a client trusts to verify the server.
    pub fn ca_pem(&self) -> &str {
        &self.ca.ca_pem
    }

    /// What Dovecot logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("dovecot.log")).unwrap_or_default()
    }

    /// Stores `message` (RFC 5322 bytes) in `user`'s `mailbox`, as mail
    /// that arrived.
    pub fn seed(&self, user: &str, mailbox: &str, message: &[u8]) -> Result<(), DovecotError> {
        let args = ["save", "-u", user, "-m", mailbox];
        let mut child = self
            .doveadm(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(io("run doveadm save"))?;
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(message).map_err(io("write to doveadm"))?;
        }
        let output = child.wait_with_output().map_err(io("wait for doveadm"))?;
        checked(&args, output)
    }

    /// Fills `user`'s `mailbox`, which must hold nothing yet, with `count`
    /// messages, `message(i)` for `i` in `0..count`, oldest first: written
    /// straight into its Maildir and taken in by one resync, for a mailbox
    /// of tens of thousands that [`Dovecot::seed`] would take minutes to
    /// make. Message `i` gets UID `i + 1` and arrived `count - i` seconds
    /// ago.
    pub fn fill(
        &self,
        user: &str,
        mailbox: &str,
        count: u32,
        mut message: impl FnMut(u32) -> Vec<u8>,
    ) -> Result<(), DovecotError> {
        // The userdb's home and `mail_location` in `configuration`.
        let home = self.dir.path().join("mail").join(user);
        let folder = maildir::folder(&home.join("Maildir"), mailbox);
        let held = self.count(user, mailbox)?;
        if held != 0 {
            return Err(DovecotError::NotEmpty {
                user: user.into(),
                mailbox: mailbox.into(),
                held,
            });
        }
        maildir::write(&home, &folder, count, &mut message)
            .map_err(io(format!("write messages into {}", folder.display())))?;
        // Dovecot reads a Maildir folder again on every SELECT while its
        // directory changed too recently to trust, which for 50,000 files
        // is 100 ms a session: synced once the change is old, it is the
        // mailbox it would be a day later.
        std::thread::sleep(maildir::SETTLED);
        let args = ["force-resync", "-u", user, mailbox];
        let output = self
            .doveadm(&args)
            .output()
            .map_err(io("run doveadm force-resync"))?;
        checked(&args, output)
    }

    /// Gives `user`'s `mailbox` a new UIDVALIDITY, as a server that rebuilt
    /// its index does.
    pub fn set_uidvalidity(
        &self,
        user: &str,
        mailbox: &str,
        uidvalidity: u32,
    ) -> Result<(), DovecotError> {
        let value = uidvalidity.to_string();
        let args = [
            "mailbox",
            "update",
            "-u",
            user,
            "--uid-validity",
            &value,
            mailbox,
        ];
        let output = self
            .doveadm(&args)
            .output()
            .map_err(io("run doveadm mailbox update"))?;
        checked(&args, output)
    }

    /// How many messages `user`'s `mailbox` holds; 0 for one never made.
    pub fn count(&self, user: &str, mailbox: &str) -> Result<u32, DovecotError> {
        let args = [
            "-f", "flow", "mailbox", "status", "-u", user, "messages", mailbox,
        ];
        let output = self.doveadm(&args).output().map_err(io("run doveadm"))?;
        if !output.status.success() {
            let said = String::from_utf8_lossy(&output.stderr);
            // A recipient nothing was delivered to has no mailbox yet.
            if said.contains("Mailbox doesn't exist") {
                return Ok(0);
            }
            return checked(&args, output).map(|()| 0);
        }
        let text = String::from_utf8_lossy(&output.stdout);
        text.split_whitespace()
            .find_map(|field| field.strip_prefix("messages=")?.parse().ok())
            .ok_or_else(|| DovecotError::Doveadm {
                args: args.join(" "),
                said: format!("no message count in: {text}"),
            })
    }

    /// The UIDs of the messages in `user`'s `mailbox` flagged `\Seen`.
    pub fn seen(&self, user: &str, mailbox: &str) -> Result<Vec<u32>, DovecotError> {
        let args = ["search", "-u", user, "mailbox", mailbox, "SEEN"];
        let output = self.doveadm(&args).output().map_err(io("run doveadm"))?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        checked(&args, output)?;
        // Each match is a line: the mailbox's GUID, then the UID.
        Ok(text
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1)?.parse().ok())
            .collect())
    }

    /// Every message in `user`'s `mailbox`, whole, as `doveadm fetch` prints
    /// them (each after a `text:` line).
    pub fn messages(&self, user: &str, mailbox: &str) -> Result<String, DovecotError> {
        let args = ["fetch", "-u", user, "text", "mailbox", mailbox, "all"];
        let output = self.doveadm(&args).output().map_err(io("run doveadm"))?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned();
        checked(&args, output).map(|()| text)
    }

    /// Stops the server; its mail and ports stay for [`Dovecot::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(0)),
                nix::sys::signal::Signal::SIGTERM,
            );
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same ports with the same mail.
    pub fn restart(&mut self) -> Result<(), DovecotError> {
        self.stop();
        self.run()
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("dovecot.conf")
    }

    fn doveadm(&self, args: &[&str]) -> Command {
        let mut command = Command::new("doveadm");
        command.arg("-c").arg(self.config()).args(args);
        command
    }

    fn write_files(&self, users: &[User]) -> Result<(), DovecotError> {
        let root = self.dir.path();
        let write = |name: &str, text: &str| {
            std::fs::write(root.join(name), text).map_err(io(format!("write {name}")))
        };
        write("ca.pem", &self.ca.ca_pem)?;
        write("cert.pem", &self.ca.server_cert_pem)?;
        write("key.pem", &self.ca.server_key_pem)?;
        let passwd: String = users
            .iter()
            .map(|u| format!("{}:{{PLAIN}}{}::::::\n", u.login, u.password))
            .collect();
        write("users", &passwd)?;
        let mail = root.join("mail");
        std::fs::create_dir_all(&mail).map_err(io("make the mail directory"))?;
        // The mail user, nobody, owns the mailboxes it writes.
        std::os::unix::fs::chown(&mail, Some(NOBODY), Some(NOBODY))
            .map_err(io("chown the mail directory"))?;
        write("dovecot.conf", &configuration(root, self.imaps, self.lmtp))
    }

    fn run(&mut self) -> Result<(), DovecotError> {
        let child = Command::new("dovecot")
            .arg("-F")
            .arg("-c")
            .arg(self.config())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(io("start dovecot"))?;
        self.child = Some(child);
        let deadline = Instant::now() + STARTING;
        while Instant::now() < deadline {
            let up = [self.imaps, self.lmtp]
                .iter()
                .all(|at| TcpStream::connect_timeout(at, Duration::from_millis(200)).is_ok());
            if up {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.stop();
        Err(DovecotError::NotListening { log: self.log() })
    }
}

impl Drop for Dovecot {
    fn drop(&mut self) {
        self.stop();
    }
}

fn checked(args: &[&str], output: Output) -> Result<(), DovecotError> {
    if output.status.success() {
        return Ok(());
    }
    Err(DovecotError::Doveadm {
        args: args.join(" "),
        said: format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ),
    })
}

/// Every recipient LMTP is given gets a mailbox, so a test's SMTP server
/// can deliver to any address and the test read what each received; only
/// the passwd-file's users can log in over IMAP.
///
/// The whole configuration: nothing read from /etc/dovecot, so the host's
/// own Dovecot, if any, is neither used nor disturbed.
fn configuration(root: &Path, imaps: SocketAddr, lmtp: SocketAddr) -> String {
    let root = root.display();
    format!(
        r#"protocols = imap lmtp
listen = 127.0.0.1
base_dir = {root}/run
state_dir = {root}/state
instance_name = collegium-test-{imaps_port}
log_path = {root}/dovecot.log
default_internal_user = dovecot
default_login_user = dovenull
ssl = required
ssl_cert = <{root}/cert.pem
ssl_key = <{root}/key.pem
auth_mechanisms = plain login
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/users
}}
userdb {{
  driver = static
  args = uid=65534 gid=65534 home={root}/mail/%u allow_all_users=yes
}}
mail_location = maildir:~/Maildir
first_valid_uid = 1
postmaster_address = postmaster@mail.test
lmtp_save_to_detail_mailbox = no
service imap-login {{
  inet_listener imap {{
    port = 0
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps_port}
    ssl = yes
  }}
}}
service lmtp {{
  inet_listener lmtp {{
    address = 127.0.0.1
    port = {lmtp_port}
  }}
}}
"#,
        imaps_port = imaps.port(),
        lmtp_port = lmtp.port(),
    )
}
