//! The question prompt (§3.7a): `ask::human` asks the person the work
//! descends from for a fact only a person has. Posted under the agent's
//! account like an approval, with the agent's own words beside the call
//! leading, then the same framework-authored line, then the question. The
//! offered short answers are buttons; "Answer…" opens a dialog for free
//! text. There is no denial, since there is no action to refuse.

use serde_json::{Value, json};

use super::prompt::{Provenance, escaped};

/// The most short answers a question may offer as buttons.
pub const MAX_CHOICES: usize = 5;
/// The longest a short answer may be: it is a button's label.
pub const MAX_CHOICE_CHARS: usize = 60;

/// The action a click on an offered answer carries.
pub const CHOOSE: &str = "choose";
/// The action of the "Answer…" button, which opens the free-text dialog.
pub const WRITE: &str = "write";

/// The question's facts.
pub struct QuestionFacts<'a> {
    /// What the agent wrote beside the call, agent mentions stripped.
    pub lead: Option<&'a str>,
    pub line: Provenance,
    pub question: &'a str,
}

/// The prompt's text: the agent's words, the line, the question quoted.
pub fn render(facts: &QuestionFacts<'_>) -> String {
    let mut out = String::new();
    if let Some(lead) = facts.lead.map(str::trim).filter(|l| !l.is_empty()) {
        out.push_str(lead);
        out.push_str("\n\n");
    }
    out.push_str(&format!("❓ **Question** — {}.\n", facts.line.describe()));
    let quoted: Vec<String> = escaped(facts.question.trim())
        .lines()
        .map(|line| format!("> {line}"))
        .collect();
    out.push_str(&quoted.join("\n"));
    out
}

/// The question's words as a prompt `render`ed shows them: its closing run
/// of quoted lines, since the question is always last and nothing above it
/// ends the prompt (§3.7a). What `/collegium approvals` heads an entry with
/// (§8.4).
pub fn asked_words(prompt: &str) -> String {
    let mut quoted: Vec<&str> = prompt
        .lines()
        .rev()
        .map_while(|line| line.strip_prefix("> ").or((line == ">").then_some("")))
        .collect();
    quoted.reverse();
    quoted.join("\n")
}

/// The buttons (contract §C.1): one per offered answer, by index, then
/// "Answer…". The answer a click records is the text the store kept for
/// that index, never text the click carries. Each button carries its own
/// signature under `key` (§6.4).
pub fn attachments(url: &str, question: &str, key: &str, choices: &[String]) -> Value {
    let signed = |action: &str, choice: Option<usize>| {
        super::sign::sign(key, &super::sign::button(question, action, choice))
    };
    let button = |id: String, name: &str, style: &str, context: Value| {
        json!({
            "id": id,
            "name": name,
            "style": style,
            "integration": {"url": url, "context": context}
        })
    };
    let mut actions: Vec<Value> = choices
        .iter()
        .enumerate()
        .map(|(index, choice)| {
            button(
                format!("choice{index}"),
                choice,
                "default",
                json!({"action": CHOOSE, "approval": question, "signature": signed(CHOOSE, Some(index)), "choice": index}),
            )
        })
        .collect();
    actions.push(button(
        "answer".into(),
        "Answer…",
        "primary",
        json!({"action": WRITE, "approval": question, "signature": signed(WRITE, None)}),
    ));
    json!([{
        "fallback": "A question is waiting; open Mattermost to answer it.",
        "actions": actions,
    }])
}

/// The line the prompt gains once answered.
pub fn answered_line(by: &str, answer: &str) -> String {
    format!("💬 Answered by @{by}: “{}”", escaped(answer))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approvals::prompt::AskedBy;

    #[test]
    fn s3_7a_the_agents_words_lead_then_the_line_then_the_question() {
        let text = render(&QuestionFacts {
            lead: Some("I need one fact before I book.\n"),
            line: Provenance {
                action: 2,
                budget: 10,
                asked_by: Some(AskedBy::Person {
                    username: "ana".into(),
                    words: "book the offsite".into(),
                }),
            },
            question: "Which venue?\nHall A or B\u{200B}",
        });
        assert_eq!(
            text,
            "I need one fact before I book.\n\n\
             ❓ **Question** — action 2 of 10 in this turn; asked by @ana: “book the offsite”.\n\
             > Which venue?\n> Hall A or B\\u{200B}"
        );
    }

    #[test]
    fn s8_4_a_rendered_question_gives_back_its_words() {
        let line = Provenance {
            action: 1,
            budget: 10,
            asked_by: None,
        };
        let text = render(&QuestionFacts {
            lead: Some("> a quote of my own\n\nThen my reason."),
            line,
            question: "Which venue?\n\nHall A or B",
        });
        assert_eq!(asked_words(&text), "Which venue?\n\nHall A or B");
    }

    #[test]
    fn s3_7a_offered_answers_are_buttons_by_index_beside_free_text() {
        let buttons = attachments(
            "http://cb",
            "q1",
            "key",
            &["Hall A".into(), "Hall B".into()],
        );
        let actions = buttons[0]["actions"].as_array().expect("actions");
        assert_eq!(actions.len(), 3);
        assert_eq!(actions[1]["name"], "Hall B");
        assert_eq!(actions[1]["integration"]["context"]["choice"], 1);
        assert_eq!(actions[2]["name"], "Answer…");
        assert_eq!(actions[2]["integration"]["context"]["action"], WRITE);
    }
}
