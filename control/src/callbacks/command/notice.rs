//! How a posting subcommand speaks (§8.4, §3.2): through the system bot, or
//! under an agent's own account in a direct or group message, where the
//! system bot is not a member. Agents are named without `@` in the text the
//! callers write, so a notice never starts a turn.

use tracing::warn;

use mattermost_wire::model::Post;

use crate::chat::directory::framework_post;
use crate::chat::rest::Rest;
use crate::services::Services;
use crate::store::{AuthorKind, ChannelKind};

/// Posts `text` as a notice in `channel_id`. In a direct or group message
/// it speaks as the first of `voices` present there, else as any agent
/// that is. The error is what the person is told.
pub async fn post_notice(
    services: &Services,
    channel_id: &str,
    voices: &[String],
    text: String,
) -> Result<(), String> {
    posted_notice(services, channel_id, voices, text)
        .await
        .map(|_| ())
}

/// As `post_notice`, returning the post's id, for a record that cites it
/// (a person's close of a unit, §3.15).
pub async fn posted_notice(
    services: &Services,
    channel_id: &str,
    voices: &[String],
    text: String,
) -> Result<String, String> {
    notice_post(services, channel_id, voices, text)
        .await
        .map(|(post, _)| post.id)
}

/// As `post_notice`, returning the post as created and the account that
/// spoke, for a notice that is the boundary of a clear and is edited when
/// its deletions end (§8.5).
pub async fn notice_post(
    services: &Services,
    channel_id: &str,
    voices: &[String],
    text: String,
) -> Result<(Post, Rest), String> {
    let channel = channel_id.to_string();
    let (kind, agents) = services
        .store
        .call(move |s| {
            let kind = s.channel(&channel)?.map(|c| c.kind);
            let agents: Vec<String> = s
                .members(&channel)?
                .into_iter()
                .filter(|m| m.kind == AuthorKind::Agent)
                .map(|m| m.username)
                .collect();
            Ok((kind, agents))
        })
        .await
        .map_err(|error| format!("the store could not be read ({error})"))?;
    let voice = voices
        .iter()
        .find(|v| agents.contains(v))
        .or(agents.first())
        .and_then(|agent| services.seat(agent));
    let rest = match (kind, voice) {
        (Some(ChannelKind::Direct | ChannelKind::Group), Some(seat)) => &seat.rest,
        _ => &services.system_bot.rest,
    };
    let notice = framework_post(channel_id.to_string(), text, "notice", None);
    rest.create_post(&notice)
        .await
        .map(|post| (post, rest.clone()))
        .map_err(|error| {
            warn!(%error, "could not post a command's notice");
            error.to_string()
        })
}
