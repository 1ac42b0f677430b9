//! Teams and team membership (contract §A.2). A new team gets its default
//! channels, and joining a team joins them, as Mattermost does.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use mattermost_wire::model::{Channel, StatusOk, Team, TeamMember};
use serde::Deserialize;

use super::channels::Via;
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::hub::Hub;
use crate::ids::new_id;
use crate::posting::{Outbound, deliver};
use crate::state::{AppState, Data, pair};

/// Channels every team has, and every member joins.
pub const DEFAULT_CHANNELS: &[(&str, &str)] =
    &[(DEFAULT_CHANNEL, "Town Square"), ("off-topic", "Off-Topic")];

/// The team's default channel, which nobody can leave.
pub const DEFAULT_CHANNEL: &str = "town-square";

const RESERVED_TEAM_NAMES: &[&str] = &[
    "admin", "api", "channel", "claim", "error", "files", "help", "login", "logout", "oauth",
    "plugins", "post", "signup", "static",
];

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct NewTeam {
    name: String,
    display_name: String,
    #[serde(rename = "type")]
    kind: String,
}

pub async fn create(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(new): JsonBody<NewTeam>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    let now = sim.clock.now();
    let (team, outbound) = {
        let mut data = sim.data();
        let name = new.name.to_lowercase();
        let valid = (2..=64).contains(&name.len())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !RESERVED_TEAM_NAMES.contains(&name.as_str());
        if !valid || new.display_name.trim().is_empty() {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "model.team.is_valid.name.app_error",
                "Invalid name.",
            ));
        }
        if !matches!(new.kind.as_str(), "O" | "I") {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "model.team.is_valid.type.app_error",
                "Invalid type.",
            ));
        }
        if data.teams.values().any(|t| t.name == name) {
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                "app.team.save.existing.app_error",
                "A team with that name already exists.",
            ));
        }
        let team = Team {
            id: new_id(),
            create_at: now,
            update_at: now,
            display_name: new.display_name,
            name,
            kind: new.kind,
            ..Team::default()
        };
        data.teams.insert(team.id.clone(), team.clone());
        for (name, display) in DEFAULT_CHANNELS {
            let channel = Channel {
                id: new_id(),
                create_at: now,
                update_at: now,
                team_id: team.id.clone(),
                kind: "O".into(),
                display_name: (*display).to_string(),
                name: (*name).to_string(),
                creator_id: caller.user_id.clone(),
                ..Channel::default()
            };
            data.channels.insert(channel.id.clone(), channel);
        }
        let outbound = join_team(
            &mut data,
            &sim.hub,
            &team.id,
            &caller.user_id,
            &caller.user_id,
            true,
            now,
        )?;
        (team, outbound)
    };
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(team)))
}

/// Adds a user to a team (idempotently) and to its default channels, on
/// `actor_id`'s behalf (the user itself when joining).
pub fn join_team(
    data: &mut Data,
    hub: &Hub,
    team_id: &str,
    user_id: &str,
    actor_id: &str,
    admin: bool,
    now: i64,
) -> ApiResult<Vec<Outbound>> {
    if data.is_team_member(team_id, user_id) {
        return Ok(Vec::new());
    }
    let members = data
        .team_members
        .values()
        .filter(|m| m.team_id == team_id && m.delete_at == 0)
        .count();
    if members >= data.settings.max_users_per_team {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "app.team.join_user_to_team.max_accounts.app_error",
            "This team has reached the maximum number of allowed accounts.",
        ));
    }
    data.team_members.insert(
        pair(team_id, user_id),
        TeamMember {
            team_id: team_id.to_string(),
            user_id: user_id.to_string(),
            roles: if admin {
                "team_user team_admin"
            } else {
                "team_user"
            }
            .to_string(),
            scheme_user: true,
            scheme_admin: admin,
            ..TeamMember::default()
        },
    );
    let mut outbound = vec![Outbound::Event {
        to: user_id.to_string(),
        event: crate::hub::event(
            "added_to_team",
            crate::posting::jsonmap(&[("team_id", team_id), ("user_id", user_id)]),
            crate::hub::to_user(user_id),
        ),
    }];
    let defaults: Vec<String> = data
        .channels
        .values()
        .filter(|c| {
            c.team_id == team_id
                && c.delete_at == 0
                && DEFAULT_CHANNELS.iter().any(|(n, _)| *n == c.name)
        })
        .map(|c| c.id.clone())
        .collect();
    for channel_id in defaults {
        outbound.extend(super::channels::add_member_via(
            data,
            hub,
            &channel_id,
            user_id,
            actor_id,
            Via::Team,
            now,
        )?);
    }
    Ok(outbound)
}

pub async fn get_by_name(
    State(sim): State<AppState>,
    caller: Caller,
    Path(name): Path<String>,
) -> ApiResult<Json<Team>> {
    let data = sim.data();
    let team = data
        .teams
        .values()
        .find(|t| t.name == name && t.delete_at == 0)
        .ok_or_else(|| ApiError::not_found("app.team.get_by_name.missing.app_error", "team"))?;
    readable(&data, team, &caller)?;
    Ok(Json(team.clone()))
}

pub async fn get(
    State(sim): State<AppState>,
    caller: Caller,
    Path(team_id): Path<String>,
) -> ApiResult<Json<Team>> {
    let data = sim.data();
    let team = data.team(&team_id)?;
    readable(&data, team, &caller)?;
    Ok(Json(team.clone()))
}

/// A team is visible to its members and admins, and to anyone when it is open
/// to all; otherwise 403, which a client must not read as absent.
fn readable(data: &Data, team: &Team, caller: &Caller) -> ApiResult<()> {
    if data.is_admin(&caller.user_id)
        || data.is_team_member(&team.id, &caller.user_id)
        || (team.kind == "O" && team.allow_open_invite)
    {
        Ok(())
    } else {
        Err(ApiError::forbidden())
    }
}

pub async fn for_user(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<Json<Vec<Team>>> {
    let user_id = caller.resolve(&user_id).to_string();
    let data = sim.data();
    if user_id != caller.user_id && !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(
        data.teams
            .values()
            .filter(|t| t.delete_at == 0 && data.is_team_member(&t.id, &user_id))
            .cloned()
            .collect(),
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct NewMember {
    user_id: String,
}

pub async fn add_member(
    State(sim): State<AppState>,
    caller: Caller,
    Path(team_id): Path<String>,
    JsonBody(new): JsonBody<NewMember>,
) -> ApiResult<(StatusCode, Json<TeamMember>)> {
    let now = sim.clock.now();
    let (member, outbound) = {
        let mut data = sim.data();
        let team = data.team(&team_id)?.clone();
        data.user(&new.user_id)?;
        let team_admin = data
            .team_members
            .get(&pair(&team_id, &caller.user_id))
            .is_some_and(|m| m.scheme_admin);
        let self_join = new.user_id == caller.user_id && team.kind == "O" && team.allow_open_invite;
        if !(data.is_admin(&caller.user_id) || team_admin || self_join) {
            return Err(ApiError::forbidden());
        }
        let outbound = join_team(
            &mut data,
            &sim.hub,
            &team_id,
            &new.user_id,
            &caller.user_id,
            false,
            now,
        )?;
        let member = data
            .team_members
            .get(&pair(&team_id, &new.user_id))
            .cloned()
            .unwrap_or_default();
        (member, outbound)
    };
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(member)))
}

pub async fn get_member(
    State(sim): State<AppState>,
    _caller: Caller,
    Path((team_id, user_id)): Path<(String, String)>,
) -> ApiResult<Json<TeamMember>> {
    sim.data()
        .team_members
        .get(&pair(&team_id, &user_id))
        .cloned()
        .map(Json)
        .ok_or_else(|| ApiError::not_found("app.team.get_member.missing.app_error", "team member"))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct SchemeRoles {
    scheme_user: bool,
    scheme_admin: bool,
}

pub async fn scheme_roles(
    State(sim): State<AppState>,
    caller: Caller,
    Path((team_id, user_id)): Path<(String, String)>,
    JsonBody(roles): JsonBody<SchemeRoles>,
) -> ApiResult<Json<StatusOk>> {
    let mut data = sim.data();
    let team_admin = data
        .team_members
        .get(&pair(&team_id, &caller.user_id))
        .is_some_and(|m| m.scheme_admin);
    if !(data.is_admin(&caller.user_id) || team_admin) {
        return Err(ApiError::forbidden());
    }
    let member = data
        .team_members
        .get_mut(&pair(&team_id, &user_id))
        .ok_or_else(|| {
            ApiError::not_found("app.team.get_member.missing.app_error", "team member")
        })?;
    member.scheme_user = roles.scheme_user;
    member.scheme_admin = roles.scheme_admin;
    member.roles = if roles.scheme_admin {
        "team_user team_admin"
    } else {
        "team_user"
    }
    .to_string();
    Ok(Json(StatusOk::ok()))
}
