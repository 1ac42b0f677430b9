//! A skill the plugin ships (§3.5): a directory `skills/NAME/` in the
//! plugin's own directory holding a `SKILL.md` and the references its index
//! lists. The daemon reads the directory itself at boot; what the plugin's
//! description adds is that it ships the skill, with the description and
//! the tools its frontmatter states.

use collegium_proto::toolset::v1::SkillDeclaration;
use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the skill `{name}`: {reason}")]
pub struct SkillError {
    pub name: String,
    pub reason: String,
}

#[derive(Deserialize)]
struct Frontmatter {
    name: Option<String>,
    description: String,
    #[serde(default)]
    tools: Vec<String>,
}

/// The declaration of the skill `name` whose `SKILL.md` reads `text`
/// (include it with `include_str!` so the binary describes what it was built
/// with).
pub fn declare(name: &str, text: &str) -> Result<SkillDeclaration, SkillError> {
    let fail = |reason: String| SkillError {
        name: name.to_string(),
        reason,
    };
    let rest = text
        .strip_prefix("---\n")
        .ok_or_else(|| fail("SKILL.md does not open with a `---` frontmatter block".into()))?;
    let end = rest
        .find("\n---")
        .ok_or_else(|| fail("SKILL.md's frontmatter block is not closed by `---`".into()))?;
    let front: Frontmatter = serde_yaml_ng::from_str(&rest[..end])
        .map_err(|e| fail(format!("SKILL.md's frontmatter: {e}")))?;
    if let Some(declared) = front.name.as_deref().filter(|n| *n != name) {
        return Err(fail(format!(
            "SKILL.md names the skill `{declared}`; its directory is `{name}`"
        )));
    }
    if front.description.trim().is_empty() {
        return Err(fail("SKILL.md's description is empty".into()));
    }
    if let Some(bare) = front.tools.iter().find(|t| !t.contains("::")) {
        return Err(fail(format!(
            "SKILL.md's tools name `{bare}`, which is not a `namespace::tool` name"
        )));
    }
    Ok(SkillDeclaration {
        name: name.to_string(),
        description: front.description.trim().to_string(),
        tools: front.tools,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_5_a_skill_is_declared_from_its_frontmatter() {
        let declared = declare(
            "saving",
            "---\nname: saving\ndescription: Save well.\ntools: [bookmark::save]\n---\n# Steps\n",
        )
        .expect("declared");
        assert_eq!(declared.description, "Save well.");
        assert_eq!(declared.tools, vec!["bookmark::save".to_string()]);
    }

    #[test]
    fn s3_5_a_malformed_skill_is_refused_naming_it() {
        for (text, says) in [
            ("# no frontmatter", "does not open"),
            ("---\ndescription: x\n", "not closed"),
            (
                "---\nname: other\ndescription: x\n---\nbody",
                "names the skill `other`",
            ),
            ("---\ndescription: x\ntools: [save]\n---\nbody", "`save`"),
        ] {
            let refused = declare("saving", text).expect_err(text);
            assert_eq!(refused.name, "saving");
            assert!(refused.to_string().contains(says), "{refused}");
        }
    }
}
