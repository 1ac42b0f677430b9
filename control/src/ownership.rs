//! Directories and files the deployment keeps from everyone else (A2): a
//! private directory is mode 0700, and a root process hands what it made to
//! the user that must use it (the daemon's token file, a plugin's socket and
//! audit directories).

use std::path::Path;

/// Creates `dir` and any missing parents, mode 0700; an existing one is
/// left as it is.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Gives `path` to `user` (and the user's group). True when its owner
/// changed; false when it already had it.
pub fn give(path: &Path, user: &nix::unistd::User) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path)?;
    let (uid, gid) = (user.uid.as_raw(), user.gid.as_raw());
    if metadata.uid() == uid && metadata.gid() == gid {
        return Ok(false);
    }
    std::os::unix::fs::chown(path, Some(uid), Some(gid))?;
    Ok(true)
}
