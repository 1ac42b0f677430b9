//! Channels and membership (contract §A.3, §B.6).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mattermost_wire::model::{Channel, ChannelMember, JsonMap, StatusOk};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::hub::{self, Hub};
use crate::ids::new_id;
use crate::posting::{self, Outbound, deliver, json_value, jsonmap};
use crate::state::{AppState, Data, pair};

fn channel_exists() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "store.sql_channel.save_channel.exists.app_error",
        "A channel with that name already exists on the same team.",
    )
}

/// Why a user joins a channel, which decides the system post it leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Joined or added to the channel itself.
    Channel,
    /// Joined the team, which joins its default channels.
    Team,
}

/// Adds `user_id` to a channel on `actor_id`'s behalf: idempotent, refused
/// for archived channels, direct and group messages and users outside the
/// team (contract §A.3).
pub fn add_member(
    data: &mut Data,
    hub: &Hub,
    channel_id: &str,
    user_id: &str,
    actor_id: &str,
    now: i64,
) -> ApiResult<Vec<Outbound>> {
    add_member_via(data, hub, channel_id, user_id, actor_id, Via::Channel, now)
}

/// [`add_member`] for a join that `via` explains.
pub fn add_member_via(
    data: &mut Data,
    hub: &Hub,
    channel_id: &str,
    user_id: &str,
    actor_id: &str,
    via: Via,
    now: i64,
) -> ApiResult<Vec<Outbound>> {
    let channel = data.channel(channel_id)?.clone();
    if channel.delete_at != 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.add_user_to_channel.deleted.app_error",
            "The channel has been archived or deleted.",
        ));
    }
    if matches!(channel.kind.as_str(), "D" | "G") {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.channel.add_user_to_channel.type.app_error",
            "Can not add user to this channel type.",
        ));
    }
    if !data.is_team_member(&channel.team_id, user_id) {
        return Err(ApiError::not_found(
            "app.team.get_member.missing.app_error",
            "team member",
        ));
    }
    if data.is_member(channel_id, user_id) {
        return Ok(Vec::new());
    }
    data.channel_members
        .insert(pair(channel_id, user_id), member(channel_id, user_id, now));
    // Published after the membership is stored, so the added user hears it.
    let mut outbound = posting::channel_event(
        data,
        channel_id,
        "user_added",
        jsonmap(&[("user_id", user_id), ("team_id", &channel.team_id)]),
    );
    let system = join_post(data, &channel, user_id, actor_id, via);
    outbound.extend(posting::system_post(data, hub, system, now));
    Ok(outbound)
}

/// The system post a join leaves, as Mattermost words it: in the team's
/// default channel a team join (`system_join_team` / `system_add_to_team`),
/// elsewhere a channel join (`system_join_channel` / `system_add_to_channel`).
fn join_post<'a>(
    data: &Data,
    channel: &'a mattermost_wire::model::Channel,
    user_id: &'a str,
    actor_id: &'a str,
    via: Via,
) -> posting::SystemPost<'a> {
    let name = |id: &str| {
        data.users
            .get(id)
            .map(|u| u.user.username.clone())
            .unwrap_or_default()
    };
    let to_team = via == Via::Team && channel.name == super::teams::DEFAULT_CHANNEL;
    let joined = user_id == actor_id;
    let kind = match (joined, to_team) {
        (true, true) => "system_join_team",
        (true, false) => "system_join_channel",
        (false, true) => "system_add_to_team",
        (false, false) => "system_add_to_channel",
    };
    let place = if to_team { "team" } else { "channel" };
    let (message, props) = if joined {
        (
            format!("{} joined the {place}.", name(user_id)),
            jsonmap(&[("username", &name(user_id))]),
        )
    } else {
        (
            format!(
                "{} added to the {place} by {}.",
                name(user_id),
                name(actor_id)
            ),
            jsonmap(&[
                ("userId", actor_id),
                ("username", &name(actor_id)),
                ("addedUserId", user_id),
                ("addedUsername", &name(user_id)),
            ]),
        )
    };
    posting::SystemPost {
        channel_id: &channel.id,
        user_id: actor_id,
        kind,
        message,
        props,
    }
}

fn member(channel_id: &str, user_id: &str, now: i64) -> ChannelMember {
    ChannelMember {
        channel_id: channel_id.to_string(),
        user_id: user_id.to_string(),
        roles: "channel_user".to_string(),
        notify_props: json_value(json!({"desktop": "default", "mark_unread": "all"})),
        last_update_at: now,
        scheme_user: true,
        ..ChannelMember::default()
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct NewChannel {
    team_id: String,
    name: String,
    display_name: String,
    #[serde(rename = "type")]
    kind: String,
    purpose: String,
    header: String,
}

/// Mattermost 11's channel identifier rule: 1–64 lowercase letters, digits,
/// `-` and `_`.
fn valid_channel_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

pub async fn create(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(new): JsonBody<NewChannel>,
) -> ApiResult<(StatusCode, Json<Channel>)> {
    let now = sim.clock.now();
    let (channel, outbound) = {
        let mut data = sim.data();
        data.team(&new.team_id)?;
        if !(data.is_team_member(&new.team_id, &caller.user_id) || data.is_admin(&caller.user_id)) {
            return Err(ApiError::forbidden());
        }
        if new.display_name.trim().is_empty() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "model.channel.is_valid.display_name.app_error",
                "Invalid display name.",
            ));
        }
        if !valid_channel_name(&new.name) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "model.channel.is_valid.1_or_more.app_error",
                "Name must be 1 or more lowercase alphanumeric characters.",
            ));
        }
        if !matches!(new.kind.as_str(), "O" | "P") {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "model.channel.is_valid.type.app_error",
                "Invalid type.",
            ));
        }
        // An archived channel still holds its name.
        if data
            .channels
            .values()
            .any(|c| c.team_id == new.team_id && c.name == new.name)
        {
            return Err(channel_exists());
        }
        let channel = Channel {
            id: new_id(),
            create_at: now,
            update_at: now,
            team_id: new.team_id,
            kind: new.kind,
            display_name: new.display_name,
            name: new.name,
            header: new.header,
            purpose: new.purpose,
            creator_id: caller.user_id.clone(),
            ..Channel::default()
        };
        data.channels.insert(channel.id.clone(), channel.clone());
        let mut outbound = Vec::new();
        if data.is_team_member(&channel.team_id, &caller.user_id) {
            outbound = add_member(
                &mut data,
                &sim.hub,
                &channel.id,
                &caller.user_id,
                &caller.user_id,
                now,
            )?;
            if let Some(m) = data
                .channel_members
                .get_mut(&pair(&channel.id, &caller.user_id))
            {
                m.roles = "channel_user channel_admin".to_string();
                m.scheme_admin = true;
            }
        }
        (channel, outbound)
    };
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(channel)))
}

/// `POST /channels/direct`: the DM of two users, created once.
pub async fn direct(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(ids): JsonBody<Vec<String>>,
) -> ApiResult<(StatusCode, Json<Channel>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    let [a, b] = ids.as_slice() else {
        return Err(ApiError::invalid_param("user_ids"));
    };
    if !(caller.user_id == *a || caller.user_id == *b || data.is_admin(&caller.user_id)) {
        return Err(ApiError::forbidden());
    }
    data.user(a)?;
    data.user(b)?;
    let mut sorted = [a.clone(), b.clone()];
    sorted.sort();
    let name = format!("{}__{}", sorted[0], sorted[1]);
    if let Some(existing) = data
        .channels
        .values()
        .find(|c| c.kind == "D" && c.name == name)
    {
        return Ok((StatusCode::CREATED, Json(existing.clone())));
    }
    let channel = Channel {
        id: new_id(),
        create_at: now,
        update_at: now,
        kind: "D".into(),
        name,
        creator_id: caller.user_id.clone(),
        ..Channel::default()
    };
    data.channels.insert(channel.id.clone(), channel.clone());
    for user in &sorted {
        data.channel_members
            .insert(pair(&channel.id, user), member(&channel.id, user, now));
    }
    drop(data);
    for (user, other) in [(&sorted[0], &sorted[1]), (&sorted[1], &sorted[0])] {
        let event = hub::event(
            "direct_added",
            jsonmap(&[("teammate_id", other)]),
            hub::to_channel(&channel.id),
        );
        sim.hub.to_user(user, &event);
    }
    Ok((StatusCode::CREATED, Json(channel)))
}

/// `POST /channels/group`: a group message of three to eight users.
pub async fn group(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(mut ids): JsonBody<Vec<String>>,
) -> ApiResult<(StatusCode, Json<Channel>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    if !ids.contains(&caller.user_id) {
        ids.push(caller.user_id.clone());
    }
    ids.sort();
    ids.dedup();
    if !(3..=8).contains(&ids.len()) {
        return Err(ApiError::invalid_param("user_ids"));
    }
    for id in &ids {
        data.user(id)?;
    }
    let name: String = Sha256::digest(ids.join(",").as_bytes())
        .iter()
        .take(20)
        .map(|b| format!("{b:02x}"))
        .collect();
    if let Some(existing) = data
        .channels
        .values()
        .find(|c| c.kind == "G" && c.name == name)
    {
        return Ok((StatusCode::CREATED, Json(existing.clone())));
    }
    let names: Vec<String> = ids
        .iter()
        .filter_map(|id| data.users.get(id))
        .map(|u| u.user.username.clone())
        .collect();
    let channel = Channel {
        id: new_id(),
        create_at: now,
        update_at: now,
        kind: "G".into(),
        name,
        display_name: names.join(", "),
        creator_id: caller.user_id.clone(),
        ..Channel::default()
    };
    data.channels.insert(channel.id.clone(), channel.clone());
    for id in &ids {
        data.channel_members
            .insert(pair(&channel.id, id), member(&channel.id, id, now));
    }
    Ok((StatusCode::CREATED, Json(channel)))
}

pub async fn get(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
) -> ApiResult<Json<Channel>> {
    if !crate::ids::is_valid(&channel_id) {
        return Err(ApiError::invalid_url_param("channel_id"));
    }
    Ok(Json(
        sim.data()
            .readable_channel(&channel_id, &caller.user_id)?
            .clone(),
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ByNameQuery {
    include_deleted: bool,
}

/// `GET /teams/{team_id}/channels/name/{name}`. A private channel the caller
/// cannot read answers the same 404 as an absent one: Mattermost's
/// `getChannelByName` hides its existence (unlike the lookup by id, which
/// answers 403).
pub async fn by_name(
    State(sim): State<AppState>,
    caller: Caller,
    Path((team_id, name)): Path<(String, String)>,
    Query(query): Query<ByNameQuery>,
) -> ApiResult<Json<Channel>> {
    let missing = || ApiError::not_found("app.channel.get_by_name.missing.app_error", "channel");
    let data = sim.data();
    let channel = data
        .channels
        .values()
        .find(|c| {
            c.team_id == team_id && c.name == name && (query.include_deleted || c.delete_at == 0)
        })
        .ok_or_else(missing)?;
    if data.can_read(channel, &caller.user_id) {
        Ok(Json(channel.clone()))
    } else if channel.kind == "O" {
        Err(ApiError::forbidden())
    } else {
        Err(missing())
    }
}

/// `GET /users/{user_id}/teams/{team_id}/channels`: the user's channels in the
/// team, plus every direct and group message of theirs.
pub async fn for_user(
    State(sim): State<AppState>,
    caller: Caller,
    Path((user_id, team_id)): Path<(String, String)>,
) -> ApiResult<Json<Vec<Channel>>> {
    let user_id = caller.resolve(&user_id).to_string();
    let data = sim.data();
    if user_id != caller.user_id && !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(
        data.channels
            .values()
            .filter(|c| c.delete_at == 0 && data.is_member(&c.id, &user_id))
            .filter(|c| c.team_id == team_id || c.team_id.is_empty())
            .cloned()
            .collect(),
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ChannelPatch {
    display_name: Option<String>,
    header: Option<String>,
    purpose: Option<String>,
}

pub async fn patch(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
    JsonBody(patch): JsonBody<ChannelPatch>,
) -> ApiResult<Json<Channel>> {
    let now = sim.clock.now();
    let (channel, outbound) = {
        let mut data = sim.data();
        let allowed =
            data.is_member(&channel_id, &caller.user_id) || data.is_admin(&caller.user_id);
        data.channel(&channel_id)?;
        if !allowed {
            return Err(ApiError::forbidden());
        }
        let channel = data
            .channels
            .get_mut(&channel_id)
            .ok_or_else(|| ApiError::not_found("app.channel.get.existing.app_error", "channel"))?;
        if let Some(name) = patch.display_name {
            channel.display_name = name;
        }
        if let Some(header) = patch.header {
            channel.header = header;
        }
        if let Some(purpose) = patch.purpose {
            channel.purpose = purpose;
        }
        channel.update_at = now;
        let channel = channel.clone();
        let outbound = posting::channel_event(
            &data,
            &channel_id,
            "channel_updated",
            jsonmap(&[("channel", &posting::json_string(&channel))]),
        );
        (channel, outbound)
    };
    deliver(&sim, outbound);
    Ok(Json(channel))
}

/// `DELETE /channels/{id}`: archive, as `deleteChannel` and
/// `App.DeleteChannel` do it. A direct or group message cannot be archived
/// (400); archiving takes a member's `delete_*_channel` permission, which
/// every channel user holds by default, or an admin's (403); an archived
/// channel and the team's default channel are refused (400). The channel
/// keeps its members and its name; the archiver's system post lands before
/// it closes, then the team hears `channel_deleted`.
pub async fn archive(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    if !crate::ids::is_valid(&channel_id) {
        return Err(ApiError::invalid_url_param("channel_id"));
    }
    let now = sim.clock.now();
    let outbound = {
        let mut data = sim.data();
        let channel = data.channel(&channel_id)?.clone();
        if matches!(channel.kind.as_str(), "D" | "G") {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.delete_channel.type.invalid",
                "Could not delete channel of type direct or group.",
            ));
        }
        let allowed = data.is_admin(&caller.user_id)
            || is_team_admin(&data, &channel.team_id, &caller.user_id)
            || data.is_member(&channel_id, &caller.user_id);
        if !allowed {
            return Err(ApiError::forbidden());
        }
        if channel.delete_at != 0 {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.delete_channel.deleted.app_error",
                "The channel has been archived or deleted.",
            ));
        }
        if channel.name == super::teams::DEFAULT_CHANNEL {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.delete_channel.cannot.app_error",
                format!(
                    "Unable to delete the default channel {}.",
                    super::teams::DEFAULT_CHANNEL
                ),
            ));
        }
        let username = username_of(&data, &caller.user_id);
        let mut outbound = posting::system_post(
            &mut data,
            &sim.hub,
            posting::SystemPost {
                channel_id: &channel_id,
                user_id: &caller.user_id,
                kind: "system_channel_deleted",
                message: format!("{username} archived the channel."),
                props: jsonmap(&[("username", &username)]),
            },
            now,
        );
        if let Some(c) = data.channels.get_mut(&channel_id) {
            c.delete_at = now;
            c.update_at = now;
        }
        outbound.extend(team_event(
            &data,
            &channel.team_id,
            "channel_deleted",
            json_value(json!({"channel_id": channel_id, "delete_at": now})),
        ));
        outbound
    };
    deliver(&sim, outbound);
    Ok(Json(StatusOk::ok()))
}

/// `POST /channels/{id}/restore`: unarchive, as `restoreChannel` and
/// `App.RestoreChannel` do it. The permission is `manage_team` on the
/// channel's team, so a system or team admin (403 otherwise, and for a
/// direct or group message, which has no team); a channel that is not
/// archived is refused (400). The channel comes back with the members it
/// had; the team hears `channel_restored`, then the restorer's system post
/// lands. Answers the channel.
pub async fn restore(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
) -> ApiResult<Json<Channel>> {
    if !crate::ids::is_valid(&channel_id) {
        return Err(ApiError::invalid_url_param("channel_id"));
    }
    let now = sim.clock.now();
    let (channel, outbound) = {
        let mut data = sim.data();
        let channel = data.channel(&channel_id)?.clone();
        let manages_team = !channel.team_id.is_empty()
            && (data.is_admin(&caller.user_id)
                || is_team_admin(&data, &channel.team_id, &caller.user_id));
        if !manages_team {
            return Err(ApiError::forbidden());
        }
        if channel.delete_at == 0 {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.restore_channel.restored.app_error",
                "Unable to unarchive channel. The channel is not archived.",
            ));
        }
        let restored = {
            let Some(c) = data.channels.get_mut(&channel_id) else {
                return Err(ApiError::not_found(
                    "app.channel.get.existing.app_error",
                    "channel",
                ));
            };
            c.delete_at = 0;
            c.update_at = now;
            c.clone()
        };
        let mut outbound = team_event(
            &data,
            &channel.team_id,
            "channel_restored",
            jsonmap(&[("channel_id", &channel_id)]),
        );
        let username = username_of(&data, &caller.user_id);
        outbound.extend(posting::system_post(
            &mut data,
            &sim.hub,
            posting::SystemPost {
                channel_id: &channel_id,
                user_id: &caller.user_id,
                kind: "system_channel_restored",
                message: format!("{username} unarchived the channel."),
                props: jsonmap(&[("username", &username)]),
            },
            now,
        ));
        (restored, outbound)
    };
    deliver(&sim, outbound);
    Ok(Json(channel))
}

/// Whether the user is an admin of the team (`manage_team`).
fn is_team_admin(data: &Data, team_id: &str, user_id: &str) -> bool {
    data.team_members
        .get(&pair(team_id, user_id))
        .is_some_and(|m| m.delete_at == 0 && m.scheme_admin)
}

fn username_of(data: &Data, user_id: &str) -> String {
    data.users
        .get(user_id)
        .map(|u| u.user.username.clone())
        .unwrap_or_default()
}

/// A team-scoped event (`channel_deleted`, `channel_restored`): Mattermost
/// broadcasts it with the team's id, so every member of the team hears it.
fn team_event(data: &Data, team_id: &str, name: &str, d: JsonMap) -> Vec<Outbound> {
    let prefix = format!("{team_id}:");
    data.team_members
        .range(prefix.clone()..)
        .take_while(|(k, _)| k.starts_with(&prefix))
        .filter(|(_, m)| m.delete_at == 0)
        .map(|(_, m)| Outbound::Event {
            to: m.user_id.clone(),
            event: hub::event(
                name,
                d.clone(),
                mattermost_wire::model::Broadcast {
                    team_id: team_id.to_string(),
                    ..Default::default()
                },
            ),
        })
        .collect()
}

/// `page` and `per_page` of `GET /channels/{id}/members`: 60 a page unless
/// asked, never more than 200, as the server pages them.
#[derive(Deserialize, Default)]
#[serde(default)]
pub struct MembersPage {
    page: usize,
    per_page: Option<usize>,
}

pub async fn members(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
    Query(paging): Query<MembersPage>,
) -> ApiResult<Json<Vec<ChannelMember>>> {
    let data = sim.data();
    data.readable_channel(&channel_id, &caller.user_id)?;
    let per_page = paging.per_page.unwrap_or(60).clamp(1, 200);
    Ok(Json(
        data.members_of(&channel_id)
            .iter()
            .skip(paging.page.saturating_mul(per_page))
            .take(per_page)
            .filter_map(|u| data.channel_members.get(&pair(&channel_id, u)).cloned())
            .collect(),
    ))
}

pub async fn get_member(
    State(sim): State<AppState>,
    caller: Caller,
    Path((channel_id, user_id)): Path<(String, String)>,
) -> ApiResult<Json<ChannelMember>> {
    let user_id = caller.resolve(&user_id).to_string();
    let data = sim.data();
    // 403 for a channel the caller cannot read, never a misleading 404.
    data.readable_channel(&channel_id, &caller.user_id)?;
    data.channel_members
        .get(&pair(&channel_id, &user_id))
        .cloned()
        .map(Json)
        .ok_or_else(|| {
            ApiError::not_found("app.channel.get_member.missing.app_error", "channel member")
        })
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct NewChannelMember {
    user_id: String,
}

pub async fn add(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
    JsonBody(new): JsonBody<NewChannelMember>,
) -> ApiResult<(StatusCode, Json<ChannelMember>)> {
    let now = sim.clock.now();
    let (member, outbound) = {
        let mut data = sim.data();
        let channel = data.channel(&channel_id)?.clone();
        data.user(&new.user_id)?;
        let allowed = data.is_admin(&caller.user_id)
            || data.is_member(&channel_id, &caller.user_id)
            || (channel.kind == "O"
                && new.user_id == caller.user_id
                && data.is_team_member(&channel.team_id, &caller.user_id));
        if !allowed && !matches!(channel.kind.as_str(), "D" | "G") {
            return Err(ApiError::forbidden());
        }
        let outbound = add_member(
            &mut data,
            &sim.hub,
            &channel_id,
            &new.user_id,
            &caller.user_id,
            now,
        )?;
        let member = data
            .channel_members
            .get(&pair(&channel_id, &new.user_id))
            .cloned()
            .unwrap_or_default();
        (member, outbound)
    };
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(member)))
}

pub async fn remove(
    State(sim): State<AppState>,
    caller: Caller,
    Path((channel_id, user_id)): Path<(String, String)>,
) -> ApiResult<Json<StatusOk>> {
    let now = sim.clock.now();
    let outbound = {
        let mut data = sim.data();
        let channel = data.channel(&channel_id)?.clone();
        let user_id = caller.resolve(&user_id).to_string();
        let allowed = data.is_admin(&caller.user_id)
            || user_id == caller.user_id
            || data.is_member(&channel_id, &caller.user_id);
        if !allowed || matches!(channel.kind.as_str(), "D" | "G") {
            return Err(ApiError::forbidden());
        }
        if channel.name == super::teams::DEFAULT_CHANNEL {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.channel.remove.default.app_error",
                "Unable to remove user from the default channel town-square.",
            ));
        }
        if data
            .channel_members
            .remove(&pair(&channel_id, &user_id))
            .is_none()
        {
            return Err(ApiError::not_found(
                "app.channel.get_member.missing.app_error",
                "channel member",
            ));
        }
        let mut to_rest = JsonMap::new();
        to_rest.insert("user_id".into(), Value::String(user_id.clone()));
        to_rest.insert("remover_id".into(), Value::String(caller.user_id.clone()));
        let mut outbound = posting::channel_event(&data, &channel_id, "user_removed", to_rest);
        let mut to_removed = JsonMap::new();
        to_removed.insert("channel_id".into(), Value::String(channel_id.clone()));
        to_removed.insert("remover_id".into(), Value::String(caller.user_id.clone()));
        outbound.push(Outbound::Event {
            to: user_id.clone(),
            event: hub::event("user_removed", to_removed, hub::to_user(&user_id)),
        });
        let name = |id: &str| {
            data.users
                .get(id)
                .map(|u| u.user.username.clone())
                .unwrap_or_default()
        };
        let (kind, message) = if user_id == caller.user_id {
            (
                "system_leave_channel",
                format!("{} left the channel.", name(&user_id)),
            )
        } else {
            (
                "system_remove_from_channel",
                format!("{} was removed from the channel.", name(&user_id)),
            )
        };
        let props = if user_id == caller.user_id {
            jsonmap(&[("username", &name(&user_id))])
        } else {
            jsonmap(&[
                ("removedUserId", &user_id),
                ("removedUsername", &name(&user_id)),
            ])
        };
        let system = posting::SystemPost {
            channel_id: &channel_id,
            user_id: &caller.user_id,
            kind,
            message,
            props,
        };
        outbound.extend(posting::system_post(&mut data, &sim.hub, system, now));
        outbound
    };
    deliver(&sim, outbound);
    Ok(Json(StatusOk::ok()))
}
