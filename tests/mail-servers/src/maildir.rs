//! Writing messages straight into a Maildir, for a benchmark's mailbox of
//! tens of thousands: `doveadm save` takes ~20 ms a message, a file written
//! here well under one. Dovecot takes the files in on its next sync and
//! numbers them by the time in their names, so they are named oldest first.

use std::fs::{File, FileTimes};
use std::os::unix::fs::{PermissionsExt, chown};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The uid and gid mail is stored as (Debian's nobody and nogroup).
pub(crate) const NOBODY: u32 = 65534;

/// How long after a folder's last change Dovecot trusts its directory's
/// time, with room to spare: it rescans a folder changed within the second
/// it last looked.
pub(crate) const SETTLED: Duration = Duration::from_secs(2);

/// The host part of each file's name: any stable word serves, Dovecot only
/// needs the names unique.
const HOST: &str = "collegium-test";

/// The folder holding `mailbox` in the Maildir++ layout under `maildir`:
/// the INBOX is the Maildir itself, another mailbox a dot-folder.
pub(crate) fn folder(maildir: &Path, mailbox: &str) -> PathBuf {
    if mailbox.eq_ignore_ascii_case("INBOX") {
        maildir.to_path_buf()
    } else {
        maildir.join(format!(".{}", mailbox.replace('/', ".")))
    }
}

/// Makes `dir` (and any missing parent up to it) owned by the mail user,
/// readable by it alone, as Dovecot makes its own.
fn owned_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    chown(dir, Some(NOBODY), Some(NOBODY))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Writes `count` messages, `message(i)` for `i` in `0..count`, into
/// `folder`'s `cur/` as unread mail, owned by the mail user. Message `i`
/// arrived `count - i` seconds before now: its file's time, which Dovecot
/// reports as its INTERNALDATE, and the time in its name, which orders the
/// UIDs it is given.
pub(crate) fn write(
    home: &Path,
    folder: &Path,
    count: u32,
    message: &mut dyn FnMut(u32) -> Vec<u8>,
) -> std::io::Result<()> {
    // Outermost first: each is made before what it holds.
    let mut dirs: Vec<&Path> = folder
        .ancestors()
        .take_while(|d| d.starts_with(home))
        .collect();
    dirs.reverse();
    for dir in dirs {
        owned_dir(dir)?;
    }
    if folder
        .file_name()
        .is_some_and(|n| n.as_encoded_bytes().starts_with(b"."))
    {
        // Maildir++ marks a mailbox other than the INBOX so.
        let marker = folder.join("maildirfolder");
        File::create(&marker)?;
        chown(&marker, Some(NOBODY), Some(NOBODY))?;
    }
    for sub in ["cur", "new", "tmp"] {
        owned_dir(&folder.join(sub))?;
    }
    let now = SystemTime::now();
    let now_secs = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let pid = std::process::id();
    let cur = folder.join("cur");
    for i in 0..count {
        let bytes = message(i);
        let ago = u64::from(count - i);
        let arrived = now - Duration::from_secs(ago);
        // `S=` is the file's size, which Dovecot trusts in place of a stat;
        // `:2,` with no flags is mail not yet read.
        let name = format!(
            "{}.M{i}P{pid}.{HOST},S={}:2,",
            now_secs.saturating_sub(ago),
            bytes.len()
        );
        let path = cur.join(name);
        std::fs::write(&path, &bytes)?;
        chown(&path, Some(NOBODY), Some(NOBODY))?;
        File::options()
            .write(true)
            .open(&path)?
            .set_times(FileTimes::new().set_accessed(arrived).set_modified(arrived))?;
    }
    Ok(())
}
