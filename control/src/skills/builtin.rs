//! The skills compiled into the daemon (§3.5): the core skills every agent's
//! manifest carries, and any a framework toolset ships, namespaced. Their
//! sources are `control/skills/<name>/`; a test reads those directories with
//! the same checks a deployment skill gets, so no document there is left
//! out of the index.

use std::path::PathBuf;
use std::sync::LazyLock;

use super::{Skill, SkillError, build};
use crate::tools::framework::CORE_SKILLS;

/// One compiled skill: its name, its `SKILL.md`, and its documents.
struct Compiled {
    name: &'static str,
    skill_md: &'static str,
    references: &'static [(&'static str, &'static str)],
}

const COMPILED: &[Compiled] = &[
    Compiled {
        name: "handing-work-to-a-peer",
        skill_md: include_str!("../../skills/handing-work-to-a-peer/SKILL.md"),
        references: &[(
            "writing-criteria.md",
            include_str!("../../skills/handing-work-to-a-peer/writing-criteria.md"),
        )],
    },
    Compiled {
        name: "understanding-collegium",
        skill_md: include_str!("../../skills/understanding-collegium/SKILL.md"),
        references: &[
            (
                "when-things-stop.md",
                include_str!("../../skills/understanding-collegium/when-things-stop.md"),
            ),
            (
                "what-people-see.md",
                include_str!("../../skills/understanding-collegium/what-people-see.md"),
            ),
        ],
    },
];

/// The directory a compiled skill's sources are in, for messages.
pub fn source_dir(name: &str) -> PathBuf {
    PathBuf::from("control/skills").join(name.replace("::", "/"))
}

static BUILT: LazyLock<Result<Vec<Skill>, SkillError>> = LazyLock::new(|| {
    COMPILED
        .iter()
        .map(|compiled| {
            let beside: Vec<String> = compiled
                .references
                .iter()
                .map(|(file, _)| (*file).to_string())
                .collect();
            build(
                compiled.name,
                &source_dir(compiled.name),
                compiled.skill_md,
                &beside,
                |file| {
                    Ok(compiled
                        .references
                        .iter()
                        .find(|(f, _)| *f == file)
                        .map(|(_, text)| (*text).to_string())
                        .unwrap_or_default())
                },
            )
        })
        .collect()
});

/// Every compiled skill, or the error that makes the build unfit to boot.
pub fn all() -> Result<&'static [Skill], &'static SkillError> {
    BUILT.as_deref()
}

/// The core skills, in every agent's manifest (§3.5). Empty only where
/// [`all`] failed, which refuses the boot (`config::check`).
pub fn core() -> impl Iterator<Item = &'static Skill> {
    all()
        .unwrap_or_default()
        .iter()
        .filter(|s| CORE_SKILLS.contains(&s.name.as_str()))
}

/// A compiled skill by its full name.
pub fn find(name: &str) -> Option<&'static Skill> {
    all().unwrap_or_default().iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_5_compiled_skills_parse_and_their_directories_hold_only_indexed_documents() {
        let compiled = all().expect("the compiled skills are valid");
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("skills");
        for skill in compiled {
            let on_disk = super::super::read(&skill.name, &root.join(&skill.name))
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(on_disk.body, skill.body, "{}", skill.name);
            assert_eq!(on_disk.references, skill.references, "{}", skill.name);
            assert!(
                !skill.references.is_empty(),
                "{} has no reference",
                skill.name
            );
        }
    }

    #[test]
    fn s3_5_both_core_skills_are_compiled_and_claim_no_tool() {
        let names: Vec<&str> = core().map(|s| s.name.as_str()).collect();
        assert_eq!(names, CORE_SKILLS);
        // Every agent holds a core skill, whatever it is granted, so a tools
        // claim on one could only refuse agents (§3.5).
        assert!(core().all(|s| s.tools.is_empty()));
    }
}
