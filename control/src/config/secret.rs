//! Secrets in the configuration: inline, in a file, or in an environment
//! variable. A secret is never printed: its `Debug` and every summary show
//! only where it comes from (ARCHITECTURE §7).

use std::fmt;
use std::path::{Path, PathBuf};

use collegium_worker_kit::redact::Redacted;
use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

/// Exactly one of `file`, `env` or `value`. A file is read by the process that
/// needs the secret, so the mail password need never be readable by the daemon.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Secret {
    /// A file holding the secret (surrounding whitespace is ignored).
    pub file: Option<PathBuf>,
    /// An environment variable holding the secret.
    pub env: Option<String>,
    /// The secret itself. Prefer `file`: a config file is often readable by more
    /// people than its secrets should be.
    pub value: Option<String>,
}

/// Where a secret comes from, without its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource<'a> {
    File(&'a std::path::Path),
    Env(&'a str),
    Inline,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("give exactly one of `file`, `env` or `value`")]
    Ambiguous,
    #[error("cannot read the secret file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the environment variable {0} is not set")]
    Env(String),
    #[error("the secret is empty")]
    Empty,
}

impl Secret {
    pub fn source(&self) -> Result<SecretSource<'_>, SecretError> {
        match (&self.file, &self.env, &self.value) {
            (Some(path), None, None) => Ok(SecretSource::File(path)),
            (None, Some(var), None) => Ok(SecretSource::Env(var)),
            (None, None, Some(_)) => Ok(SecretSource::Inline),
            _ => Err(SecretError::Ambiguous),
        }
    }

    /// Reads the secret. Only the process that uses it calls this, at the moment
    /// it needs it; the value stays `Redacted`, so no log line can print it
    /// (issue 21 item 6).
    pub fn reveal(&self) -> Result<Redacted<String>, SecretError> {
        let raw = match self.source()? {
            SecretSource::File(path) => {
                std::fs::read_to_string(path).map_err(|source| SecretError::File {
                    path: path.to_path_buf(),
                    source,
                })?
            }
            SecretSource::Env(var) => {
                std::env::var(var).map_err(|_| SecretError::Env(var.to_string()))?
            }
            SecretSource::Inline => self.value.clone().unwrap_or_default(),
        };
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(SecretError::Empty);
        }
        Ok(Redacted::new(trimmed.to_string()))
    }
}

/// Where systemd puts each unit's credentials (`LoadCredential=`):
/// `/run/credentials/UNIT/NAME`, and `$CREDENTIALS_DIRECTORY` is that
/// unit's directory.
const CREDENTIALS_ROOT: &str = "/run/credentials";

/// The unit and name of the systemd credential `path` is, where it is one.
pub fn credential(path: &Path) -> Option<(&str, &str)> {
    let rest = path.strip_prefix(CREDENTIALS_ROOT).ok()?;
    let mut parts = rest.components();
    let unit = parts.next()?.as_os_str().to_str()?;
    let name = parts.next()?.as_os_str().to_str()?;
    parts.next().is_none().then_some((unit, name))
}

/// Whether `path` is a credential of a unit other than the one whose
/// credentials this process holds (`own`, its `$CREDENTIALS_DIRECTORY`).
/// Such a file exists only while its unit runs, and only for it: every
/// process that loads the configuration sees every secret's path, and one
/// ordered before that unit (the provisioner before the mail worker) must
/// not take the file's absence for a missing secret.
pub fn another_units_credential(path: &Path, own: Option<&Path>) -> bool {
    credential(path)
        .is_some_and(|(unit, _)| own != Some(Path::new(CREDENTIALS_ROOT).join(unit).as_path()))
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source() {
            Ok(SecretSource::File(path)) => match credential(path) {
                Some((unit, name)) => write!(f, "from {unit}'s credential {name}"),
                None => write!(f, "from file {}", path.display()),
            },
            Ok(SecretSource::Env(var)) => write!(f, "from ${var}"),
            Ok(SecretSource::Inline) => f.write_str("inline (hidden)"),
            Err(_) => f.write_str("(malformed)"),
        }
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret({self})")
    }
}

/// Serialises where the secret comes from and never its value, so no path
/// through serde (a schema default, a debug dump) can print one.
impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self.source() {
            Ok(SecretSource::File(path)) => map.serialize_entry("file", path)?,
            Ok(SecretSource::Env(var)) => map.serialize_entry("env", var)?,
            Ok(SecretSource::Inline) | Err(_) => map.serialize_entry("value", "(hidden)")?,
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inline(value: &str) -> Secret {
        Secret {
            file: None,
            env: None,
            value: Some(value.to_string()),
        }
    }

    #[test]
    fn an_inline_secret_is_never_printed() {
        let secret = inline("sk-very-secret");
        assert!(!format!("{secret}").contains("very-secret"));
        assert!(!format!("{secret:?}").contains("very-secret"));
        let json = serde_json::to_string(&secret).expect("serialise");
        assert!(!json.contains("very-secret"), "{json}");
        let revealed = secret.reveal().expect("reveal");
        assert_eq!(format!("{revealed} {revealed:?}"), "[redacted] [redacted]");
        assert_eq!(revealed.expose(), "sk-very-secret");
    }

    #[test]
    fn a_file_secret_is_read_trimmed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("key");
        std::fs::write(&path, "  abc\n").expect("write");
        let secret = Secret {
            file: Some(path),
            env: None,
            value: None,
        };
        assert_eq!(secret.reveal().expect("reveal").expose(), "abc");
    }

    #[test]
    fn two_sources_are_refused() {
        let secret = Secret {
            file: Some("/x".into()),
            env: Some("X".into()),
            value: None,
        };
        assert!(matches!(secret.source(), Err(SecretError::Ambiguous)));
    }

    #[test]
    fn a_credential_is_known_by_its_unit_and_name() {
        let mail = Path::new("/run/credentials/collegium-worker-mail.service/mailbox_theo");
        assert_eq!(
            credential(mail),
            Some(("collegium-worker-mail.service", "mailbox_theo"))
        );
        assert_eq!(credential(Path::new("/run/credentials/x.service")), None);
        assert_eq!(
            credential(Path::new("/run/credentials/x.service/a/b")),
            None
        );
        assert_eq!(credential(Path::new("/etc/collegium/secrets/key")), None);
        let secret = Secret {
            file: Some(mail.to_path_buf()),
            env: None,
            value: None,
        };
        assert_eq!(
            secret.to_string(),
            "from collegium-worker-mail.service's credential mailbox_theo"
        );
    }

    #[test]
    fn only_another_units_credential_goes_unlooked_for() {
        let mail = Path::new("/run/credentials/collegium-worker-mail.service/mailbox_theo");
        // The provisioner and the daemon hold none of the mail worker's.
        assert!(another_units_credential(mail, None));
        assert!(another_units_credential(
            mail,
            Some(Path::new("/run/credentials/collegium.service"))
        ));
        // The mail worker's own is a file it must find.
        assert!(!another_units_credential(
            mail,
            Some(Path::new("/run/credentials/collegium-worker-mail.service"))
        ));
        assert!(!another_units_credential(
            Path::new("/etc/collegium/mailboxes/theo"),
            None
        ));
    }
}
