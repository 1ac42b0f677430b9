//! Skills (§3.5): a directory holding `SKILL.md`, whose frontmatter gives the
//! description and optionally the tools the procedure calls, with reference
//! documents beside it, each listed in the body's `## References` index.
//! Validated at boot; a malformed one, an unindexed document or an indexed
//! one that is missing refuses the boot, naming the file.
//!
//! - `parse`: the text of a `SKILL.md`.
//! - `read`: a skill directory on disk, checked against its index.
//! - `builtin`: the skills compiled into the daemon (the core ones).
//! - `locate`: where a skill named in configuration lives.
//! - `manifest`: the manifest the system prompt carries.
//! - `load`: the `skills::load` tool.

pub mod builtin;
pub mod load;
pub mod locate;
pub mod manifest;
pub mod parse;
pub mod read;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use locate::locate;
pub use read::read;

use crate::tools::ToolRef;
use crate::tools::framework::parse_tool_ref;

/// A skill as its `SKILL.md` declares it, with its documents read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `name` or `namespace::name`.
    pub name: String,
    pub description: String,
    /// The tools the procedure calls: a claim checked against grants, never a
    /// grant (§3.5).
    pub tools: Vec<ToolRef>,
    /// Where it was read from, for messages naming its files.
    pub dir: PathBuf,
    /// The procedure, without its frontmatter and without its index.
    pub body: String,
    /// The reference documents, in the order the index lists them.
    pub references: Vec<Reference>,
}

/// A document beside `SKILL.md`, listed in its index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub file: String,
    pub summary: String,
    pub text: String,
}

#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error(
        "`{0}` is a core skill every agent already has; it cannot be named in configuration (§3.5)"
    )]
    Core(String),
    #[error("`{0}` is not a skill name (`name` or `namespace::name`)")]
    Malformed(String),
    #[error("the toolset `{namespace}` ships no skill `{name}`")]
    NotShipped { namespace: String, name: String },
    #[error(
        "the toolset `{namespace}` declares the skill `{name}`, but this build carries no body for it"
    )]
    NoBody { namespace: String, name: String },
    #[error("no skill `{name}`: {path} does not exist")]
    Missing { name: String, path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
    #[error(
        "{path} sits beside {skill_md} but its References section does not list it; list it there or remove it (§3.5)"
    )]
    Unindexed { path: PathBuf, skill_md: PathBuf },
    #[error(
        "{skill_md} lists the reference `{file}` in its References section, but {path} does not exist"
    )]
    MissingReference {
        file: String,
        path: PathBuf,
        skill_md: PathBuf,
    },
}

/// Builds a skill from its `SKILL.md` text and the names of the entries
/// beside it; `read_reference` reads one indexed document. Every entry must
/// be indexed and every indexed document present (§3.5: the index is how an
/// agent that loaded the skill knows every reference it has).
fn build(
    name: &str,
    dir: &Path,
    text: &str,
    beside: &[String],
    mut read_reference: impl FnMut(&str) -> Result<String, SkillError>,
) -> Result<Skill, SkillError> {
    let skill_md = dir.join("SKILL.md");
    let invalid = |reason: String| SkillError::Invalid {
        path: skill_md.clone(),
        reason,
    };
    let parsed = parse::parse(text).map_err(invalid)?;
    let bare = name.rsplit("::").next().unwrap_or(name);
    if let Some(declared) = &parsed.name
        && declared != bare
    {
        return Err(invalid(format!(
            "frontmatter names the skill `{declared}`, but its directory is `{bare}`"
        )));
    }
    let mut tools = Vec::new();
    for tool in &parsed.tools {
        let parsed = parse_tool_ref(tool)
            .ok_or_else(|| invalid(format!("`{tool}` in tools is not a `namespace::tool` name")))?;
        tools.push(parsed);
    }
    if let Some(stray) = beside
        .iter()
        .find(|entry| !parsed.index.iter().any(|e| &e.file == *entry))
    {
        return Err(SkillError::Unindexed {
            path: dir.join(stray),
            skill_md,
        });
    }
    let mut references = Vec::new();
    for entry in &parsed.index {
        if !beside.contains(&entry.file) {
            return Err(SkillError::MissingReference {
                file: entry.file.clone(),
                path: dir.join(&entry.file),
                skill_md,
            });
        }
        references.push(Reference {
            file: entry.file.clone(),
            summary: entry.summary.clone(),
            text: read_reference(&entry.file)?,
        });
    }
    Ok(Skill {
        name: name.to_string(),
        description: parsed.description,
        tools,
        dir: dir.to_path_buf(),
        body: parsed.body,
        references,
    })
}
