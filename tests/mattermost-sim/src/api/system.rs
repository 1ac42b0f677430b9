//! Health, configuration and limits (contract §A.1, §A.11), and typing
//! (§A.12).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mattermost_wire::model::StatusOk;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::{Caller, MaybeCaller};
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::hub;
use crate::posting::jsonmap;
use crate::state::AppState;

pub async fn ping() -> Json<Value> {
    Json(json!({"status": "OK", "ActiveSearchBackend": "database"}))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ClientConfigQuery {
    format: String,
}

pub async fn client_config(
    State(sim): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    Query(query): Query<ClientConfigQuery>,
) -> ApiResult<Json<Value>> {
    // Mattermost: no format is 501, any format but `old` a 400.
    match query.format.as_str() {
        "old" => {}
        "" => {
            return Err(ApiError::new(
                StatusCode::NOT_IMPLEMENTED,
                "api.config.client.old_format.app_error",
                "New format for the client configuration is not supported yet. Please specify format=old in the query string.",
            ));
        }
        _ => return Err(ApiError::invalid_param("format")),
    }
    Ok(Json(sim.data().settings.client_config(caller.is_some())))
}

pub async fn config(State(sim): State<AppState>, caller: Caller) -> ApiResult<Json<Value>> {
    let data = sim.data();
    if !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(data.settings.config_json()))
}

pub async fn patch_config(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(patch): JsonBody<Value>,
) -> ApiResult<Json<Value>> {
    let mut data = sim.data();
    if !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    data.settings.apply_patch(&patch).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.config.patch_config.invalid.app_error",
            e,
        )
    })?;
    Ok(Json(data.settings.config_json()))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Typing {
    channel_id: String,
    parent_id: String,
}

/// Publishes `typing` to a channel's other members, for a member of it.
pub fn publish_typing(
    sim: &AppState,
    user_id: &str,
    channel_id: &str,
    parent_id: &str,
) -> ApiResult<()> {
    let members = {
        let data = sim.data();
        data.postable_channel(channel_id, user_id)?;
        data.members_of(channel_id)
    };
    sim.hub.to_members(&members, Some(user_id), |_| {
        hub::event(
            "typing",
            jsonmap(&[("parent_id", parent_id), ("user_id", user_id)]),
            hub::to_channel_omitting(channel_id, user_id),
        )
    });
    Ok(())
}

pub async fn typing(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    JsonBody(typing): JsonBody<Typing>,
) -> ApiResult<Json<StatusOk>> {
    let user_id = caller.resolve(&user_id).to_string();
    if user_id != caller.user_id && !sim.data().is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    if typing.channel_id.is_empty() {
        return Err(ApiError::invalid_param("channel_id"));
    }
    publish_typing(&sim, &user_id, &typing.channel_id, &typing.parent_id)?;
    Ok(Json(StatusOk::ok()))
}
