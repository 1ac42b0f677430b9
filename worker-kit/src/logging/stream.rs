//! Whether stderr is the journal. systemd says so by setting
//! `JOURNAL_STREAM=DEV:INODE` to the device and inode of the stream it
//! connected to stdout and stderr; a process whose stderr no longer is that
//! stream (redirected by a wrapper, inherited by a child) must not assume the
//! journal (systemd.exec(5), "JOURNAL_STREAM").

use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

/// A file's identity as `stat(2)` gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
}

/// Parses `JOURNAL_STREAM`'s `DEV:INODE` (both decimal); anything else is
/// no claim at all.
pub fn parse(value: &str) -> Option<FileId> {
    let (dev, ino) = value.trim().split_once(':')?;
    Some(FileId {
        dev: dev.parse().ok()?,
        ino: ino.parse().ok()?,
    })
}

/// The identity of this process's stderr, through a duplicate of the
/// descriptor (a safe `fstat`); `None` when stderr is closed.
pub fn stderr_id() -> Option<FileId> {
    let owned = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
    let meta = File::from(owned).metadata().ok()?;
    Some(FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// Whether `JOURNAL_STREAM` (as given) names this stderr.
pub fn names_stderr(journal_stream: Option<&str>, stderr: Option<FileId>) -> bool {
    match (journal_stream.and_then(parse), stderr) {
        (Some(claimed), Some(actual)) => claimed == actual,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn i21_journal_stream_is_dev_colon_inode() {
        assert_eq!(
            parse("64769:1234"),
            Some(FileId {
                dev: 64769,
                ino: 1234
            })
        );
        assert_eq!(parse("8:9\n"), Some(FileId { dev: 8, ino: 9 }));
        assert_eq!(parse(""), None);
        assert_eq!(parse("8"), None);
        assert_eq!(parse("x:9"), None);
        assert_eq!(parse("8:-9"), None);
    }

    #[test]
    fn i21_only_the_stream_named_counts_as_the_journal() {
        let file = tempfile::tempfile().expect("tempfile");
        let meta = file.metadata().expect("stat");
        let id = FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        };
        let named = format!("{}:{}", id.dev, id.ino);
        assert!(names_stderr(Some(&named), Some(id)));
        let other = format!("{}:{}", id.dev, id.ino + 1);
        assert!(!names_stderr(Some(&other), Some(id)));
        assert!(!names_stderr(None, Some(id)));
        assert!(!names_stderr(Some(&named), None));
    }
}
