//! A command's whole output, kept in the workspace where the agent may read
//! it (§3.4): the result shows a bounded prefix and names the file; only
//! the most recent few are kept.

use std::path::Path;

use super::{Refusal, Workspace, write};

/// The directory of kept output, in the workspace.
pub const DIR: &str = "shell-output";
/// How many kept outputs stay; older ones are removed.
pub const KEPT: usize = 10;

/// Writes `content` (a stream that carried `total` bytes) as `name` under
/// [`DIR`] in the workspace at `root`, removes all but the newest [`KEPT`],
/// and returns the path the result names.
pub fn keep_capture(
    root: &Path,
    name: &str,
    content: &[u8],
    total: u64,
) -> Result<String, Refusal> {
    let mut text = String::from_utf8_lossy(content).into_owned();
    let dropped = total.saturating_sub(content.len() as u64);
    if dropped > 0 {
        text.push_str(&format!(
            "\n[{dropped} more bytes of this output were not captured]\n"
        ));
    }
    let path = format!("{DIR}/{name}");
    if !root.exists() {
        std::fs::create_dir_all(root)
            .map_err(|e| Refusal(format!("the workspace could not be made ({e})")))?;
    }
    let workspace = Workspace::open(root)?;
    write(&workspace, &path, &text)?;
    prune(&root.join(DIR));
    Ok(path)
}

/// Removes all but the newest [`KEPT`] files of the directory. The daemon
/// alone writes it, so a plain listing is enough here.
fn prune(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, std::path::PathBuf)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let excess = files.len().saturating_sub(KEPT);
    for (_, path) in files.into_iter().take(excess) {
        let _ = std::fs::remove_file(path);
    }
}
