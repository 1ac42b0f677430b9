//! Each agent's mailbox as the worker reads it from the deployment's
//! configuration (§3.13). The worker, not the daemon, maps an agent to its
//! mailbox and holds the passwords: a call names an agent, never a server or
//! a credential, so a daemon taken over can reach no mailbox but through the
//! tools (ARCHITECTURE §4).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// How a connection is secured. `none` is for a loopback relay only; the
/// operator chose it in the file (§3.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Tls {
    #[default]
    Implicit,
    Starttls,
    None,
}

/// Where a password is kept: only a file is accepted for mail, since the
/// daemon reads the configuration too and must never hold one (§3.13).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PasswordSource {
    pub file: Option<PathBuf>,
    pub env: Option<String>,
    pub value: Option<String>,
}

/// A password read from its file. Never printed: the shared redacting type,
/// whose `Debug` and `Display` say `[redacted]`, so no log line can carry it
/// (issue 21 item 6).
pub type Password = collegium_worker_kit::redact::Redacted<String>;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerEntry {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: PasswordSource,
    #[serde(default)]
    pub tls: Tls,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MailboxEntry {
    pub address: String,
    pub imap: ServerEntry,
    pub smtp: ServerEntry,
    pub announce_channel: String,
    pub poll_interval_secs: Option<u64>,
    pub html_template: Option<String>,
}

/// One server with its password read.
#[derive(Debug, Clone)]
pub struct Server {
    pub host: String,
    pub port: u16,
    pub username: String,
    pub password: Password,
    pub tls: Tls,
}

impl Server {
    /// `host:port`, as a refusal names the server.
    pub fn named(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

/// One agent's mailbox, ready to serve.
#[derive(Debug, Clone)]
pub struct Mailbox {
    pub address: String,
    pub imap: Server,
    pub smtp: Server,
    /// The template's text (`{{body}}` where the rendered body goes), read
    /// at start from beneath the resources root.
    pub html_template: Option<String>,
}

/// Every agent's mailbox, by agent username.
pub type Mailboxes = BTreeMap<String, Mailbox>;

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("agent {agent}: settings.mail.mailbox: {reason}")]
    Malformed { agent: String, reason: String },
    #[error(
        "agent {agent}: settings.mail.mailbox.{server}.password: the mail worker takes a password only from a file (`password = {{ file = \"...\" }}`), never inline or from the environment, which the daemon could read"
    )]
    NotAFile { agent: String, server: &'static str },
    #[error("agent {agent}: settings.mail.mailbox.{server}.password: {reason}")]
    Password {
        agent: String,
        server: &'static str,
        reason: String,
    },
    #[error("agent {agent}: settings.mail.mailbox.html_template: {reason}")]
    Template { agent: String, reason: String },
}

/// What reads a password file: the checks on who else could read it, then
/// its text (see `credentials`).
pub trait PasswordReader {
    fn read(&self, path: &Path) -> Result<Password, String>;
}

/// The mailbox entries of every agent granted `mail` in `loaded`, with each
/// password file's path made absolute against the configuration's folder.
pub fn entries(
    loaded: &collegium_control::config::LoadedConfig,
) -> Result<BTreeMap<String, MailboxEntry>, SettingsError> {
    let base = loaded
        .path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let mut found = BTreeMap::new();
    for agent in &loaded.agents {
        let Some(mailbox) = agent.settings.get("mail").and_then(|m| m.get("mailbox")) else {
            continue;
        };
        let mut entry: MailboxEntry =
            serde_json::from_value(mailbox.clone()).map_err(|e| SettingsError::Malformed {
                agent: agent.username.clone(),
                reason: e.to_string(),
            })?;
        for server in [&mut entry.imap, &mut entry.smtp] {
            if let Some(file) = &server.password.file
                && file.is_relative()
            {
                server.password.file = Some(base.join(file));
            }
        }
        found.insert(agent.username.clone(), entry);
    }
    Ok(found)
}

/// Reads each entry's passwords through `reader` and its template from
/// beneath `resources_root`.
pub fn resolve(
    entries: BTreeMap<String, MailboxEntry>,
    resources_root: &Path,
    reader: &dyn PasswordReader,
) -> Result<Mailboxes, SettingsError> {
    let mut mailboxes = Mailboxes::new();
    for (agent, entry) in entries {
        let imap = server(&agent, "imap", entry.imap, reader)?;
        let smtp = server(&agent, "smtp", entry.smtp, reader)?;
        let html_template = match entry.html_template {
            Some(name) => Some(template(&agent, resources_root, &name)?),
            None => None,
        };
        mailboxes.insert(
            agent,
            Mailbox {
                address: entry.address,
                imap,
                smtp,
                html_template,
            },
        );
    }
    Ok(mailboxes)
}

fn server(
    agent: &str,
    name: &'static str,
    entry: ServerEntry,
    reader: &dyn PasswordReader,
) -> Result<Server, SettingsError> {
    let (Some(file), None, None) = (
        &entry.password.file,
        &entry.password.env,
        &entry.password.value,
    ) else {
        return Err(SettingsError::NotAFile {
            agent: agent.to_string(),
            server: name,
        });
    };
    let password = reader
        .read(file)
        .map_err(|reason| SettingsError::Password {
            agent: agent.to_string(),
            server: name,
            reason,
        })?;
    Ok(Server {
        host: entry.host,
        port: entry.port,
        username: entry.username,
        password,
        tls: entry.tls,
    })
}

/// The template file, a relative path beneath the resources root that
/// climbs nowhere, holding `{{body}}`.
fn template(agent: &str, root: &Path, name: &str) -> Result<String, SettingsError> {
    let refuse = |reason: String| SettingsError::Template {
        agent: agent.to_string(),
        reason,
    };
    let relative = Path::new(name);
    let climbs = relative
        .components()
        .any(|c| !matches!(c, std::path::Component::Normal(_)));
    if relative.is_absolute() || climbs {
        return Err(refuse(format!(
            "`{name}` must be a path beneath the resources root {}, without `..`",
            root.display()
        )));
    }
    let path = root.join(relative);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| refuse(format!("cannot read {}: {e}", path.display())))?;
    if !text.contains(crate::compose::BODY_SLOT) {
        return Err(refuse(format!(
            "{} has no {} where the message's body goes",
            path.display(),
            crate::compose::BODY_SLOT
        )));
    }
    Ok(text)
}
