//! Reading a mailbox password file (§3.13, ARCHITECTURE §4). The worker is
//! the only process that ever reads one, so a file another user could read
//! (its group, everyone, or the daemon's own user owning it) is refused
//! before its text is taken: the daemon's compromise must not reach a
//! mailbox but through the tools.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::settings::{Password, PasswordReader};

/// Reads password files, refusing any the daemon's user could read.
pub struct Files {
    /// The daemon's uid, where it exists on this host.
    pub daemon_uid: Option<u32>,
}

impl PasswordReader for Files {
    fn read(&self, path: &Path) -> Result<Password, String> {
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        if !meta.is_file() {
            return Err(format!("{shown} is not a file"));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "{shown} may be read by its group or others (mode {:04o}); make it 0600, readable by the mail worker's user alone",
                meta.mode() & 0o7777
            ));
        }
        if self.daemon_uid == Some(meta.uid()) {
            return Err(format!(
                "{shown} belongs to the daemon's user, which must never hold a mailbox password; give it to root or collegium-mail"
            ));
        }
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        let password = text.trim();
        if password.is_empty() {
            return Err(format!("{shown} is empty"));
        }
        Ok(Password::new(password.to_string()))
    }
}
