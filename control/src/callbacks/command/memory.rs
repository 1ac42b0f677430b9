//! `memory {agent}` and `memory {agent} prune {reference}` (§8.4, §3.6):
//! each entry with its reference, description, size, when written and how
//! often and how lately revised; a prune deletes an entry on a person's
//! authority, without the seen check a model's delete passes (§3.6), and
//! says so in the channel. Memories cross channels and the spec names no
//! reader, so both answer only in channels the agent belongs to
//! (docs/spec-findings.md, §8.4).

use axum::Json;
use serde_json::Value;

use super::forgetting::{agent_in_channel, answered_by_notice};
use super::{CommandRequest, ephemeral};
use crate::context::window::local_time;
use crate::memory::refs::resolve;
use crate::memory::render::age;
use crate::services::Services;
use crate::store::{MemoryEntry, Millis};
use collegium_web_page::thousands;

/// The answer to `/collegium memory ...`.
pub async fn memory(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    match words {
        [word] => list(services, request, word).await,
        [word, prune, reference] if prune.eq_ignore_ascii_case("prune") => {
            self::prune(services, request, word, reference).await
        }
        _ => ephemeral(
            "Name one agent, and to delete an entry its reference: `/collegium memory {agent}` or `/collegium memory {agent} prune {reference}`.",
        ),
    }
}

async fn list(services: &Services, request: &CommandRequest, word: &str) -> Json<Value> {
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let who = agent.clone();
    match services.store.call(move |s| s.memories_of(&who)).await {
        Ok(entries) => ephemeral(&render(
            services.display_name(&agent),
            &entries,
            chrono::Utc::now().timestamp_millis(),
            |at| local_time(at, services.timezone),
        )),
        Err(error) => ephemeral(&format!("The memories could not be read: {error}")),
    }
}

/// The listing, in the order written.
pub fn render(
    name: &str,
    entries: &[MemoryEntry],
    now: Millis,
    when: impl Fn(Millis) -> String,
) -> String {
    if entries.is_empty() {
        return format!("{name} holds no memories.");
    }
    let mut out = format!(
        "{name} holds {} memor{}:",
        entries.len(),
        if entries.len() == 1 { "y" } else { "ies" }
    );
    for e in entries {
        let revised = match (e.revisions(), e.last_revised_at) {
            (0, _) | (_, None) => "never revised".to_string(),
            (n, Some(at)) => format!(
                "revised {n} time{}, last {} ({})",
                if n == 1 { "" } else { "s" },
                when(at),
                age(now, at)
            ),
        };
        out.push_str(&format!(
            "\n- {} — {} · {} characters · written {} ({}) · {revised}",
            e.reference(),
            e.description,
            thousands(e.body.chars().count()),
            when(e.written_at),
            age(now, e.written_at),
        ));
    }
    out.push_str("\nDelete one with `/collegium memory {agent} prune {reference}`.");
    out
}

/// What a prune found.
enum Pruning {
    Refused(String),
    /// The entry moved on between the read and the delete.
    Moved,
    Deleted(Box<MemoryEntry>),
}

async fn prune(
    services: &Services,
    request: &CommandRequest,
    word: &str,
    reference: &str,
) -> Json<Value> {
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let (who, text) = (agent.clone(), reference.to_string());
    let pruned = services
        .store
        .call(move |s| {
            Ok(match resolve(s, &who, &text)? {
                Err(refusal) => Pruning::Refused(refusal),
                // As an operator: no seen check (§8.4); the revision only
                // guards against a write landing between read and delete.
                Ok(entry) if s.delete_memory(&who, entry.id, entry.revision)? => {
                    Pruning::Deleted(Box::new(entry))
                }
                Ok(_) => Pruning::Moved,
            })
        })
        .await;
    let name = services.display_name(&agent).to_string();
    let entry = match pruned {
        Ok(Pruning::Deleted(entry)) => entry,
        // The model's wording speaks to the agent ("of yours"); a person
        // reads the agent named.
        Ok(Pruning::Refused(refusal)) => {
            return ephemeral(&format!(
                "Nothing was deleted from {name}'s memories: {}",
                refusal
                    .replace("no memory of yours", "none of this agent's memories")
                    .replace(
                        "The framework's message lists the memories you hold.",
                        "`/collegium memory {agent}` lists them."
                    )
            ));
        }
        Ok(Pruning::Moved) => {
            return ephemeral(&format!(
                "{reference} was revised or deleted while being pruned; nothing was deleted. List {name}'s memories again and retry."
            ));
        }
        Err(error) => {
            return ephemeral(&format!(
                "Nothing changed: the store could not delete the entry ({error})."
            ));
        }
    };
    let text = format!(
        "At @{}'s command, {name}'s memory {} ({}) was deleted.",
        request.user_name,
        entry.reference(),
        entry.description
    );
    answered_by_notice(
        services,
        &request.channel_id,
        &[agent],
        text,
        "The memory is deleted",
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(revision: i64, revised: Option<Millis>) -> MemoryEntry {
        MemoryEntry {
            id: 1,
            agent: "mira".into(),
            key: "ab12cd34ef".into(),
            description: "Ana's deploy steps".into(),
            body: "x".repeat(1_234),
            written_at: 0,
            written_channel_id: "c".into(),
            written_post_id: None,
            revision,
            last_revised_at: revised,
            provenance_turn_id: "t".into(),
            provenance_channel_id: "c".into(),
            provenance_post_id: None,
            last_read_at: 0,
        }
    }

    #[test]
    fn s8_4_memory_lists_reference_description_size_written_and_revisions() {
        let text = render(
            "Mira",
            &[entry(3, Some(3_600_000)), entry(1, None)],
            2 * 3_600_000,
            |at| format!("@{at}"),
        );
        assert!(text.starts_with("Mira holds 2 memories:"), "{text}");
        assert!(
            text.contains("- mab12cd — Ana's deploy steps · 1,234 characters · written @0 (2 hours ago) · revised 2 times, last @3600000 (1 hour ago)"),
            "{text}"
        );
        assert!(text.contains("· never revised"), "{text}");
    }
}
