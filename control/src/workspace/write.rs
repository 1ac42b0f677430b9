//! `workspace::write` (gated, §3.7): the daemon writes a file into the
//! agent's workspace, where the agent's shell can read it by its path (A2).
//! Missing directories are made beneath the workspace; the file is written
//! beside its final name and renamed into place, so a reader never sees half
//! of it; an existing symbolic link is never written through.

use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

use super::{Refusal, Workspace, open_in, refusal, relative};

/// Files the daemon writes: its own, readable by the workspace's group.
const FILE_MODE: u32 = 0o640;
/// Directories it makes: the group's setgid carries on from the workspace.
const DIR_MODE: u32 = 0o2750;

/// Writes `content` to `path`, replacing what was there.
pub fn write(workspace: &Workspace, path: &str, content: &str) -> Result<String, Refusal> {
    let relative = relative(path)?;
    let target = Path::new(relative);
    let Some(name) = target.file_name() else {
        return Err(Refusal(format!("`{path}` names no file.")));
    };
    let parent = parent_dir(workspace, target.parent(), path)?;
    // Unique per write, and created exclusively: two writes of one path
    // (two lanes of one agent) never share a half-written file.
    let temporary = format!(".{}.{}.part", name.to_string_lossy(), uuid::Uuid::new_v4());
    let file = rustix::fs::openat2(
        &parent,
        temporary.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(FILE_MODE),
        ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
    )
    .map_err(|errno| refusal(path, errno))?;
    // The daemon's umask must not take the group's read away (A2).
    let written = rustix::fs::fchmod(&file, Mode::from_raw_mode(FILE_MODE))
        .map_err(std::io::Error::from)
        .and_then(|()| std::fs::File::from(file).write_all(content.as_bytes()));
    if let Err(error) = written {
        let _ = rustix::fs::unlinkat(&parent, temporary.as_str(), rustix::fs::AtFlags::empty());
        return Err(Refusal(format!("`{path}` could not be written ({error}).")));
    }
    if let Err(errno) = refuse_link_or_dir(&parent, name) {
        let _ = rustix::fs::unlinkat(&parent, temporary.as_str(), rustix::fs::AtFlags::empty());
        return Err(refusal(path, errno));
    }
    rustix::fs::renameat(&parent, temporary.as_str(), &parent, name)
        .map_err(|errno| refusal(path, errno))?;
    Ok(format!(
        "Wrote {} bytes to `{path}` in your workspace.",
        content.len()
    ))
}

/// The directory a file goes in, made beneath the workspace where missing.
fn parent_dir(
    workspace: &Workspace,
    parent: Option<&Path>,
    shown: &str,
) -> Result<OwnedFd, Refusal> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY;
    let mut dir = workspace.open_beneath(".", flags, Mode::empty())?;
    for component in parent.into_iter().flat_map(Path::components) {
        let step = component.as_os_str();
        let opened = open_in(&dir, step, flags);
        dir = match opened {
            Ok(next) => next,
            Err(Errno::NOENT) => {
                rustix::fs::mkdirat(&dir, step, Mode::from_raw_mode(DIR_MODE))
                    .map_err(|errno| refusal(shown, errno))?;
                let made = open_in(&dir, step, flags).map_err(|errno| refusal(shown, errno))?;
                // The umask must not take the group's access away; the
                // setgid bit the directory inherited is kept as it is.
                let inherited = rustix::fs::fstat(&made).map_or(0, |s| s.st_mode & 0o2000);
                rustix::fs::fchmod(&made, Mode::from_raw_mode((DIR_MODE & 0o777) | inherited))
                    .map_err(|errno| refusal(shown, errno))?;
                made
            }
            // A link where a directory goes reads as "not a directory"
            // with O_NOFOLLOW: say what it is.
            Err(Errno::NOTDIR) if refuse_link_or_dir(&dir, step) == Err(Errno::LOOP) => {
                return Err(refusal(shown, Errno::LOOP));
            }
            Err(errno) => return Err(refusal(shown, errno)),
        };
    }
    Ok(dir)
}

/// A symbolic link or a directory where the file goes is refused: the
/// rename would replace the link itself, but the model asked to write a
/// file, not to remove a link.
fn refuse_link_or_dir(parent: &OwnedFd, name: &std::ffi::OsStr) -> Result<(), Errno> {
    match rustix::fs::statat(parent, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW) {
        Ok(status) => match rustix::fs::FileType::from_raw_mode(status.st_mode) {
            rustix::fs::FileType::Symlink => Err(Errno::LOOP),
            rustix::fs::FileType::Directory => Err(Errno::ISDIR),
            _ => Ok(()),
        },
        Err(Errno::NOENT) => Ok(()),
        Err(errno) => Err(errno),
    }
}
