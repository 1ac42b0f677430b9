//! A skill directory on disk (§3.5): `SKILL.md` and the documents its index
//! lists, read whole at boot so a load serves what boot validated.

use std::path::Path;

use super::{Skill, SkillError, build};

/// Reads and validates one skill directory.
pub fn read(name: &str, dir: &Path) -> Result<Skill, SkillError> {
    let path = dir.join("SKILL.md");
    if !path.is_file() {
        return Err(SkillError::Missing {
            name: name.to_string(),
            path,
        });
    }
    let text = read_text(&path)?;
    let entries = std::fs::read_dir(dir).map_err(|source| SkillError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut beside = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| SkillError::Read {
            path: dir.to_path_buf(),
            source,
        })?;
        let file = entry.file_name().to_string_lossy().into_owned();
        if file != "SKILL.md" {
            beside.push(file);
        }
    }
    beside.sort();
    build(name, dir, &text, &beside, |file| {
        let path = dir.join(file);
        if !path.is_file() {
            return Err(SkillError::Invalid {
                path: dir.join("SKILL.md"),
                reason: format!("the reference `{file}` is not a file"),
            });
        }
        read_text(&path)
    })
}

fn read_text(path: &Path) -> Result<String, SkillError> {
    std::fs::read_to_string(path).map_err(|source| SkillError::Read {
        path: path.to_path_buf(),
        source,
    })
}
