//! Where a trigger may go (§4.2): a channel of the team that its agent
//! belongs to. A direct or group message is never a target — the system bot
//! cannot be a member, so delivery has no route there — and neither is a
//! channel without the agent, where the trigger would announce work nobody
//! can do. Intake refuses both loudly rather than record a row that can
//! never be posted: `config check` for schedules, the HTTP answer for
//! webhooks, boot for mail.

use crate::chat::RestError;
use crate::services::Services;

#[derive(Debug, thiserror::Error)]
pub enum IntakeRefusal {
    #[error("no agent is named `{0}` in this deployment")]
    UnknownAgent(String),
    #[error("the team has no channel named `{0}`")]
    UnknownChannel(String),
    #[error(
        "~{0} is a direct or group message: a trigger is announced by the system bot, which cannot be a member of one, so it must go to a channel (§4.2)"
    )]
    DirectMessage(String),
    #[error(
        "@{agent} is not a member of ~{channel}: the trigger would announce work nobody there can do (§4.2); add the agent to the channel in Mattermost"
    )]
    NotAMember { agent: String, channel: String },
    #[error("Mattermost could not be asked about ~{channel}: {source}")]
    Lookup { channel: String, source: RestError },
}

impl IntakeRefusal {
    /// Whether the target itself is wrong (as opposed to Mattermost not
    /// answering): a webhook sender is told 422 for these.
    pub fn is_target(&self) -> bool {
        !matches!(self, Self::Lookup { .. })
    }
}

/// The id of `channel` (by name), where it is a channel `agent` belongs to.
pub async fn target(
    services: &Services,
    agent: &str,
    channel: &str,
) -> Result<String, IntakeRefusal> {
    let Some(seat) = services.seat(agent) else {
        return Err(IntakeRefusal::UnknownAgent(agent.to_string()));
    };
    let lookup = |source| IntakeRefusal::Lookup {
        channel: channel.to_string(),
        source,
    };
    let rest = &services.system_bot.rest;
    let found = rest
        .channel_by_name(&services.team_id, channel)
        .await
        .map_err(lookup)?;
    let Some(found) = found else {
        return Err(IntakeRefusal::UnknownChannel(channel.to_string()));
    };
    if matches!(found.kind.as_str(), "D" | "G") {
        return Err(IntakeRefusal::DirectMessage(channel.to_string()));
    }
    let member = rest
        .channel_member(&found.id, &seat.user_id)
        .await
        .map_err(lookup)?;
    if member.is_none() {
        return Err(IntakeRefusal::NotAMember {
            agent: agent.to_string(),
            channel: channel.to_string(),
        });
    }
    Ok(found.id)
}
