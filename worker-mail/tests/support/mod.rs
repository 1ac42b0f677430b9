//! The real mail worker for the crate's tests (§3.13): the binary started
//! as root, dropping to `collegium-mail`, against a real Dovecot and a real
//! OpenSMTPD delivering into it, reached over its socket with signed grants
//! as the daemon reaches it. Root only, as the mail servers are.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use collegium_proto::mail::v1::mailbox_client::MailboxClient;
use collegium_proto::toolset::v1::toolset_client::ToolsetClient;
use collegium_proto::toolset::v1::{
    Call, DescribeRequest, InvokeRequest, RenderRequest, RenderResponse, ToolResult, invoke_event,
    tool_result,
};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::grant::GrantSigner;
use mail_servers::{CutAfterDot, Dovecot, Smtpd, User};
use nix::unistd::User as Account;
use tonic::transport::Channel;

pub const AGENT: &str = "mira";
pub const ADDRESS: &str = "mira@mail.test";
pub const PASSWORD: &str = "tide-table-7731";

/// How a rig is set up.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The password the configuration's file holds, where not the right one.
    pub wrong_password: bool,
    /// SMTP through a relay that hangs up after the final dot.
    pub cut_after_dot: bool,
    /// An HTML template for the mailbox, holding `{{body}}`.
    pub template: Option<String>,
}

pub struct Rig {
    pub dovecot: Dovecot,
    pub smtpd: Smtpd,
    relay: Option<CutAfterDot>,
    dir: tempfile::TempDir,
    child: Child,
    pub tools: ToolsetClient<Channel>,
    pub mailbox: MailboxClient<Channel>,
    signer: GrantSigner,
    calls: AtomicU32,
}

/// The worker's user, made once per test process as `collegium-provision
/// host` makes it: tests run in parallel, and two `useradd`s at once race.
pub fn account() -> Account {
    static MADE: std::sync::OnceLock<()> = std::sync::OnceLock::new();
    MADE.get_or_init(|| {
        let mut outcome = collegium_provision::host::Outcome::default();
        collegium_provision::host::framework_users::converge(&mut outcome)
            .unwrap_or_else(|e| panic!("making the framework workers' users: {e}"));
    });
    Account::from_name("collegium-mail")
        .expect("look up collegium-mail")
        .expect("collegium-mail exists")
}

fn dir_for(path: &Path, owner: &Account, mode: u32) {
    std::fs::create_dir_all(path).expect("mkdir");
    chown(path, Some(owner.uid.as_raw()), Some(owner.gid.as_raw())).expect("chown");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

impl Rig {
    pub async fn start(options: Options) -> Self {
        let account = account();
        let dovecot =
            Dovecot::start(&[User::new(ADDRESS, PASSWORD)]).unwrap_or_else(|e| panic!("{e}"));
        let smtpd = Smtpd::start(dovecot.lmtp).unwrap_or_else(|e| panic!("{e}"));
        let relay = options
            .cut_after_dot
            .then(|| CutAfterDot::start(smtpd.smtp).expect("relay"));
        let smtp_port = relay.as_ref().map_or(smtpd.smtp.port(), |r| r.at.port());
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        let root = dir.path();
        for sub in ["run", "audit", "resources"] {
            std::fs::create_dir_all(root.join(sub)).expect("mkdir");
            std::fs::set_permissions(root.join(sub), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        dir_for(&root.join("run/mail"), &account, 0o750);
        dir_for(&root.join("audit/mail"), &account, 0o700);
        let password_file = root.join("mail.password");
        let password = if options.wrong_password {
            "not-the-password"
        } else {
            PASSWORD
        };
        std::fs::write(&password_file, format!("{password}\n")).expect("password");
        std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o600))
            .expect("chmod");
        std::fs::write(root.join("ca.pem"), dovecot.ca_pem()).expect("ca");
        let template = match &options.template {
            Some(text) => {
                std::fs::write(root.join("resources/mail.html"), text).expect("template");
                "html_template = \"mail.html\"\n"
            }
            None => "",
        };
        let config = format!(
            r#"[deployment]
operator_timezone = "UTC"
main_channel = "town-square"
state_dir = "{root}/state"
resources_root = "{root}/resources"
plugins_root = "{root}/plugins"
runtime_dir = "{root}/run"
audit_dir = "{root}/audit"
workspaces_root = "{root}/workspaces"
homes_root = "{root}/homes"

[mattermost]
url = "http://127.0.0.1:8065"
team = "collegium"

[models.sim]
provider = "openai-compatible"
model = "demo"
context_window = 128000

[[channels]]
name = "town-square"

[[channels]]
name = "inbox"

[[agents]]
username = "{AGENT}"
prompt = "You read mail."
model = "sim"
grants = ["mail"]

[agents.settings.mail.mailbox]
address = "{ADDRESS}"
announce_channel = "inbox"
{template}
[agents.settings.mail.mailbox.imap]
host = "localhost"
port = {imap}
username = "{ADDRESS}"
password = {{ file = "{password}" }}
tls = "implicit"

[agents.settings.mail.mailbox.smtp]
host = "127.0.0.1"
port = {smtp_port}
username = "{ADDRESS}"
password = {{ file = "{password}" }}
tls = "none"
"#,
            root = root.display(),
            imap = dovecot.imaps.port(),
            password = password_file.display(),
        );
        std::fs::write(root.join("collegium.toml"), config).expect("config");
        let child = spawn(root);
        let socket = root.join("run/mail/toolset.sock");
        let channel = collegium_worker_kit::client::channel(&socket, Some(account.uid.as_raw()))
            .await
            .expect("connect to the mail worker");
        let mut tools = ToolsetClient::new(channel.clone());
        let signer = GrantSigner::generate("boot-mail");
        tools
            .describe(DescribeRequest {
                protocol_version: collegium_proto::PROTOCOL_VERSION,
                boot_id: signer.boot_id().to_string(),
                grant_public_key: signer.public_key().to_vec(),
            })
            .await
            .expect("handshake");
        Self {
            dovecot,
            smtpd,
            relay,
            dir,
            child,
            tools,
            mailbox: MailboxClient::new(channel).max_decoding_message_size(usize::MAX),
            signer,
            calls: AtomicU32::new(0),
        }
    }

    /// Everything the worker wrote on stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("worker.stderr")).unwrap_or_default()
    }

    /// Stores `message` in the agent's INBOX.
    pub fn seed(&self, message: &[u8]) {
        self.dovecot
            .seed(ADDRESS, "INBOX", message)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn call(&self, tool: &str, arguments: serde_json::Value) -> Call {
        let n = self.calls.fetch_add(1, Ordering::Relaxed);
        Call {
            agent: AGENT.into(),
            turn_id: "turn-mail".into(),
            call_id: format!("mail-{n}"),
            tool: tool.into(),
            arguments_json: arguments.to_string().into_bytes(),
            settings_json: "{}".into(),
            deadline_unix_ms: now_ms() + 120_000,
            channel: "inbox".into(),
            held_tools: Vec::new(),
            unit: String::new(),
        }
    }

    /// `mail::<tool>` with `arguments`, granted as the daemon grants it (a
    /// gated tool with a decision).
    pub async fn invoke(&self, tool: &str, arguments: serde_json::Value) -> ToolResult {
        let call = self.call(tool, arguments);
        let decision = if ["send", "reply"].contains(&tool) {
            "decision-1"
        } else {
            ""
        };
        let grant = self.signer.sign("mail", &call, decision, now_ms());
        let mut events = self
            .tools
            .clone()
            .invoke(InvokeRequest {
                call: Some(call),
                grant: Some(grant),
            })
            .await
            .expect("invoke")
            .into_inner();
        while let Some(event) = events.message().await.expect("event") {
            if let Some(invoke_event::Event::Result(result)) = event.event {
                return result;
            }
        }
        panic!("the call ended without a result")
    }

    pub async fn render(
        &self,
        tool: &str,
        arguments: serde_json::Value,
    ) -> Result<RenderResponse, tonic::Status> {
        let call = self.call(tool, arguments);
        self.tools
            .clone()
            .render(RenderRequest { call: Some(call) })
            .await
            .map(tonic::Response::into_inner)
    }

    /// Waits until `user` has `count` messages, and no more.
    pub fn wait_for(&self, user: &str, count: u32) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let now = self
                .dovecot
                .count(user, "INBOX")
                .unwrap_or_else(|e| panic!("{e}"));
            if now >= count {
                assert_eq!(now, count, "{user} got more than was sent");
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{user} has {now} of {count}; smtpd said:\n{}",
                self.smtpd.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap_or(0)),
            nix::sys::signal::Signal::SIGTERM,
        );
        let _ = self.child.wait();
    }
}

fn spawn(root: &Path) -> Child {
    let stderr = std::fs::File::create(root.join("worker.stderr")).expect("stderr file");
    let mut child = Command::new(env!("CARGO_BIN_EXE_collegium-worker-mail"))
        .arg("serve")
        .arg("--config")
        .arg(root.join("collegium.toml"))
        .arg("--allow-uid")
        .arg("0")
        .arg("--trust")
        .arg(root.join("ca.pem"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("start the mail worker");
    let stdout = child.stdout.take().expect("stdout");
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    if read.is_err() || line.trim() != "ready" {
        let _ = child.kill();
        let said = std::fs::read_to_string(root.join("worker.stderr")).unwrap_or_default();
        panic!("the mail worker did not start: {line}\n{said}");
    }
    child
}

/// The text of a successful result, or a panic naming what came instead.
pub fn text(result: &ToolResult) -> &str {
    match &result.outcome {
        Some(tool_result::Outcome::Success(success)) => &success.text,
        other => panic!("expected a success, got {other:?}"),
    }
}

/// A plain message.
pub fn plain(from: &str, subject: &str, id: &str, body: &str) -> Vec<u8> {
    format!(
        "From: {from}\r\nTo: {ADDRESS}\r\nSubject: {subject}\r\nMessage-ID: <{id}>\r\nDate: Mon, 1 Jun 2026 09:00:00 +0000\r\n\r\n{body}\r\n"
    )
    .into_bytes()
}

/// The worker's path for a message's id: the `message X.Y` in a listing.
pub fn ids(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- message "))
        .map(|rest| {
            rest.split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}
