//! `workspace::read` and `workspace::stat`: a window of a text file, and
//! what one path is, without following it.

use std::io::Read;

use rustix::fs::{FileType, Mode, OFlags};

use super::{Refusal, Workspace, binary};

/// How many characters a read returns when it names no length.
pub const READ_DEFAULT: usize = 8_000;
/// The most one read returns.
pub const READ_MAX: usize = 20_000;
/// The largest file read here; past it, grep or the shell reads it.
pub const FILE_MAX: u64 = 16 * 1024 * 1024;

/// Characters `offset..offset + length` of a text file, saying where the
/// window sits in the whole so nothing reads as complete that is not. A
/// file too large to read points at `workspace::grep` only for an agent
/// that holds it.
pub fn read(
    workspace: &Workspace,
    path: &str,
    offset: usize,
    length: Option<usize>,
    grep_held: bool,
) -> Result<String, Refusal> {
    let file = workspace.open_beneath(path, OFlags::RDONLY, Mode::empty())?;
    let status = rustix::fs::fstat(&file).map_err(|e| Refusal(format!("`{path}`: {e}")))?;
    if FileType::from_raw_mode(status.st_mode) != FileType::RegularFile {
        return Err(Refusal(format!("`{path}` is not a regular file.")));
    }
    let size = u64::try_from(status.st_size).unwrap_or(0);
    if size > FILE_MAX {
        let search = if grep_held {
            "; search it with workspace::grep"
        } else {
            ""
        };
        return Err(Refusal(format!(
            "`{path}` is {size} bytes, over the {FILE_MAX} this tool reads{search}."
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::from(file)
        .read_to_end(&mut bytes)
        .map_err(|e| Refusal(format!("`{path}` could not be read ({e}).")))?;
    if binary(&bytes) {
        return Err(Refusal(format!(
            "`{path}` is a binary file ({} bytes); this tool reads text.",
            bytes.len()
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let total = text.chars().count();
    let length = length.unwrap_or(READ_DEFAULT).min(READ_MAX);
    if offset > total {
        return Err(Refusal(format!(
            "`{path}` has {total} characters; offset {offset} is past its end."
        )));
    }
    let window: String = text.chars().skip(offset).take(length).collect();
    let end = offset + window.chars().count();
    if offset == 0 && end == total {
        return Ok(window);
    }
    let more = if end < total {
        format!("; read on from offset {end}")
    } else {
        String::new()
    };
    Ok(format!(
        "[`{path}`, characters {offset}–{end} of {total}{more}]\n{window}"
    ))
}

/// What `path` is: its kind, size, mode and when it changed; a symbolic
/// link is described, never followed.
pub fn stat(workspace: &Workspace, path: &str) -> Result<String, Refusal> {
    let handle = workspace.open_beneath(path, OFlags::PATH, Mode::empty())?;
    let status = rustix::fs::fstat(&handle).map_err(|e| Refusal(format!("`{path}`: {e}")))?;
    let kind = match FileType::from_raw_mode(status.st_mode) {
        FileType::RegularFile => "file".to_string(),
        FileType::Directory => "directory".to_string(),
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(&handle, "", Vec::new())
                .map(|t| t.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!("symbolic link to `{target}` (not followed)")
        }
        other => format!("{other:?}").to_lowercase(),
    };
    let modified = chrono::DateTime::from_timestamp(status.st_mtime, 0)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    Ok(format!(
        "`{path}`: {kind}, {} bytes, mode {:04o}, modified {modified}",
        status.st_size,
        status.st_mode & 0o7777
    ))
}
