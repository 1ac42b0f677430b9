//! The skill manifest (§3.5, §3.8 item 2): every skill in an agent's
//! manifest by name with one line of description, so an agent may misjudge
//! when a procedure applies but is never unaware that it exists. It changes
//! only with the deployment, so it sits in the system prompt.

use super::{Skill, builtin};

/// The agent's manifest: the core skills, then those configuration assigns.
pub fn skills(assigned: &[Skill]) -> impl Iterator<Item = &Skill> {
    builtin::core().map(shorten).chain(assigned.iter())
}

fn shorten<'a>(skill: &'static Skill) -> &'a Skill {
    skill
}

/// The manifest as the system prompt carries it. `loads` says whether the
/// agent is offered `skills::load`, so no sentence names a tool it does not
/// hold (§3.4); this build serves it to every agent.
pub fn render(assigned: &[Skill], loads: bool, out: &mut String) {
    out.push_str("A skill is a written procedure. Only its name and one line are here.");
    if loads {
        out.push_str(
            " Before you follow a skill, load its body with skills::load and the skill's name. \
             The body lists the skill's references; load one with skills::load, the skill's name \
             and the reference's file name. A load does not count against your action budget.",
        );
    }
    out.push_str("\n\n");
    for skill in skills(assigned) {
        out.push_str(&format!("- {}: {}\n", skill.name, skill.description));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_5_the_manifest_lists_core_skills_then_assigned_ones_one_line_each() {
        let assigned = Skill {
            name: "bookmark::saving-bookmarks".into(),
            description: "Save a page for later.".into(),
            tools: Vec::new(),
            dir: std::path::PathBuf::new(),
            body: "Save it.".into(),
            references: Vec::new(),
        };
        let mut out = String::new();
        render(&[assigned], true, &mut out);
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with("- ")).collect();
        assert_eq!(lines.len(), 3, "{out}");
        assert!(lines[0].starts_with("- handing-work-to-a-peer: "));
        assert!(lines[1].starts_with("- understanding-collegium: "));
        assert_eq!(
            lines[2],
            "- bookmark::saving-bookmarks: Save a page for later."
        );
        assert!(out.contains("skills::load"));
        let mut without = String::new();
        render(&[], false, &mut without);
        assert!(!without.contains("skills::load"), "{without}");
    }
}
