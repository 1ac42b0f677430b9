//! `inspect {agent}` (§8.4): the agent's model, context budget, turn ceiling
//! with the result view it implies (§3.8), completion time limit (§7.2),
//! tools with those that stop for a person marked, skills, schedules with
//! their next occurrence in the operator's timezone, and the prompt a turn
//! in this channel would be given: the system prompt, then the message that
//! follows the window. The prompt is the turn's own: the seat's system
//! prompt as boot rendered it, and the message `turns::assemble` renders
//! for a turn — never a second renderer that could drift from it.

use std::fmt::Write as _;

use axum::Json;
use serde_json::Value;

use super::forgetting::agent_in_channel;
use super::{CommandRequest, ephemeral};
use crate::context::sizing::result_view_chars;
use crate::context::window::local_time;
use crate::inference::Message;
use crate::services::{Seat, Services};
use crate::tools::{Gate, ToolRef};
use crate::triggers::scheduler::Declared;
use crate::turns::assemble::{AssemblyInput, assemble};

/// The answer to `/collegium inspect {agent}`.
pub async fn inspect(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    let [word] = words else {
        return ephemeral("Name one agent: `/collegium inspect {agent}`.");
    };
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let Some(seat) = services.seat(&agent) else {
        return ephemeral(&format!("There is no agent @{agent}."));
    };
    let now = chrono::Utc::now();
    match message_after_window(services, seat, &request.channel_id, now.timestamp_millis()).await {
        Ok(message) => ephemeral(&render(services, seat, now, &message)),
        Err(error) => ephemeral(&format!(
            "The prompt could not be assembled from the store: {error}. Try again."
        )),
    }
}

/// The framework's message a turn starting now would follow its window with
/// (§3.8), assembled by the turn's own code. No turn exists, so nothing is
/// taken from the queue and no post is answered: a turn that answers posts
/// lists them at the head of this message, and nothing else differs.
pub async fn message_after_window(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    now: crate::store::Millis,
) -> Result<String, crate::store::StoreError> {
    let assembled = assemble(
        services,
        seat,
        &AssemblyInput {
            turn_id: "",
            channel_id,
            started_at: now,
            answers: &[],
            draining: false,
        },
    )
    .await?;
    Ok(match assembled.messages.get(assembled.window_len) {
        Some(Message::User(text)) => text.clone(),
        _ => String::new(),
    })
}

/// The whole answer.
fn render(
    services: &Services,
    seat: &Seat,
    now: chrono::DateTime<chrono::Utc>,
    message: &str,
) -> String {
    let agent = &seat.agent;
    let limits = &agent.limits;
    let mut out = format!(
        "**{}** (@{}) as a turn in this channel would run:\n",
        agent.display_name, agent.username
    );
    let _ = writeln!(out, "- Model: `{}`", agent.model);
    let _ = writeln!(
        out,
        "- Context budget: {} tokens of window",
        thousands(u64::from(limits.context_budget_tokens))
    );
    let view = result_view_chars(limits.turn_ceiling_tokens);
    let _ = writeln!(
        out,
        "- Turn ceiling: {} tokens; a tool result over {} characters enters as a view of its first {} with the rest by reference (`results::read`)",
        thousands(u64::from(limits.turn_ceiling_tokens)),
        thousands(view as u64),
        thousands(view as u64)
    );
    let _ = writeln!(
        out,
        "- Completion time limit: {} s",
        limits.completion_time_limit_secs
    );
    let _ = writeln!(out, "- Tools: {}", tools(services, &seat.held));
    let _ = writeln!(out, "- Skills: {}", skills(seat));
    let _ = writeln!(
        out,
        "- Schedules: {}",
        schedules(
            &services.schedules,
            &agent.username,
            now,
            services.timezone,
            &services.timezone_name
        )
    );
    out.push_str("\nSystem prompt:\n");
    out.push_str(&fenced(&seat.system_prompt));
    out.push_str("\nThe message after the window (a turn answering posts lists them first):\n");
    out.push_str(&fenced(message));
    out
}

/// Every tool the agent holds this boot, marking those that stop for a
/// person on every call: `*` an approval (§3.7), `?` a question (§3.7a).
fn tools(services: &Services, held: &[ToolRef]) -> String {
    if held.is_empty() {
        return "none".into();
    }
    let mut names: Vec<String> = held
        .iter()
        .map(|tool| {
            let mark = match services.registry.tool(tool).map(|t| t.gate) {
                Some(Gate::Approval) => "*",
                Some(Gate::Ask) => "?",
                _ => "",
            };
            format!("`{tool}`{mark}")
        })
        .collect();
    names.sort();
    format!(
        "{} (* needs a person's approval on every call; ? asks a person)",
        names.join(", ")
    )
}

/// The skills in the agent's manifest: the framework's own, then its
/// granted ones (§3.5).
fn skills(seat: &Seat) -> String {
    let names: Vec<String> = crate::tools::framework::CORE_SKILLS
        .iter()
        .map(|s| (*s).to_string())
        .chain(seat.agent.skills.iter().map(|s| s.name.clone()))
        .collect();
    names.join(", ")
}

/// The agent's declared schedules, each with its channel and its next
/// occurrence in the operator's timezone (§4.2, §8.4).
pub fn schedules(
    declared: &[Declared],
    agent: &str,
    now: chrono::DateTime<chrono::Utc>,
    timezone: chrono_tz::Tz,
    timezone_name: &str,
) -> String {
    let lines: Vec<String> = declared
        .iter()
        .filter(|d| d.agent == agent)
        .map(|d| {
            let next = d.recurrence.next_after(now).map_or_else(
                || "never again".to_string(),
                |at| format!("next {}", local_time(at.timestamp_millis(), timezone)),
            );
            format!("{} in ~{} ({next}, {timezone_name})", d.name, d.channel)
        })
        .collect();
    if lines.is_empty() {
        "none".into()
    } else {
        lines.join("; ")
    }
}

/// `text` in a code block whose fence no run of backticks in it can close.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{text}\n{fence}\n")
}

fn thousands(n: u64) -> String {
    collegium_web_page::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s8_4_a_fence_outlasts_any_backticks_in_the_prompt() {
        assert_eq!(fenced("plain"), "```\nplain\n```\n");
        assert_eq!(fenced("a ```` b"), "`````\na ```` b\n`````\n");
    }

    #[test]
    fn s8_4_schedules_name_their_channel_and_next_occurrence_in_operator_time() {
        let recurrence =
            crate::triggers::Recurrence::parse("0 9 * * *", "Europe/Berlin").expect("recurrence");
        let declared = vec![Declared {
            agent: "mira".into(),
            name: "standup".into(),
            recurrence,
            channel: "square".into(),
            text: "Post the standup.".into(),
        }];
        let now = chrono::DateTime::parse_from_rfc3339("2026-12-07T10:00:00Z")
            .expect("time")
            .with_timezone(&chrono::Utc);
        let line = schedules(
            &declared,
            "mira",
            now,
            chrono_tz::Europe::Berlin,
            "Europe/Berlin",
        );
        // 09:00 Berlin has passed at 11:00 Berlin: tomorrow's, in Berlin time.
        let tomorrow = chrono::DateTime::parse_from_rfc3339("2026-12-08T08:00:00Z")
            .expect("time")
            .timestamp_millis();
        assert_eq!(
            line,
            format!(
                "standup in ~square (next {}, Europe/Berlin)",
                local_time(tomorrow, chrono_tz::Europe::Berlin)
            )
        );
        assert_eq!(
            schedules(&declared, "bo", now, chrono_tz::UTC, "UTC"),
            "none"
        );
    }
}
