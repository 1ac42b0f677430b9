//! The subcommands that take something out of an agent's reach (§8.4):
//! `forget {post}`, `reset {agent}` and `queue {agent} clear`. Each changes
//! the store, then says so in the channel; none deletes a post from
//! Mattermost.

use axum::Json;
use serde_json::{Value, json};

use super::{CommandRequest, agents_here, ephemeral, notice::post_notice};
use crate::approvals::presence::presence;
use crate::commands::targets::{agent_word, post_reference};
use crate::context::window::local_time;
use crate::store::{Millis, ObservedPost};

/// What a forget found.
enum Forgetting {
    /// No such post, or one in a channel the invoker cannot read: the two
    /// read the same, so a forget reveals nothing (§8.4).
    Unknown,
    Already(Millis),
    Forgotten {
        post: Box<ObservedPost>,
        unqueued: usize,
    },
}

/// `forget {post}`: the post leaves every window, queue, search, read and
/// pinned section (§8.4). A turn already answering it keeps what it took.
pub async fn forget(
    services: &crate::services::Services,
    request: &CommandRequest,
    words: &[&str],
) -> Json<Value> {
    let [word] = words else {
        return ephemeral("Name one post: `/collegium forget {post-id}` (an id or a permalink).");
    };
    let id = match post_reference(word, services.system_bot.rest.base_url()) {
        Ok(id) => id,
        Err(refusal) => return ephemeral(&refusal),
    };
    let (post_id, invoker) = (id.clone(), request.user_id.clone());
    let now = chrono::Utc::now().timestamp_millis();
    let found = services
        .store
        .call(move |s| {
            let Some(post) = s.post(&post_id)? else {
                return Ok(Forgetting::Unknown);
            };
            if !presence(s, &post.channel_id, &invoker)?.may_answer() {
                return Ok(Forgetting::Unknown);
            }
            if let Some(at) = s.forgotten_at(&post_id)? {
                return Ok(Forgetting::Already(at));
            }
            s.forget_post(&post_id, now)?;
            let unqueued = s.unqueue_everywhere(&post_id)?;
            Ok(Forgetting::Forgotten {
                post: Box::new(post),
                unqueued,
            })
        })
        .await;
    let (post, unqueued) = match found {
        Ok(Forgetting::Unknown) => {
            return ephemeral(&format!("There is no post `{id}` you can see."));
        }
        Ok(Forgetting::Already(at)) => {
            return ephemeral(&format!(
                "Post `{id}` was already forgotten, at {}; nothing changed.",
                local_time(at, services.timezone)
            ));
        }
        Ok(Forgetting::Forgotten { post, unqueued }) => (post, unqueued),
        Err(error) => {
            return ephemeral(&format!(
                "Nothing changed: the store could not record the forget ({error})."
            ));
        }
    };
    let queues = match unqueued {
        0 => String::new(),
        1 => " It left one agent's queue.".to_string(),
        n => format!(" It left {n} agents' queues."),
    };
    let text = format!(
        "At @{}'s command, agents forgot post {id} by {} ({}): no agent reads it again in its context, a search or a queue.{queues}",
        request.user_name,
        post.author_name,
        local_time(post.created_at, services.timezone),
    );
    answered_by_notice(
        services,
        &post.channel_id,
        &[],
        text,
        "The post is forgotten",
    )
    .await
}

/// `reset {agent}`: an episode boundary for the agent here (§3.8, §8.4).
/// Its next turn reads no post and none of its own calls from before it;
/// pinned posts stand.
pub async fn reset(
    services: &crate::services::Services,
    request: &CommandRequest,
    words: &[&str],
) -> Json<Value> {
    let [word] = words else {
        return ephemeral("Name one agent: `/collegium reset {agent}`.");
    };
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let (who, channel, by) = (
        agent.clone(),
        request.channel_id.clone(),
        request.user_name.clone(),
    );
    let now = chrono::Utc::now().timestamp_millis();
    if let Err(error) = services
        .store
        .call(move |s| s.reset_episode(&who, &channel, now, &by))
        .await
    {
        return ephemeral(&format!(
            "Nothing changed: the store could not record the boundary ({error})."
        ));
    }
    let text = format!(
        "At @{}'s command, {} starts a new episode here: its next turn reads only what comes after this notice, and none of its earlier calls here. Pinned posts stay in its view.",
        request.user_name,
        services.display_name(&agent)
    );
    answered_by_notice(
        services,
        &request.channel_id,
        &[agent],
        text,
        "The boundary is set",
    )
    .await
}

/// `queue {agent} clear`: the lane's waiting rows go, the posts stay, and a
/// running turn keeps what it took (§8.4).
pub async fn clear_queue(
    services: &crate::services::Services,
    request: &CommandRequest,
    words: &[&str],
) -> Json<Value> {
    let [word, _clear] = words else {
        return ephemeral("Name one agent: `/collegium queue {agent} clear`.");
    };
    let agent = match agent_in_channel(services, request, word).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let (who, channel) = (agent.clone(), request.channel_id.clone());
    let cleared = match services
        .store
        .call(move |s| s.clear_queue(&who, &channel))
        .await
    {
        Ok(cleared) => cleared,
        Err(error) => {
            return ephemeral(&format!(
                "Nothing changed: the store could not clear the queue ({error})."
            ));
        }
    };
    let name = services.display_name(&agent).to_string();
    if cleared == 0 {
        return ephemeral(&format!("{name} has nothing queued here; nothing changed."));
    }
    let posts = if cleared == 1 {
        "1 queued post".to_string()
    } else {
        format!("{cleared} queued posts")
    };
    let text = format!(
        "At @{}'s command, {name}'s queue here was cleared: it will not answer {posts}. The posts stay in the channel, and a turn already running keeps what it took.",
        request.user_name
    );
    answered_by_notice(
        services,
        &request.channel_id,
        &[agent],
        text,
        "The queue is cleared",
    )
    .await
}

/// The username `word` names, where it is an agent of this channel; else
/// the answer naming the agents that are (§8.4).
pub(super) async fn agent_in_channel(
    services: &crate::services::Services,
    request: &CommandRequest,
    word: &str,
) -> Result<String, Json<Value>> {
    let agent = agent_word(word);
    let here = agents_here(services, &request.channel_id).await;
    if here.contains(&agent) {
        return Ok(agent);
    }
    let present = if here.is_empty() {
        "none".to_string()
    } else {
        here.join(", ")
    };
    Err(ephemeral(&format!(
        "{agent} is not an agent in this channel. Agents here: {present}."
    )))
}

/// Posts the notice a change was made under; where it cannot be posted
/// the change stands and the person is told so.
pub(super) async fn answered_by_notice(
    services: &crate::services::Services,
    channel_id: &str,
    voices: &[String],
    text: String,
    done: &str,
) -> Json<Value> {
    match post_notice(services, channel_id, voices, text).await {
        Ok(()) => Json(json!({})),
        Err(error) => ephemeral(&format!(
            "{done}, but the notice could not be posted: {error}"
        )),
    }
}
