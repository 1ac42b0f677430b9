//! The credentials file: every bot account's token and the `/collegium`
//! command's token, written by `collegium-provision mattermost` into the
//! state directory, mode 0600, and read by the daemon at boot (§3.1). The
//! daemon never holds the admin's credentials.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The file's name in the state directory.
pub const FILE: &str = "mattermost-credentials.json";

pub fn path(state_dir: &Path) -> PathBuf {
    state_dir.join(FILE)
}

#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    /// The server these were minted on.
    pub server: String,
    pub team_id: String,
    /// By username: every agent's bot and the system bot.
    pub accounts: BTreeMap<String, Account>,
    pub command: Option<CommandCredential>,
}

#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Account {
    pub user_id: String,
    pub token_id: String,
    /// The bot's token: `[redacted]` in any `Debug`; only this file holds it.
    #[serde(serialize_with = "collegium_worker_kit::redact::serialize_exposed")]
    pub token: collegium_worker_kit::redact::Redacted<String>,
}

#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandCredential {
    pub command_id: String,
    /// Mattermost's token for the command: every execution carries it, and
    /// the command route checks it (§6.4).
    #[serde(serialize_with = "collegium_worker_kit::redact::serialize_exposed")]
    pub token: collegium_worker_kit::redact::Redacted<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Tokens are credentials: only the accounts are named.
        f.debug_struct("Credentials")
            .field("server", &self.server)
            .field("accounts", &self.accounts.keys().collect::<Vec<_>>())
            .field("command", &self.command.as_ref().map(|c| &c.command_id))
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CredentialsError {
    #[error("{path} does not exist")]
    Missing { path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not a credentials file: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub fn load(path: &Path) -> Result<Credentials, CredentialsError> {
    let text = std::fs::read_to_string(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => CredentialsError::Missing {
            path: path.to_path_buf(),
        },
        _ => CredentialsError::Read {
            path: path.to_path_buf(),
            source,
        },
    })?;
    serde_json::from_str(&text).map_err(|e| CredentialsError::Malformed {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// Writes the file whole, mode 0600, replacing the old one only once the new
/// one is complete.
pub fn save(path: &Path, credentials: &Credentials) -> Result<(), CredentialsError> {
    use std::os::unix::fs::OpenOptionsExt;
    let write_error = |source| CredentialsError::Write {
        path: path.to_path_buf(),
        source,
    };
    let text = serde_json::to_string_pretty(credentials)
        .map_err(|e| write_error(std::io::Error::other(e)))?;
    let tmp = path.with_extension("json.tmp");
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(write_error)?;
    file.write_all(text.as_bytes()).map_err(write_error)?;
    file.sync_all().map_err(write_error)?;
    std::fs::rename(&tmp, path).map_err(write_error)
}
