//! `units {agent}` (§8.4, §3.15): the agent's open units in this channel
//! exactly as its prompt's Open work lists them — the same renderer, so the
//! two cannot disagree — with each unit's age, state and the other party's
//! standing; then each party to them whose turn here waits on a person
//! (§8.1), on what and since when, which the standing lines leave to this
//! list. The cancel is unit_cancel.rs.

use std::collections::BTreeSet;

use axum::Json;
use serde_json::Value;

use super::forgetting::agent_in_channel;
use super::{CommandRequest, ephemeral};
use crate::context::window::local_time;
use crate::services::Services;
use crate::store::decisions::DecisionRecord;
use crate::units::render::{DEFAULT_CAP, cap_of, section};
use crate::units::standing::Viewpoint;

/// The answer to `/collegium units ...`.
pub async fn units(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    match words {
        [word] => list(services, request, word).await,
        [word, cancel, reference] if cancel.eq_ignore_ascii_case("cancel") => {
            super::unit_cancel::cancel(services, request, word, reference).await
        }
        _ => ephemeral(
            "Name one agent, and to cancel a unit its reference: `/collegium units {agent}` or `/collegium units {agent} cancel {reference}`.",
        ),
    }
}

async fn list(services: &Services, request: &CommandRequest, word: &str) -> Json<Value> {
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    // The agent's own cap, so the list is the one its prompt holds.
    let cap = services
        .seat(&agent)
        .map(|seat| cap_of(seat.agent.settings.get("tasks")))
        .unwrap_or(DEFAULT_CAP);
    let (who, channel) = (agent.clone(), request.channel_id.clone());
    let now = chrono::Utc::now().timestamp_millis();
    let (boot, tz) = (services.boot_id.clone(), services.timezone);
    let names = services.display_names.clone();
    let read = services
        .store
        .call(move |s| {
            let units = s.open_units_of(&who, &channel)?;
            let view = Viewpoint {
                reader: &who,
                channel_id: &channel,
                boot_id: &boot,
                now,
                timezone: tz,
                display_names: &names,
            };
            let listed = section(s, &units, view, cap)?;
            let mut parties: BTreeSet<String> = BTreeSet::from([who.clone()]);
            for unit in &units {
                parties.insert(unit.creator.clone());
                parties.insert(unit.assignee.clone());
            }
            let mut waiting = Vec::new();
            for party in parties {
                for (decision, at) in s.open_decisions(Some(&party))? {
                    if decision.channel_id == channel {
                        waiting.push((decision, at));
                    }
                }
            }
            Ok((listed, waiting))
        })
        .await;
    let (listed, waiting) = match read {
        Ok(read) => read,
        Err(error) => return ephemeral(&format!("The units could not be read: {error}")),
    };
    let name = services.display_name(&agent).to_string();
    let lines: Vec<String> = waiting
        .iter()
        .map(|(d, at)| {
            waiting_line(
                services.display_name(&d.agent),
                d,
                &local_time(*at, services.timezone),
            )
        })
        .collect();
    ephemeral(&render(&name, &listed, &lines))
}

/// One party whose turn here waits on a person (§8.1).
fn waiting_line(name: &str, decision: &DecisionRecord, since: &str) -> String {
    let what = match (decision.kind.as_str(), decision.tool.as_deref()) {
        ("ask", _) => "an answer to its question".to_string(),
        ("extension", _) => "a decision on extending its action budget".to_string(),
        (_, Some(tool)) => format!("a decision on its approval prompt for `{tool}`"),
        _ => "a person's decision on its prompt".to_string(),
    };
    format!("- {name}'s turn here waits on {what}, since {since}.")
}

/// The answer: the prompt's section as the agent reads it, then who waits.
pub fn render(name: &str, section: &str, waiting: &[String]) -> String {
    let mut out = format!(
        "{name}'s prompt here lists, in its own words:\n{}",
        section.trim_end()
    );
    if waiting.is_empty() {
        out.push_str("\nNo party to these units has a turn here waiting on a person.");
    } else {
        out.push_str("\nWaiting on a person here:");
        for line in waiting {
            out.push('\n');
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s8_4_units_show_the_prompts_section_then_who_waits_on_a_person() {
        let text = render(
            "Mira",
            "Open work: none. You have no open unit in this channel.\n",
            &["- Rex's turn here waits on an answer to its question, since 10:00.".into()],
        );
        assert_eq!(
            text,
            "Mira's prompt here lists, in its own words:\nOpen work: none. You have no open unit in this channel.\nWaiting on a person here:\n- Rex's turn here waits on an answer to its question, since 10:00."
        );
        assert!(render("Mira", "Open work: none.", &[]).ends_with("waiting on a person."));
    }
}
