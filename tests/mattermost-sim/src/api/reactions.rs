//! Reactions (contract §A.6): saving one bumps the post's `update_at` and
//! `has_reactions` without a `post_edited` event.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mattermost_wire::model::{JsonMap, Reaction, StatusOk};
use serde_json::Value;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::posting::{self, deliver};
use crate::state::{AppState, Data};

/// What the handler checks before anything else: ids of the right form and
/// an emoji name of 1–64 bytes.
fn well_formed(reaction: &Reaction) -> ApiResult<()> {
    let ok = crate::ids::is_valid(&reaction.user_id)
        && crate::ids::is_valid(&reaction.post_id)
        && (1..=64).contains(&reaction.emoji_name.len());
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.reaction.save_reaction.invalid.app_error",
            "Unable to save reaction.",
        ))
    }
}

/// The store's pattern for emoji names, checked after permissions.
fn check_emoji_pattern(name: &str) -> ApiResult<()> {
    if name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'))
    {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.reaction.is_valid.emoji_name.app_error",
            "Invalid emoji name.",
        ))
    }
}

/// The channel of a post `user_id` may react to: a member's (or an admin's),
/// 403 otherwise, and 403 with its own id for an archived channel.
fn reactable(data: &Data, post_id: &str, user_id: &str) -> ApiResult<String> {
    let post = data.post(post_id).map_err(|_| ApiError::forbidden())?;
    let channel = data.channel(&post.channel_id)?;
    if !(data.is_member(&channel.id, user_id) || data.is_admin(user_id)) {
        return Err(ApiError::forbidden());
    }
    if channel.delete_at != 0 {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "api.reaction.save.archived_channel.app_error",
            "You cannot react to a post in an archived channel.",
        ));
    }
    Ok(channel.id.clone())
}

fn reaction_event(data: &Data, name: &str, reaction: &Reaction) -> Vec<posting::Outbound> {
    let mut d = JsonMap::new();
    d.insert(
        "reaction".into(),
        Value::String(posting::json_string(reaction)),
    );
    posting::channel_event(data, &reaction.channel_id, name, d)
}

fn bump(data: &mut Data, post_id: &str, now: i64) {
    let has = data.reactions.iter().any(|r| r.post_id == post_id);
    if let Some(post) = data.posts.get_mut(post_id) {
        post.has_reactions = has;
        post.update_at = now;
    }
}

pub async fn add(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(mut request): JsonBody<Reaction>,
) -> ApiResult<Json<Reaction>> {
    // Mattermost's order: form, the caller's own reaction, permission,
    // archive, then the name's pattern (contract §A.6).
    well_formed(&request)?;
    if request.user_id != caller.user_id {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "api.reaction.save_reaction.user_id.app_error",
            "You can not save reaction for the other user.",
        ));
    }
    // Mattermost 11 stores emoji names lowercased.
    request.emoji_name = request.emoji_name.to_lowercase();
    let now = sim.clock.now();
    let (reaction, outbound) = {
        let mut data = sim.data();
        let channel_id = reactable(&data, &request.post_id, &caller.user_id)?;
        check_emoji_pattern(&request.emoji_name)?;
        let existing = data
            .reactions
            .iter()
            .find(|r| {
                r.post_id == request.post_id
                    && r.user_id == caller.user_id
                    && r.emoji_name == request.emoji_name
            })
            .cloned();
        let reaction = match existing {
            Some(reaction) => reaction,
            None => {
                let mut emoji: Vec<&str> = data
                    .reactions
                    .iter()
                    .filter(|r| r.post_id == request.post_id)
                    .map(|r| r.emoji_name.as_str())
                    .collect();
                emoji.push(&request.emoji_name);
                emoji.sort_unstable();
                emoji.dedup();
                if emoji.len() > data.settings.unique_emoji_reaction_limit_per_post {
                    return Err(ApiError::new(
                        StatusCode::BAD_REQUEST,
                        "app.reaction.save.save.too_many_reactions",
                        "Reaction limit has been reached for this post.",
                    ));
                }
                let reaction = Reaction {
                    user_id: caller.user_id.clone(),
                    post_id: request.post_id.clone(),
                    emoji_name: request.emoji_name.clone(),
                    create_at: now,
                    update_at: now,
                    channel_id,
                    ..Reaction::default()
                };
                data.reactions.push(reaction.clone());
                reaction
            }
        };
        bump(&mut data, &request.post_id, now);
        // Adding the same reaction again re-emits the event.
        let outbound = reaction_event(&data, "reaction_added", &reaction);
        (reaction, outbound)
    };
    deliver(&sim, outbound);
    Ok(Json(reaction))
}

pub async fn list(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Response> {
    let data = sim.data();
    let post = data.post(&post_id)?;
    data.readable_channel(&post.channel_id, &caller.user_id)?;
    let reactions = data.reactions_of(&post_id);
    if reactions.is_empty() && data.settings.empty_reactions_as_null {
        return Ok(Json(Value::Null).into_response());
    }
    Ok(Json(reactions).into_response())
}

pub async fn remove(
    State(sim): State<AppState>,
    caller: Caller,
    Path((user_id, post_id, emoji)): Path<(String, String, String)>,
) -> ApiResult<Json<StatusOk>> {
    let user_id = caller.resolve(&user_id).to_string();
    let emoji = emoji.to_lowercase();
    let now = sim.clock.now();
    let outbound = {
        let mut data = sim.data();
        if user_id != caller.user_id && !data.is_admin(&caller.user_id) {
            return Err(ApiError::forbidden());
        }
        let channel_id = reactable(&data, &post_id, &caller.user_id)?;
        let position = data
            .reactions
            .iter()
            .position(|r| r.post_id == post_id && r.user_id == user_id && r.emoji_name == emoji);
        // Removing a reaction that is not there still succeeds and is
        // announced, as Mattermost does.
        let reaction = match position {
            Some(position) => Reaction {
                delete_at: now,
                ..data.reactions.remove(position)
            },
            None => Reaction {
                user_id,
                post_id: post_id.clone(),
                emoji_name: emoji,
                channel_id,
                ..Reaction::default()
            },
        };
        bump(&mut data, &post_id, now);
        reaction_event(&data, "reaction_removed", &reaction)
    };
    deliver(&sim, outbound);
    Ok(Json(StatusOk::ok()))
}
