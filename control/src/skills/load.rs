//! `skills::load` (§3.5): a skill's body with its reference index, or one of
//! its references, for a skill in the agent's manifest. Every refusal names
//! what exists, so the next call can be right (§7.2).

use serde_json::Value;

use super::{Skill, manifest};

/// A load that ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub text: String,
    /// What later turns read in its place (§3.8): the text is one call away.
    pub replay_line: String,
    /// The status line's summary of the call.
    pub summary: String,
}

/// A load refused: the text the model reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub text: String,
    pub summary: String,
}

/// Serves a call's arguments (already checked against the schema) for an
/// agent assigned `assigned`.
pub fn load(assigned: &[Skill], arguments: &Value) -> Result<Loaded, Refused> {
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let reference = arguments.get("reference").and_then(Value::as_str);
    let summary = match reference {
        Some(file) => format!("skills::load {name} — {file}"),
        None => format!("skills::load {name}"),
    };
    let refused = |text: String| Refused {
        text,
        summary: summary.clone(),
    };
    let Some(skill) = manifest::skills(assigned).find(|s| s.name == name) else {
        let names: Vec<&str> = manifest::skills(assigned)
            .map(|s| s.name.as_str())
            .collect();
        return Err(refused(format!(
            "The call did not run: `{name}` is not a skill in your manifest. Your skills are: {}.",
            names.join(", ")
        )));
    };
    match reference {
        None => Ok(Loaded {
            text: body(skill),
            replay_line: format!("[loaded skill {name}]"),
            summary,
        }),
        Some(file) => match skill.references.iter().find(|r| r.file == file) {
            Some(found) => Ok(Loaded {
                text: format!(
                    "# {file}, a reference of the skill {name}\n\n{}",
                    found.text.trim()
                ),
                replay_line: format!("[loaded reference {file} of skill {name}]"),
                summary,
            }),
            None if skill.references.is_empty() => Err(refused(format!(
                "The call did not run: the skill `{name}` has no references. Load it without \
                 a reference to read its body."
            ))),
            None => {
                let files: Vec<&str> = skill.references.iter().map(|r| r.file.as_str()).collect();
                Err(refused(format!(
                    "The call did not run: the skill `{name}` has no reference `{file}`. Its \
                     references are: {}.",
                    files.join(", ")
                )))
            }
        },
    }
}

/// `skills::load` as the turn runner calls it: served in the daemon, which
/// holds every skill it validated at boot.
pub fn run(
    scope: &crate::turns::calls::CallScope<'_>,
    call: &crate::inference::ToolCall,
    tool: &crate::tools::ToolRef,
    arguments: &Value,
) -> crate::turns::calls::Executed {
    use crate::turns::calls::{Executed, Outcome};
    let (summary, outcome) = match load(&scope.seat.agent.skills, arguments) {
        Ok(loaded) => (
            loaded.summary,
            Outcome::Ran {
                text: loaded.text,
                replay_line: Some(loaded.replay_line),
                content_key: None,
                note: None,
            },
        ),
        Err(refused) => (
            refused.summary,
            Outcome::Refused {
                text: refused.text,
                reason: "no such skill or reference in the manifest".into(),
            },
        ),
    };
    Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    }
}

/// The body with its reference index, which the framework renders so that a
/// loaded skill always says which references it has (§3.5).
fn body(skill: &Skill) -> String {
    let mut text = format!(
        "# Skill: {}\n\n{}\n\n## References\n\n",
        skill.name, skill.body
    );
    if skill.references.is_empty() {
        text.push_str("This skill has no references.\n");
        return text;
    }
    text.push_str(&format!(
        "Load one with skills::load, name `{}` and the file as reference:\n",
        skill.name
    ));
    for reference in &skill.references {
        text.push_str(&format!("- {}: {}\n", reference.file, reference.summary));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;
    use crate::skills::Reference;

    fn briefing() -> Skill {
        Skill {
            name: "briefing".into(),
            description: "Write a sourced brief.".into(),
            tools: Vec::new(),
            dir: PathBuf::from("skills/briefing"),
            body: "1. Read the sources.".into(),
            references: vec![Reference {
                file: "style.md".into(),
                summary: "the house style".into(),
                text: "Short sentences.\n".into(),
            }],
        }
    }

    #[test]
    fn s3_5_a_load_returns_the_body_with_its_reference_index() {
        let loaded = load(&[briefing()], &json!({"name": "briefing"})).expect("loads");
        assert_eq!(
            loaded.text,
            "# Skill: briefing\n\n1. Read the sources.\n\n## References\n\n\
             Load one with skills::load, name `briefing` and the file as reference:\n\
             - style.md: the house style\n"
        );
        assert_eq!(loaded.replay_line, "[loaded skill briefing]");
    }

    #[test]
    fn s3_5_a_reference_is_loaded_by_name() {
        let loaded = load(
            &[briefing()],
            &json!({"name": "briefing", "reference": "style.md"}),
        )
        .expect("loads");
        assert_eq!(
            loaded.text,
            "# style.md, a reference of the skill briefing\n\nShort sentences."
        );
        assert_eq!(
            loaded.replay_line,
            "[loaded reference style.md of skill briefing]"
        );
    }

    #[test]
    fn s3_5_a_core_skill_loads_for_an_agent_assigned_nothing() {
        let loaded = load(&[], &json!({"name": "handing-work-to-a-peer"})).expect("loads");
        assert!(
            loaded.text.contains("writing-criteria.md"),
            "{}",
            loaded.text
        );
    }

    #[test]
    fn s3_5_a_skill_outside_the_manifest_is_refused_naming_the_manifest() {
        let refused = load(&[], &json!({"name": "briefing"})).expect_err("refused");
        assert_eq!(
            refused.text,
            "The call did not run: `briefing` is not a skill in your manifest. Your skills are: \
             handing-work-to-a-peer, understanding-collegium."
        );
    }

    #[test]
    fn s3_5_a_reference_outside_the_index_is_refused_naming_the_index() {
        let refused = load(
            &[briefing()],
            &json!({"name": "briefing", "reference": "../SKILL.md"}),
        )
        .expect_err("refused");
        assert_eq!(
            refused.text,
            "The call did not run: the skill `briefing` has no reference `../SKILL.md`. Its \
             references are: style.md."
        );
    }
}
