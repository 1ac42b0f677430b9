//! `triggers {agent}` (§8.4, §4.2): the agent's outstanding triggers — those
//! recorded and waiting for their channel to be idle, and those announced
//! and not yet handled — each with its id, source, sender, subject, age and
//! which of the two it is. Only triggers in channels the invoker is a person
//! in are listed, by the same presence that decides who may answer (§3.7),
//! so a private channel's mail subjects reach only its members.

use axum::Json;
use serde_json::Value;

use super::forgetting::agent_in_channel;
use super::{CommandRequest, ephemeral};
use crate::approvals::presence::presence;
use crate::memory::render::age;
use crate::services::Services;
use crate::store::{Millis, Trigger, TriggerStatus, trigger_label};

/// The answer to `/collegium triggers {agent}`.
pub async fn triggers(
    services: &Services,
    request: &CommandRequest,
    words: &[&str],
) -> Json<Value> {
    let [word] = words else {
        return ephemeral("Name one agent: `/collegium triggers {agent}`.");
    };
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let (who, invoker) = (agent.clone(), request.user_id.clone());
    let listed = services
        .store
        .call(move |s| {
            let mut listed = Vec::new();
            for trigger in s.triggers_of(&who)? {
                if trigger.status != TriggerStatus::Resolved
                    && presence(s, &trigger.channel_id, &invoker)?.may_answer()
                {
                    listed.push(trigger);
                }
            }
            Ok(listed)
        })
        .await;
    match listed {
        Ok(listed) => ephemeral(&render(
            services.display_name(&agent),
            &listed,
            chrono::Utc::now().timestamp_millis(),
        )),
        Err(error) => ephemeral(&format!("The triggers could not be read: {error}")),
    }
}

/// The list, oldest first, as the store holds it.
pub fn render(name: &str, triggers: &[Trigger], now: Millis) -> String {
    if triggers.is_empty() {
        return format!("{name} has no outstanding triggers in the channels you are in.");
    }
    let mut out = format!(
        "{name} has {} outstanding trigger{} in the channels you are in:",
        triggers.len(),
        if triggers.len() == 1 { "" } else { "s" }
    );
    for t in triggers {
        let state = match (t.status, t.announcement_post_id.as_deref()) {
            (TriggerStatus::Announced, Some(post)) => {
                format!("announced (post {post}), not yet handled")
            }
            (TriggerStatus::Announced, None) => "announced, not yet handled".to_string(),
            _ => "waiting for the channel to be idle to be announced".to_string(),
        };
        out.push_str(&format!(
            "\n- {} · {} from {} · \"{}\" · recorded {} · {state}",
            trigger_label(t.id),
            t.source.as_str(),
            t.sender,
            t.subject,
            age(now, t.recorded_at),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::TriggerSource;

    fn trigger(id: i64, status: TriggerStatus, post: Option<&str>) -> Trigger {
        Trigger {
            id,
            source: TriggerSource::Mail,
            agent: "mira".into(),
            channel_id: "c".into(),
            sender: "ana@example.org".into(),
            subject: "Invoice".into(),
            reference: "r".into(),
            body: None,
            detail: serde_json::Value::Null,
            status,
            recorded_at: 0,
            announcement_post_id: post.map(str::to_string),
            announcements: 1,
        }
    }

    #[test]
    fn s8_4_triggers_name_id_source_sender_subject_age_and_whether_announced() {
        let text = render(
            "Mira",
            &[
                trigger(3, TriggerStatus::Announced, Some("p1")),
                trigger(4, TriggerStatus::Pending, None),
            ],
            2 * 3_600_000,
        );
        assert!(
            text.starts_with("Mira has 2 outstanding triggers"),
            "{text}"
        );
        assert!(
            text.contains("- T-3 · mail from ana@example.org · \"Invoice\" · recorded 2 hours ago · announced (post p1), not yet handled"),
            "{text}"
        );
        assert!(
            text.contains("- T-4 ·") && text.contains("waiting for the channel to be idle"),
            "{text}"
        );
    }

    #[test]
    fn s8_4_no_outstanding_trigger_is_said() {
        assert_eq!(
            render("Mira", &[], 0),
            "Mira has no outstanding triggers in the channels you are in."
        );
    }
}
