//! Where a trigger may go (§4.2): a channel of the team that its agent
//! belongs to. A direct or group message is never a target — the system bot
//! cannot be a member, so delivery has no route there — and neither is a
//! channel without the agent, where the trigger would announce work nobody
//! can do, nor an archived channel, where Mattermost refuses every post.
//! Intake refuses each loudly rather than record a row that can never be
//! posted: `config check` for schedules, the HTTP answer for webhooks, boot
//! for mail. A name is checked against Mattermost's own grammar before it
//! is looked up: a webhook sender's text goes into the lookup's path, and
//! `../` there would aim the system bot's request at another route.

use crate::chat::RestError;
use crate::services::Services;

#[derive(Debug, thiserror::Error)]
pub enum IntakeRefusal {
    #[error("no agent is named `{0}` in this deployment")]
    UnknownAgent(String),
    #[error("the team has no channel named `{0}`")]
    UnknownChannel(String),
    #[error(
        "`{0}` is not a channel name: a channel is named as in its address, 1 to 64 lowercase letters, digits, `-` and `_`"
    )]
    NotAName(String),
    #[error(
        "~{0} is archived: Mattermost refuses every post there, so the trigger could never be announced (§4.2)"
    )]
    Archived(String),
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
    if !is_channel_name(channel) {
        return Err(IntakeRefusal::NotAName(channel.to_string()));
    }
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
    if found.delete_at != 0 {
        return Err(IntakeRefusal::Archived(channel.to_string()));
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

/// Mattermost's grammar for a channel's name (its `IsValidChannelIdentifier`):
/// 1 to 64 characters, each a lowercase ASCII letter, a digit, `-` or `_`.
fn is_channel_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::is_channel_name;

    #[test]
    fn s4_2_only_mattermosts_channel_names_reach_the_lookup() {
        for name in ["town-square", "ops_2", "a", &"x".repeat(64)] {
            assert!(is_channel_name(name), "{name}");
        }
        for name in [
            "",
            "../../channels/abc",
            "Town-Square",
            "town square",
            "ops%2F..",
            "ops?x=1",
            "ops/../x",
            "ops\\x",
            &"x".repeat(65),
            "caf\u{e9}",
        ] {
            assert!(!is_channel_name(name), "{name}");
        }
    }
}
