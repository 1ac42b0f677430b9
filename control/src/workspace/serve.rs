//! One workspace call, from its checked arguments to its text (§3.4).

use std::path::Path;

use serde_json::Value;

use super::{Caps, Refusal, Workspace, find, grep, list, read, stat, write};
use crate::tools::ToolRef;

/// Runs `tool` of the workspace toolset in the workspace at `root`, for an
/// agent that holds `held`: a refusal names no tool outside it.
pub fn serve(
    root: &Path,
    tool: &str,
    arguments: &Value,
    caps: &Caps,
    held: &[ToolRef],
) -> Result<String, Refusal> {
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let number = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    if tool == "write" && !root.exists() {
        // An agent without the shell has no provisioned workspace until it
        // first writes (the provisioner makes a shell agent's).
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o750)
            .create(root)
            .map_err(|e| Refusal(format!("Your workspace could not be made ({e}).")))?;
    }
    if !root.exists() {
        return Err(Refusal(
            "Your workspace is empty: nothing has been written to it yet.".into(),
        ));
    }
    let workspace = Workspace::open(root)?;
    match tool {
        "write" => write(&workspace, text("path"), text("content")),
        "read" => read(
            &workspace,
            text("path"),
            number("offset").unwrap_or(0),
            number("length"),
            held.contains(&ToolRef::new("workspace", "grep")),
        ),
        "list" => list(&workspace, text("path"), number("depth").unwrap_or(1), caps),
        "find" => find(&workspace, text("glob"), caps),
        "grep" => grep(&workspace, text("pattern"), text("path"), caps),
        "stat" => stat(&workspace, text("path")),
        other => Err(Refusal(format!(
            "workspace::{other} is not a workspace tool."
        ))),
    }
}

/// The status post's subject for a call, and the line later turns read in
/// place of its result.
pub fn describe(tool: &str, arguments: &Value) -> (String, Option<String>) {
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let subject = match tool {
        "find" => text("glob").to_string(),
        "grep" => format!("`{}` in {}", text("pattern"), shown(text("path"))),
        _ => shown(text("path")).to_string(),
    };
    let replay = match tool {
        "write" => Some(format!(
            "[wrote `{}` in the workspace]",
            shown(text("path"))
        )),
        "read" => Some(format!(
            "[read `{}` from the workspace]",
            shown(text("path"))
        )),
        _ => None,
    };
    (format!("workspace::{tool} — {subject}"), replay)
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}
