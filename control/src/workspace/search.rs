//! `workspace::list`, `workspace::find` and `workspace::grep`: walks of the
//! workspace that never follow a link, each stopping at its cap and saying
//! so, so a cut list never reads as the whole.

use std::ffi::OsStr;
use std::io::Read;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;

use rustix::fs::{FileType, Mode, OFlags};

use super::{Caps, Refusal, Workspace, binary, open_in, read::FILE_MAX};

/// The deepest `list` goes.
pub const LIST_DEPTH_MAX: usize = 5;
/// How many entries one walk visits before it stops, whatever it looks for.
pub const WALK_MAX: usize = 50_000;
/// The longest line `grep` shows whole.
pub const LINE_MAX: usize = 300;

/// One thing a walk found.
struct Entry<'a> {
    /// Relative to the workspace.
    path: String,
    kind: FileType,
    depth: usize,
    parent: &'a OwnedFd,
    name: &'a OsStr,
}

/// Whether a walk goes on.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

/// Walks the directory `start` depth-first in name order down to
/// `max_depth`; false when it stopped early (a visitor's stop or
/// `WALK_MAX`).
fn walk(
    workspace: &Workspace,
    start: &str,
    max_depth: usize,
    visit: &mut dyn FnMut(&Entry<'_>) -> Flow,
) -> Result<bool, Refusal> {
    let dir = workspace.open_beneath(start, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
    let prefix = match start.trim_end_matches('/') {
        "" | "." => String::new(),
        other => format!("{other}/"),
    };
    let mut visited = 0;
    walk_dir(&dir, &prefix, 1, max_depth, &mut visited, visit)
}

fn walk_dir(
    dir: &OwnedFd,
    prefix: &str,
    depth: usize,
    max_depth: usize,
    visited: &mut usize,
    visit: &mut dyn FnMut(&Entry<'_>) -> Flow,
) -> Result<bool, Refusal> {
    let listing = rustix::fs::Dir::read_from(dir)
        .map_err(|e| Refusal(format!("`{prefix}` could not be listed ({e}).")))?;
    let mut names: Vec<(Vec<u8>, FileType)> = listing
        .filter_map(Result::ok)
        .map(|e| (e.file_name().to_bytes().to_vec(), e.file_type()))
        .filter(|(name, _)| name.as_slice() != b"." && name.as_slice() != b"..")
        .collect();
    names.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, kind) in names {
        *visited += 1;
        if *visited > WALK_MAX {
            return Ok(false);
        }
        let name = OsStr::from_bytes(&name);
        let path = format!("{prefix}{}", name.to_string_lossy());
        let entry = Entry {
            path: path.clone(),
            kind,
            depth,
            parent: dir,
            name,
        };
        if visit(&entry) == Flow::Stop {
            return Ok(false);
        }
        if kind == FileType::Directory && depth < max_depth {
            let Ok(child) = open_in(dir, name, OFlags::RDONLY | OFlags::DIRECTORY) else {
                continue;
            };
            if !walk_dir(
                &child,
                &format!("{path}/"),
                depth + 1,
                max_depth,
                visited,
                visit,
            )? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

fn line_for(entry: &Entry<'_>) -> String {
    let indent = "  ".repeat(entry.depth - 1);
    let name = entry.name.to_string_lossy();
    match entry.kind {
        FileType::Directory => format!("{indent}{name}/"),
        FileType::Symlink => format!("{indent}{name} (symbolic link, not followed)"),
        _ => format!("{indent}{name}"),
    }
}

/// The directory `path`, `depth` levels down, one entry a line.
pub fn list(
    workspace: &Workspace,
    path: &str,
    depth: usize,
    caps: &Caps,
) -> Result<String, Refusal> {
    let depth = depth.clamp(1, LIST_DEPTH_MAX);
    let mut lines = Vec::new();
    let whole = walk(workspace, path, depth, &mut |entry| {
        if lines.len() == caps.list_entries {
            return Flow::Stop;
        }
        lines.push(line_for(entry));
        Flow::Continue
    })?;
    let shown = if path.is_empty() { "." } else { path };
    if lines.is_empty() {
        return Ok(format!("`{shown}` is empty."));
    }
    let mut out = lines.join("\n");
    if !whole {
        out.push_str(&format!(
            "\n[The list stops at {} entries; list a subdirectory or less depth to see the rest.]",
            lines.len()
        ));
    }
    Ok(out)
}

/// Paths matching `pattern` (a glob over the path from the workspace's
/// root, `**` crossing directories).
pub fn find(workspace: &Workspace, pattern: &str, caps: &Caps) -> Result<String, Refusal> {
    let glob = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| Refusal(format!("`{pattern}` is not a glob this tool reads: {e}.")))?
        .compile_matcher();
    let mut found = Vec::new();
    let whole = walk(workspace, "", usize::MAX, &mut |entry| {
        if glob.is_match(&entry.path) {
            if found.len() == caps.find_matches {
                return Flow::Stop;
            }
            found.push(entry.path.clone());
        }
        Flow::Continue
    })?;
    if found.is_empty() {
        return Ok(format!("Nothing in your workspace matches `{pattern}`."));
    }
    let mut out = found.join("\n");
    if !whole {
        out.push_str(&format!(
            "\n[The search stops at {} paths; narrow the glob to see the rest.]",
            found.len()
        ));
    }
    Ok(out)
}

/// Lines matching the regular expression `pattern` in the file or under
/// the directory `path`, as `path:line: text`; binary files are skipped
/// and counted.
pub fn grep(
    workspace: &Workspace,
    pattern: &str,
    path: &str,
    caps: &Caps,
) -> Result<String, Refusal> {
    let regex = regex::Regex::new(pattern)
        .map_err(|e| Refusal(format!("`{pattern}` is not a regular expression: {e}")))?;
    let mut hits = Vec::new();
    let mut skipped = 0usize;
    let mut full = false;
    let mut search = |shown: &str, file: OwnedFd| -> Flow {
        let mut bytes = Vec::new();
        let fits = rustix::fs::fstat(&file)
            .is_ok_and(|s| u64::try_from(s.st_size).unwrap_or(u64::MAX) <= FILE_MAX);
        if !fits || std::fs::File::from(file).read_to_end(&mut bytes).is_err() || binary(&bytes) {
            skipped += 1;
            return Flow::Continue;
        }
        for (number, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if hits.len() == caps.grep_hits {
                full = true;
                return Flow::Stop;
            }
            hits.push(format!("{shown}:{}: {}", number + 1, cut(line)));
        }
        Flow::Continue
    };
    let start = workspace.open_beneath(path, OFlags::PATH, Mode::empty())?;
    let is_dir = rustix::fs::fstat(&start)
        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory);
    if is_dir {
        walk(workspace, path, usize::MAX, &mut |entry| {
            if entry.kind != FileType::RegularFile {
                return Flow::Continue;
            }
            match open_in(entry.parent, entry.name, OFlags::RDONLY) {
                Ok(file) => search(&entry.path, file),
                Err(_) => Flow::Continue,
            }
        })?;
    } else {
        let file = workspace.open_beneath(path, OFlags::RDONLY, Mode::empty())?;
        search(path, file);
    }
    let mut out = if hits.is_empty() {
        format!("No line matches `{pattern}`.")
    } else {
        hits.join("\n")
    };
    if full {
        out.push_str(&format!(
            "\n[The search stops at {} matching lines; narrow the pattern or the path to see the rest.]",
            caps.grep_hits
        ));
    }
    if skipped > 0 {
        out.push_str(&format!(
            "\n[{skipped} binary or oversized file{} skipped.]",
            if skipped == 1 { "" } else { "s" }
        ));
    }
    Ok(out)
}

/// A line shown whole up to `LINE_MAX` characters, else cut saying how
/// much more there was.
fn cut(line: &str) -> String {
    let total = line.chars().count();
    if total <= LINE_MAX {
        return line.to_string();
    }
    let shown: String = line.chars().take(LINE_MAX).collect();
    format!("{shown}…[{} more characters]", total - LINE_MAX)
}
