//! Skills (§3.5): a directory holding `SKILL.md`, whose frontmatter gives the
//! description and optionally the tools the procedure calls, with reference
//! documents beside it. Validated at boot; a malformed one refuses the boot.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::tools::framework::{CORE_SKILLS, parse_tool_ref};
use crate::tools::{Registry, ToolRef, ToolsetKind};

/// A skill as its `SKILL.md` declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `name` or `namespace::name`.
    pub name: String,
    pub description: String,
    /// The tools the procedure calls: a claim checked against grants, never a
    /// grant (§3.5).
    pub tools: Vec<ToolRef>,
    pub dir: PathBuf,
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
    #[error("no skill `{name}`: {path} does not exist")]
    Missing { name: String, path: PathBuf },
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    name: Option<String>,
    description: String,
    #[serde(default)]
    tools: Vec<String>,
}

/// Where a skill named in configuration lives: a bare name beneath the
/// resources root, `namespace::name` in its toolset (a plugin's under the
/// plugins root).
pub fn locate(
    name: &str,
    registry: &Registry,
    resources_root: &Path,
    plugins_root: &Path,
) -> Result<Skill, SkillError> {
    if CORE_SKILLS.contains(&name) {
        return Err(SkillError::Core(name.to_string()));
    }
    let is_segment = crate::tools::names::is_segment;
    let dir = match name.split_once("::") {
        None if is_segment(name) => resources_root.join("skills").join(name),
        Some((ns, skill)) if is_segment(ns) && is_segment(skill) => match registry.toolset(ns) {
            Some(toolset) if toolset.kind != ToolsetKind::Plugin => {
                let declared =
                    toolset
                        .skills
                        .iter()
                        .find(|s| s.name == skill)
                        .ok_or_else(|| SkillError::NotShipped {
                            namespace: ns.to_string(),
                            name: skill.to_string(),
                        })?;
                return Ok(Skill {
                    name: name.to_string(),
                    description: declared.description.clone(),
                    tools: declared.tools.clone(),
                    dir: PathBuf::new(),
                });
            }
            _ => plugins_root.join(ns).join("skills").join(skill),
        },
        _ => return Err(SkillError::Malformed(name.to_string())),
    };
    read(name, &dir)
}

/// Reads and validates one skill directory.
pub fn read(name: &str, dir: &Path) -> Result<Skill, SkillError> {
    let path = dir.join("SKILL.md");
    if !path.is_file() {
        return Err(SkillError::Missing {
            name: name.to_string(),
            path,
        });
    }
    let text = std::fs::read_to_string(&path).map_err(|source| SkillError::Read {
        path: path.clone(),
        source,
    })?;
    let invalid = |reason: String| SkillError::Invalid {
        path: path.clone(),
        reason,
    };
    let yaml = frontmatter(&text).ok_or_else(|| {
        invalid("does not open with a frontmatter block between `---` lines".to_string())
    })?;
    let front: Frontmatter =
        serde_yaml_ng::from_str(yaml).map_err(|e| invalid(format!("frontmatter: {e}")))?;
    let bare = name.rsplit("::").next().unwrap_or(name);
    if let Some(declared) = &front.name
        && declared != bare
    {
        return Err(invalid(format!(
            "frontmatter names the skill `{declared}`, but its directory is `{bare}`"
        )));
    }
    if front.description.trim().is_empty() {
        return Err(invalid("the description is empty".to_string()));
    }
    let mut tools = Vec::new();
    for tool in &front.tools {
        let parsed = parse_tool_ref(tool)
            .ok_or_else(|| invalid(format!("`{tool}` in tools is not a `namespace::tool` name")))?;
        tools.push(parsed);
    }
    Ok(Skill {
        name: name.to_string(),
        description: front.description.trim().to_string(),
        tools,
        dir: dir.to_path_buf(),
    })
}

fn frontmatter(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    Some(&rest[..end + 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_skill(root: &Path, name: &str, body: &str) {
        let dir = root.join("skills").join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("SKILL.md"), body).expect("write");
    }

    #[test]
    fn a_skill_reads_its_description_and_tools() {
        let root = tempfile::tempdir().expect("tempdir");
        write_skill(
            root.path(),
            "briefing",
            "---\nname: briefing\ndescription: Write a sourced brief.\ntools: [web::fetch, workspace::write]\n---\n# Steps\n",
        );
        let skill =
            locate("briefing", &Registry::framework(), root.path(), root.path()).expect("skill");
        assert_eq!(skill.description, "Write a sourced brief.");
        assert_eq!(
            skill.tools,
            vec![
                ToolRef::new("web", "fetch"),
                ToolRef::new("workspace", "write")
            ]
        );
    }

    #[test]
    fn malformed_skills_are_refused() {
        let root = tempfile::tempdir().expect("tempdir");
        write_skill(root.path(), "nofront", "# just text\n");
        write_skill(
            root.path(),
            "badtool",
            "---\ndescription: x\ntools: [fetch]\n---\n",
        );
        write_skill(
            root.path(),
            "misnamed",
            "---\nname: other\ndescription: x\n---\n",
        );
        let registry = Registry::framework();
        for name in ["nofront", "badtool", "misnamed"] {
            assert!(
                matches!(
                    locate(name, &registry, root.path(), root.path()),
                    Err(SkillError::Invalid { .. })
                ),
                "{name}"
            );
        }
        assert!(matches!(
            locate("absent", &registry, root.path(), root.path()),
            Err(SkillError::Missing { .. })
        ));
        assert!(matches!(
            locate(
                "understanding-collegium",
                &registry,
                root.path(),
                root.path()
            ),
            Err(SkillError::Core(_))
        ));
        assert!(matches!(
            locate("web::nothing", &registry, root.path(), root.path()),
            Err(SkillError::NotShipped { .. })
        ));
    }
}
