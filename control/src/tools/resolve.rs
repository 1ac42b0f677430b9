//! Tool names as a model writes them, resolved over the agent's own tools
//! (§3.4, §7.2): the model form `mail__send`, the display form `mail::send`
//! (the framework's own posts put it in the window), or the bare segment
//! `send` when exactly one held tool carries it. No spelling reaches a tool
//! the agent does not hold; a name that resolves to none is answered with
//! the name used and the tools the agent can call.

use super::names::ToolRef;

/// A name that resolves to no tool the agent holds: a result the model
/// reads, which spends an attempt and counts as a rejection (§7.2, §4.5).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NotHeld {
    pub name: String,
    pub message: String,
}

/// Resolves `name` among `held`, the agent's tools (core ones included).
pub fn resolve(name: &str, held: &[ToolRef]) -> Result<ToolRef, NotHeld> {
    let name = name.trim();
    let split = name.split_once("__").or_else(|| name.split_once("::"));
    if let Some((namespace, tool)) = split {
        if let Some(found) = held
            .iter()
            .find(|t| t.namespace == namespace && t.tool == tool)
        {
            return Ok(found.clone());
        }
        return Err(not_held(name, held, None));
    }
    let carriers: Vec<&ToolRef> = held.iter().filter(|t| t.tool == name).collect();
    match carriers.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(not_held(name, held, None)),
        several => Err(not_held(name, held, Some(several))),
    }
}

fn not_held(name: &str, held: &[ToolRef], ambiguous: Option<&[&ToolRef]>) -> NotHeld {
    let mut forms: Vec<String> = held.iter().map(ToolRef::model_form).collect();
    forms.sort();
    let message = match ambiguous {
        Some(several) => format!(
            "`{name}` names more than one of your tools ({}); call it by its full name. \
             The tools you can call: {}.",
            several
                .iter()
                .map(|t| t.model_form())
                .collect::<Vec<_>>()
                .join(", "),
            forms.join(", ")
        ),
        None => format!(
            "You hold no tool named `{name}`. The tools you can call: {}.",
            forms.join(", ")
        ),
    };
    NotHeld {
        name: name.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> Vec<ToolRef> {
        vec![
            ToolRef::new("mail", "send"),
            ToolRef::new("mail", "read"),
            ToolRef::new("web", "read"),
            ToolRef::new("builtins", "now"),
        ]
    }

    #[test]
    fn s3_4_the_model_form_and_the_display_form_resolve() {
        let send = ToolRef::new("mail", "send");
        assert_eq!(resolve("mail__send", &held()), Ok(send.clone()));
        assert_eq!(resolve("mail::send", &held()), Ok(send));
    }

    #[test]
    fn s3_4_a_bare_segment_resolves_when_exactly_one_held_tool_carries_it() {
        assert_eq!(resolve("send", &held()), Ok(ToolRef::new("mail", "send")));
        assert_eq!(resolve("now", &held()), Ok(ToolRef::new("builtins", "now")));
        let error = resolve("read", &held()).expect_err("ambiguous");
        assert_eq!(
            error.message,
            "`read` names more than one of your tools (mail__read, web__read); call it by its \
             full name. The tools you can call: builtins__now, mail__read, mail__send, web__read."
        );
    }

    #[test]
    fn s7_2_no_spelling_reaches_a_tool_not_held() {
        for name in ["shell__run", "shell::run", "run", "mail__delete", "mail"] {
            let error = resolve(name, &held()).expect_err(name);
            assert_eq!(error.name, name);
            assert!(
                error
                    .message
                    .starts_with(&format!("You hold no tool named `{name}`.")),
                "{}",
                error.message
            );
            assert!(error.message.contains("mail__send"), "{}", error.message);
        }
    }
}
