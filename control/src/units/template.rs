//! The fixed post templates (§3.15, §3.2): the framework publishes each
//! state change under the acting agent's account, the model authoring only
//! the fields. A field never addresses an agent — an assignment addresses
//! its assignee and a report its creator through the template alone, and a
//! close addresses nobody — so agents' @-mentions in a field are replaced
//! by their display names (§4.5: a post addressing two agents starts
//! nothing).

use std::collections::BTreeMap;

use crate::context::window::strip_mentions_of_agents;
use crate::store::UnitState;

/// What the model wrote for a unit.
pub struct Fields<'a> {
    pub outcome: &'a str,
    pub criteria: &'a str,
    pub context: &'a str,
}

/// A model-authored field as a unit post carries it.
pub fn clean(text: &str, display_names: &BTreeMap<String, String>) -> String {
    strip_mentions_of_agents(text.trim(), display_names)
}

fn body(fields: &Fields<'_>) -> String {
    let mut out = format!(
        "**Outcome:** {}\n**Criteria:** {}",
        fields.outcome, fields.criteria
    );
    if !fields.context.is_empty() {
        out.push_str(&format!("\n**Context:** {}", fields.context));
    }
    out
}

/// An assignment: addresses the assignee.
pub fn assignment(
    label: &str,
    creator: &str,
    assignee_handle: &str,
    fields: &Fields<'_>,
) -> String {
    format!(
        "**Work unit {label}** for @{assignee_handle}, assigned by {creator}\n{}",
        body(fields)
    )
}

/// A continuation (§3.15): one post closing the unit it follows as done and
/// assigning the next; it addresses the assignee.
pub fn continuation(
    label: &str,
    follows: &str,
    creator: &str,
    assignee_handle: &str,
    fields: &Fields<'_>,
) -> String {
    format!(
        "**Work unit {label}** for @{assignee_handle}, assigned by {creator}. It continues {follows}, which closes as done, continued by {label}.\n{}",
        body(fields)
    )
}

/// A link (§3.15): the next unit follows one already closed as done, which
/// is not closed again.
pub fn linked(
    label: &str,
    follows: &str,
    creator: &str,
    assignee_handle: &str,
    fields: &Fields<'_>,
) -> String {
    format!(
        "**Work unit {label}** for @{assignee_handle}, assigned by {creator}. It continues {follows}, already closed as done.\n{}",
        body(fields)
    )
}

/// A report: addresses the creator.
pub fn report(
    label: &str,
    assignee: &str,
    creator_handle: &str,
    state: UnitState,
    text: &str,
) -> String {
    let what = match state {
        UnitState::Blocked => "reported blocked",
        _ => "reported for review",
    };
    format!("**Work unit {label}** {what} to @{creator_handle} by {assignee}\n{text}")
}

/// The framework's report that an assignee ran out of context (§3.15): the
/// reason is fixed text, not the model's.
pub const OUT_OF_CONTEXT: &str = "The assignee's turn ran out of context before it could report. The framework reports the unit blocked on its behalf; the work may be partly done.";

/// A close: addresses nobody.
pub fn close(
    label: &str,
    creator: &str,
    assignee: &str,
    state: UnitState,
    verdict: &str,
) -> String {
    format!(
        "**Work unit {label}** closed as {} by {creator} (assigned to {assignee})\n**Verdict:** {verdict}",
        state.as_str()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> BTreeMap<String, String> {
        [("omar", "Omar Haddad"), ("naomi", "Naomi Nagata")]
            .into_iter()
            .map(|(u, d)| (u.to_string(), d.to_string()))
            .collect()
    }

    #[test]
    fn s3_15_a_field_never_addresses_an_agent() {
        assert_eq!(
            clean("  ask @omar for the data ", &names()),
            "ask Omar Haddad for the data"
        );
    }

    #[test]
    fn s3_15_an_assignment_addresses_its_assignee_and_a_close_nobody() {
        let fields = Fields {
            outcome: "A summary",
            criteria: "Cites sources",
            context: "",
        };
        let post = assignment("U-3", "Sam Rivers", "naomi", &fields);
        assert!(post.contains("@naomi"), "{post}");
        assert!(!post.contains("Context"), "{post}");
        let closed = close(
            "U-3",
            "Sam Rivers",
            "Naomi Nagata",
            UnitState::Done,
            "Delivered.",
        );
        assert!(!closed.contains('@'), "{closed}");
        let reported = report(
            "U-3",
            "Naomi Nagata",
            "sam",
            UnitState::Blocked,
            "No access.",
        );
        assert!(reported.contains("reported blocked to @sam"), "{reported}");
    }
}
