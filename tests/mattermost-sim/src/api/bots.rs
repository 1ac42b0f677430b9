//! Bot accounts (contract §A.1): a bot is a user with `is_bot`, created by an
//! admin while the server allows it, and it cannot log in.

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mattermost_wire::model::{Bot, NewBot, User};
use serde::Deserialize;

use super::users::{check_username, set_active, username_taken};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::ids::new_id;
use crate::state::{AppState, UserRecord};

pub async fn create(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(new): JsonBody<NewBot>,
) -> ApiResult<(StatusCode, Json<Bot>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    // Mattermost checks `create_bot`, then that the caller is no bot, and only
    // then the setting.
    let caller_is_bot = data.user(&caller.user_id)?.user.is_bot;
    if caller_is_bot || !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    if !data.settings.enable_bot_account_creation {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "api.bot.create_disabled",
            "Bot creation has been disabled.",
        ));
    }
    let username = new.username.to_lowercase();
    check_username(&username)?;
    if data.user_by_name(&username).is_some() {
        return Err(username_taken());
    }
    let bot = Bot {
        user_id: new_id(),
        username: username.clone(),
        display_name: new.display_name.clone(),
        description: new.description.clone(),
        owner_id: caller.user_id.clone(),
        create_at: now,
        update_at: now,
        delete_at: 0,
    };
    let user = User {
        id: bot.user_id.clone(),
        create_at: now,
        update_at: now,
        username,
        email: format!("{}@localhost", bot.username),
        first_name: new.display_name,
        roles: "system_user".to_string(),
        locale: "en".to_string(),
        is_bot: true,
        bot_description: new.description,
        ..User::default()
    };
    data.users.insert(
        user.id.clone(),
        UserRecord {
            user,
            password_hash: String::new(),
            salt: String::new(),
            bot: Some(bot.clone()),
        },
    );
    Ok((StatusCode::CREATED, Json(bot)))
}

fn bot_of(sim: &AppState, bot_id: &str) -> ApiResult<Bot> {
    sim.data()
        .users
        .get(bot_id)
        .and_then(|u| u.bot.clone())
        .ok_or_else(|| ApiError::not_found("store.sql_bot.get.missing.app_error", "bot"))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ListQuery {
    include_deleted: bool,
}

pub async fn list(
    State(sim): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> ApiResult<Json<Vec<Bot>>> {
    let data = sim.data();
    if !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(
        data.users
            .values()
            .filter_map(|u| u.bot.clone())
            .filter(|b| query.include_deleted || b.delete_at == 0)
            .collect(),
    ))
}

pub async fn get(
    State(sim): State<AppState>,
    _caller: Caller,
    Path(bot_id): Path<String>,
) -> ApiResult<Json<Bot>> {
    Ok(Json(bot_of(&sim, &bot_id)?))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct BotPatch {
    display_name: Option<String>,
    description: Option<String>,
}

pub async fn patch(
    State(sim): State<AppState>,
    caller: Caller,
    Path(bot_id): Path<String>,
    JsonBody(patch): JsonBody<BotPatch>,
) -> ApiResult<Json<Bot>> {
    let now = sim.clock.now();
    let mut data = sim.data();
    let admin = data.is_admin(&caller.user_id);
    let record = data
        .users
        .get_mut(&bot_id)
        .filter(|u| u.bot.is_some())
        .ok_or_else(|| ApiError::not_found("store.sql_bot.get.missing.app_error", "bot"))?;
    let Some(bot) = record.bot.as_mut() else {
        return Err(ApiError::not_found(
            "store.sql_bot.get.missing.app_error",
            "bot",
        ));
    };
    if !admin && bot.owner_id != caller.user_id {
        return Err(ApiError::forbidden());
    }
    if let Some(name) = patch.display_name {
        bot.display_name = name.clone();
        record.user.first_name = name;
    }
    if let Some(description) = patch.description {
        bot.description = description.clone();
        record.user.bot_description = description;
    }
    bot.update_at = now;
    record.user.update_at = now;
    Ok(Json(bot.clone()))
}

pub async fn disable(
    State(sim): State<AppState>,
    caller: Caller,
    Path(bot_id): Path<String>,
) -> ApiResult<Json<Bot>> {
    bot_of(&sim, &bot_id)?;
    set_active(&sim, &caller, &bot_id, false)?;
    Ok(Json(bot_of(&sim, &bot_id)?))
}

pub async fn enable(
    State(sim): State<AppState>,
    caller: Caller,
    Path(bot_id): Path<String>,
) -> ApiResult<Json<Bot>> {
    bot_of(&sim, &bot_id)?;
    set_active(&sim, &caller, &bot_id, true)?;
    Ok(Json(bot_of(&sim, &bot_id)?))
}
