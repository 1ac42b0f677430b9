//! Where a skill named in configuration lives (§3.5): a bare name beneath the
//! resources root, `namespace::name` in its toolset — compiled in for a
//! framework toolset, under the plugins root for a plugin's.

use std::path::Path;

use super::{Skill, SkillError, builtin, read};
use crate::tools::framework::CORE_SKILLS;
use crate::tools::registry::SkillDeclaration;
use crate::tools::{Registry, ToolsetKind};

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
                let not_shipped = || SkillError::NotShipped {
                    namespace: ns.to_string(),
                    name: skill.to_string(),
                };
                toolset
                    .skills
                    .iter()
                    .find(|s| s.name == skill)
                    .ok_or_else(not_shipped)?;
                return builtin::find(name)
                    .cloned()
                    .ok_or_else(|| SkillError::NoBody {
                        namespace: ns.to_string(),
                        name: skill.to_string(),
                    });
            }
            _ => plugins_root.join(ns).join("skills").join(skill),
        },
        _ => return Err(SkillError::Malformed(name.to_string())),
    };
    read(name, &dir)
}

/// At a plugin's handshake (§3.5, §3.14): each of `assigned` in `namespace`
/// that the plugin's description does not declare, as a refusal naming the
/// skills it does declare. Its body was read from the plugin's directory at
/// configuration check, before any plugin ran.
pub fn undeclared(
    assigned: &[Skill],
    namespace: &str,
    declared: &[SkillDeclaration],
) -> Vec<String> {
    let names: Vec<String> = declared.iter().map(|s| format!("`{}`", s.name)).collect();
    let declares = if names.is_empty() {
        "no skill".to_string()
    } else {
        names.join(", ")
    };
    assigned
        .iter()
        .filter_map(|skill| {
            let name = skill.name.strip_prefix(namespace)?.strip_prefix("::")?;
            (!declared.iter().any(|d| d.name == name)).then(|| {
                format!(
                    "assigned the skill `{}`, which the plugin `{namespace}` does not declare; it declares {declares}",
                    skill.name
                )
            })
        })
        .collect()
}
