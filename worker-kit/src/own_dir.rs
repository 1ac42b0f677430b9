//! A worker's own directory under the deployment's runtime or audit
//! directory (ARCHITECTURE §4): made by `collegium-provision host`, owned by
//! the worker's user, and closed to others. A worker that finds it otherwise
//! refuses to start rather than serve from a directory another user shapes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum OwnDirError {
    #[error("{}: make it with collegium-provision host (this worker's user owns it): {source}", path.display())]
    Missing {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{} must be a directory of this worker's user (uid {me}) closed to others (mode {mode:04o} found, owner uid {owner}); collegium-provision host makes it",
        path.display()
    )]
    Wrong {
        path: PathBuf,
        me: u32,
        mode: u32,
        owner: u32,
    },
}

/// `path`, where it is a directory of this process's user whose mode has
/// none of the `forbidden` bits.
pub fn own_dir(path: &Path, forbidden: u32) -> Result<PathBuf, OwnDirError> {
    let found = std::fs::symlink_metadata(path).map_err(|source| OwnDirError::Missing {
        path: path.to_path_buf(),
        source,
    })?;
    let me = nix::unistd::geteuid().as_raw();
    if !found.is_dir() || found.uid() != me || found.mode() & forbidden != 0 {
        return Err(OwnDirError::Wrong {
            path: path.to_path_buf(),
            me,
            mode: found.mode() & 0o7777,
            owner: found.uid(),
        });
    }
    Ok(path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn with_mode(dir: &Path, mode: u32) {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn arch4_a_workers_own_directory_closed_to_others_is_taken() {
        let root = tempfile::tempdir().expect("tempdir");
        let dir = root.path().join("mail");
        std::fs::create_dir(&dir).expect("mkdir");
        with_mode(&dir, 0o750);
        assert_eq!(own_dir(&dir, 0o027).expect("its own"), dir);
    }

    #[test]
    fn arch4_a_directory_open_to_others_missing_or_not_a_directory_is_refused() {
        let root = tempfile::tempdir().expect("tempdir");
        let open = root.path().join("open");
        std::fs::create_dir(&open).expect("mkdir");
        with_mode(&open, 0o757);
        let refused = own_dir(&open, 0o027).expect_err("others may write");
        assert!(refused.to_string().contains("mode 0757 found"), "{refused}");
        let missing = own_dir(&root.path().join("absent"), 0o027).expect_err("missing");
        assert!(matches!(missing, OwnDirError::Missing { .. }), "{missing}");
        let file = root.path().join("file");
        std::fs::write(&file, b"").expect("write");
        assert!(matches!(
            own_dir(&file, 0o027),
            Err(OwnDirError::Wrong { .. })
        ));
    }

    #[test]
    fn arch4_a_directory_of_another_user_is_refused() {
        let root = tempfile::tempdir().expect("tempdir");
        let theirs = root.path().join("theirs");
        std::fs::create_dir(&theirs).expect("mkdir");
        with_mode(&theirs, 0o700);
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534))
            .expect("chown (as root, as the suite runs)");
        let refused = own_dir(&theirs, 0o027).expect_err("not its own");
        assert!(refused.to_string().contains("owner uid 65534"), "{refused}");
    }
}
