//! `trace {post}` (§8.3, §8.4), ephemeral: the turn that wrote the post,
//! or every turn that answered it, each traced whole (`crate::trace`). A
//! post in a channel the invoker cannot read is answered exactly as one
//! that does not exist, since the trace carries results verbatim.

use axum::Json;
use serde_json::Value;

use super::{CommandRequest, ephemeral};
use crate::approvals::presence::presence;
use crate::commands::targets::post_reference;
use crate::services::Services;
use crate::trace::{self, Reader, TurnTrace};

/// What the store holds for the post, as this invoker may see it.
enum Found {
    /// No such post, or one the invoker cannot read: the two read the same.
    Unknown,
    /// A post no turn wrote or answered.
    NoTurn,
    Traces(Vec<TurnTrace>),
}

/// The answer to `/collegium trace {post}`.
pub async fn trace(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    let [word] = words else {
        return ephemeral("Name one post: `/collegium trace {post-id}` (an id or a permalink).");
    };
    let id = match post_reference(word, services.system_bot.rest.base_url()) {
        Ok(id) => id,
        Err(refusal) => return ephemeral(&refusal),
    };
    let (post_id, invoker) = (id.clone(), request.user_id.clone());
    let found = services
        .store
        .call(move |s| {
            let turns = s.turns_of_post(&post_id)?;
            // A status post or prompt may be missing from the posts table;
            // its turn's channel is then the post's.
            let channel = match s.post(&post_id)? {
                Some(post) => Some(post.channel_id),
                None => match turns.first() {
                    Some((turn, _)) => s.turn_channel(turn)?,
                    None => None,
                },
            };
            let Some(channel) = channel else {
                return Ok(Found::Unknown);
            };
            if !presence(s, &channel, &invoker)?.may_answer() {
                return Ok(Found::Unknown);
            }
            let mut traces = Vec::new();
            for (turn, relation) in turns {
                if let Some(trace) = trace::gather(s, &turn, relation)?
                    && presence(s, &trace.head.channel_id, &invoker)?.may_answer()
                {
                    traces.push(trace);
                }
            }
            Ok(if traces.is_empty() {
                Found::NoTurn
            } else {
                Found::Traces(traces)
            })
        })
        .await;
    let traces = match found {
        Ok(Found::Unknown) => return ephemeral(&format!("There is no post `{id}` you can see.")),
        Ok(Found::NoTurn) => {
            return ephemeral(&format!(
                "No turn wrote or answered post `{id}`, so it has no trace. Name a post an agent wrote (its reply or status post) or one it answered."
            ));
        }
        Ok(Found::Traces(traces)) => traces,
        Err(error) => return ephemeral(&format!("The trace could not be read: {error}")),
    };
    let name = |username: &str| services.display_name(username).to_string();
    let text = trace::render(
        &id,
        &traces,
        &Reader {
            timezone: services.timezone,
            now: chrono::Utc::now().timestamp_millis(),
            name: &name,
        },
    );
    ephemeral(&text)
}
