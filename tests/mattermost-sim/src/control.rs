//! The test API under `/_sim/`, a prefix Mattermost never uses (contract
//! §F.3). Tests act as people here, read what a person sees, change settings,
//! wait for conditions and inject faults; the daemon never calls it.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post, put};
use axum::{Router, middleware};
use mattermost_wire::model::{
    ExecuteCommand, JsonMap, NewPost, NewUser, Post, SubmitDialogRequest, User,
};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{ApiError, ApiResult, JsonBody};
use crate::posting::{self, deliver, sanitize};
use crate::state::settings::Settings;
use crate::state::{AppState, Fault};

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/_sim/users", post(create_person))
        .route("/_sim/login", post(login_as))
        .route("/_sim/post", post(post_as))
        .route("/_sim/click", post(click_as))
        .route("/_sim/command", post(command_as))
        .route("/_sim/dialogs", get(dialogs_of))
        .route("/_sim/dialog/submit", post(submit_as))
        .route("/_sim/dialog/cancel", post(cancel_as))
        .route("/_sim/channels/{channel_id}/view", get(view_as))
        .route("/_sim/pin", post(pin))
        .route("/_sim/settings", put(put_settings).get(get_settings))
        .route("/_sim/wait", post(wait))
        .route("/_sim/ws/connections", get(connections))
        .route("/_sim/ws/drop", post(drop_sockets))
        .route("/_sim/ws/skip-seq", post(skip_seq))
        .route("/_sim/ws/stall-pongs", post(stall_pongs))
        .route("/_sim/ws/delay", post(delay_events))
        .route("/_sim/faults", post(add_faults).delete(clear_faults))
        .route("/_sim/outgoing", get(outgoing).delete(clear_outgoing))
        .route("/_sim/clock", post(clock))
        .route("/_sim/requests", get(requests).delete(clear_requests))
}

fn user_id_of(sim: &AppState, username: &str) -> ApiResult<String> {
    sim.data()
        .user_by_name(username)
        .map(|u| u.user.id.clone())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "sim.user.unknown",
                format!("no user named {username}"),
            )
        })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct NewPerson {
    username: String,
    password: String,
    email: String,
    admin: bool,
    first_name: String,
}

/// Creates a person whatever the sign-up settings, optionally an admin.
async fn create_person(
    State(sim): State<AppState>,
    JsonBody(new): JsonBody<NewPerson>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    let email = if new.email.is_empty() {
        format!("{}@example.com", new.username)
    } else {
        new.email
    };
    let password = if new.password.is_empty() {
        "Sim-password-1".to_string()
    } else {
        new.password
    };
    let user = crate::api::users::create_person(
        &mut data,
        &NewUser {
            username: new.username,
            email,
            password,
            first_name: new.first_name,
            ..NewUser::default()
        },
        now,
    )?;
    let record = data
        .users
        .get_mut(&user.id)
        .ok_or_else(ApiError::unauthorized)?;
    if new.admin {
        record.user.roles = "system_admin system_user".to_string();
    }
    let user = record.user.clone();
    drop(data);
    crate::api::users::announce_new_user(&sim, &user.id);
    Ok((StatusCode::CREATED, Json(user)))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct As {
    #[serde(rename = "as")]
    username: String,
}

/// A session token for a person, as logging in would give.
async fn login_as(
    State(sim): State<AppState>,
    JsonBody(who): JsonBody<As>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &who.username)?;
    let token = crate::ids::new_id();
    sim.data().sessions.insert(token.clone(), user_id.clone());
    Ok(Json(json!({"token": token, "user_id": user_id})))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct PostAs {
    #[serde(rename = "as")]
    username: String,
    #[serde(flatten)]
    post: NewPost,
}

async fn post_as(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<PostAs>,
) -> ApiResult<(StatusCode, Json<Post>)> {
    let user_id = user_id_of(&sim, &request.username)?;
    let now = sim.clock.now();
    let (post, outbound) = {
        let mut data = sim.data();
        let (post, outbound) = posting::create(&mut data, &sim.hub, &user_id, request.post, now)?;
        (sanitize(&data, &post), outbound)
    };
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(post)))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClickAs {
    #[serde(rename = "as")]
    username: String,
    post_id: String,
    action_id: String,
    selected_option: String,
}

async fn click_as(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<ClickAs>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    let answer = crate::api::actions::click(
        &sim,
        &user_id,
        &request.post_id,
        &request.action_id,
        &request.selected_option,
    )
    .await?;
    Ok(Json(serde_json::to_value(answer).unwrap_or_default()))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CommandAs {
    #[serde(rename = "as")]
    username: String,
    #[serde(flatten)]
    command: ExecuteCommand,
}

async fn command_as(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<CommandAs>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    let response = crate::api::commands::run(&sim, &user_id, request.command).await?;
    Ok(Json(serde_json::to_value(response).unwrap_or_default()))
}

async fn dialogs_of(State(sim): State<AppState>, Query(who): Query<As>) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &who.username)?;
    let dialogs = sim
        .transient()
        .dialogs
        .get(&user_id)
        .cloned()
        .unwrap_or_default();
    Ok(Json(serde_json::to_value(dialogs).unwrap_or_default()))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SubmitAs {
    #[serde(rename = "as")]
    username: String,
    channel_id: String,
    team_id: String,
    submission: JsonMap,
}

/// Submits the newest dialog opened for a person, echoing what it carried.
async fn submit_as(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<SubmitAs>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    let dialog = newest_dialog(&sim, &user_id)?;
    let submission = SubmitDialogRequest {
        url: dialog.url,
        callback_id: dialog.dialog.callback_id,
        state: dialog.dialog.state,
        channel_id: request.channel_id,
        team_id: request.team_id,
        submission: request.submission,
        ..SubmitDialogRequest::default()
    };
    Ok(Json(
        crate::api::actions::submit(&sim, &user_id, submission).await?,
    ))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CancelAs {
    #[serde(rename = "as")]
    username: String,
    channel_id: String,
}

/// Closes the newest dialog; the integration hears of it only where it asked.
async fn cancel_as(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<CancelAs>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    let dialog = newest_dialog(&sim, &user_id)?;
    if !dialog.dialog.notify_on_cancel {
        return Ok(Json(json!({"notified": false})));
    }
    let submission = SubmitDialogRequest {
        url: dialog.url,
        callback_id: dialog.dialog.callback_id,
        state: dialog.dialog.state,
        channel_id: request.channel_id,
        cancelled: true,
        ..SubmitDialogRequest::default()
    };
    crate::api::actions::submit(&sim, &user_id, submission).await?;
    Ok(Json(json!({"notified": true})))
}

fn newest_dialog(
    sim: &AppState,
    user_id: &str,
) -> ApiResult<mattermost_wire::model::OpenDialogRequest> {
    sim.transient()
        .dialogs
        .get(user_id)
        .and_then(|d| d.last().cloned())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "sim.dialog.none",
                "no dialog was opened for this user",
            )
        })
}

/// A channel as a person sees it: its live posts, oldest first, and the
/// ephemeral posts that person received there.
async fn view_as(
    State(sim): State<AppState>,
    Path(channel_id): Path<String>,
    Query(who): Query<As>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &who.username)?;
    let posts: Vec<Post> = {
        let data = sim.data();
        data.readable_channel(&channel_id, &user_id)?;
        let mut posts: Vec<&Post> = data
            .posts
            .values()
            .filter(|p| p.channel_id == channel_id && p.delete_at == 0)
            .collect();
        posts.sort_by(|a, b| (a.create_at, &a.id).cmp(&(b.create_at, &b.id)));
        posts.into_iter().map(|p| sanitize(&data, p)).collect()
    };
    let ephemeral: Vec<Post> = sim
        .transient()
        .ephemeral
        .get(&user_id)
        .map(|posts| {
            posts
                .iter()
                .filter(|p| p.channel_id == channel_id)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    Ok(Json(json!({"posts": posts, "ephemeral": ephemeral})))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Pin {
    post_id: String,
    pinned: bool,
}

async fn pin(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<Pin>,
) -> ApiResult<Json<Value>> {
    crate::api::posts::set_pinned(&sim, &request.post_id, None, request.pinned)?;
    Ok(Json(json!({"status": "OK"})))
}

async fn get_settings(State(sim): State<AppState>) -> Json<Settings> {
    Json(sim.data().settings.clone())
}

/// Merges the given fields into the settings (`max_post_size`,
/// `trigger_id_lifetime_ms`, `enable_bot_account_creation`, …).
async fn put_settings(
    State(sim): State<AppState>,
    JsonBody(patch): JsonBody<Value>,
) -> ApiResult<Json<Settings>> {
    let mut data = sim.data();
    let mut current = serde_json::to_value(&data.settings).unwrap_or_default();
    if let (Some(current), Some(patch)) = (current.as_object_mut(), patch.as_object()) {
        for (key, value) in patch {
            if !current.contains_key(key) {
                return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "sim.settings.unknown",
                    format!("no setting {key}"),
                ));
            }
            current.insert(key.clone(), value.clone());
        }
    }
    data.settings = serde_json::from_value(current).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            "sim.settings.invalid",
            e.to_string(),
        )
    })?;
    Ok(Json(data.settings.clone()))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Wait {
    /// `post`, `edited`, `reaction`, `ephemeral`, `dialog` or `outgoing`.
    kind: String,
    channel_id: String,
    /// The author (`post`), reactor (`reaction`) or recipient (`ephemeral`,
    /// `dialog`), by username.
    user: String,
    contains: String,
    post_id: String,
    emoji: String,
    /// Only what happened after this time (ms), for `post` and `edited`.
    since: i64,
    /// How many outgoing requests to wait for.
    count: usize,
    timeout_ms: u64,
}

/// Waits for a condition, answering what satisfied it, or 408.
async fn wait(State(sim): State<AppState>, JsonBody(w): JsonBody<Wait>) -> ApiResult<Json<Value>> {
    let timeout = Duration::from_millis(if w.timeout_ms == 0 {
        10_000
    } else {
        w.timeout_ms
    });
    let user_id = if w.user.is_empty() {
        None
    } else {
        Some(user_id_of(&sim, &w.user)?)
    };
    let found = sim
        .wait_for(timeout, |sim| match w.kind.as_str() {
            "post" => {
                let data = sim.data();
                let mut posts: Vec<&Post> = data
                    .posts
                    .values()
                    .filter(|p| {
                        p.channel_id == w.channel_id && p.delete_at == 0 && p.create_at > w.since
                    })
                    .filter(|p| user_id.as_ref().is_none_or(|u| &p.user_id == u))
                    .filter(|p| p.message.contains(&w.contains))
                    .collect();
                posts.sort_by_key(|p| p.create_at);
                posts
                    .first()
                    .map(|p| serde_json::to_value(sanitize(&data, p)).unwrap_or_default())
            }
            "edited" => {
                let data = sim.data();
                data.post(&w.post_id)
                    .ok()
                    .filter(|p| p.update_at > w.since && p.message.contains(&w.contains))
                    .map(|p| serde_json::to_value(sanitize(&data, p)).unwrap_or_default())
            }
            "reaction" => sim
                .data()
                .reactions
                .iter()
                .find(|r| {
                    r.post_id == w.post_id
                        && (w.emoji.is_empty() || r.emoji_name == w.emoji)
                        && user_id.as_ref().is_none_or(|u| &r.user_id == u)
                })
                .map(|r| serde_json::to_value(r).unwrap_or_default()),
            "ephemeral" => user_id.as_ref().and_then(|u| {
                sim.transient()
                    .ephemeral
                    .get(u)
                    .and_then(|posts| {
                        posts
                            .iter()
                            .find(|p| {
                                p.message.contains(&w.contains)
                                    && (w.channel_id.is_empty() || p.channel_id == w.channel_id)
                            })
                            .cloned()
                    })
                    .map(|p| serde_json::to_value(p).unwrap_or_default())
            }),
            "dialog" => user_id
                .as_ref()
                .and_then(|u| {
                    sim.transient()
                        .dialogs
                        .get(u)
                        .and_then(|d| d.last().cloned())
                })
                .map(|d| serde_json::to_value(d).unwrap_or_default()),
            "outgoing" => {
                let transient = sim.transient();
                (transient.outgoing.len() >= w.count.max(1))
                    .then(|| serde_json::to_value(&transient.outgoing).unwrap_or_default())
            }
            _ => None,
        })
        .await;
    found.map(Json).ok_or_else(|| {
        ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "sim.wait.timeout",
            format!("no {} matched within {timeout:?}", w.kind),
        )
    })
}

async fn connections(State(sim): State<AppState>) -> Json<Value> {
    Json(serde_json::to_value(sim.hub.connections()).unwrap_or_default())
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SocketTarget {
    #[serde(rename = "as")]
    username: String,
    connection_id: String,
}

/// Drops sockets, as a network blip would.
async fn drop_sockets(
    State(sim): State<AppState>,
    JsonBody(target): JsonBody<SocketTarget>,
) -> ApiResult<Json<Value>> {
    let user_id = if target.username.is_empty() {
        String::new()
    } else {
        user_id_of(&sim, &target.username)?
    };
    let dropped = sim.hub.close_where(|id, owner, _| {
        (target.connection_id.is_empty() || id == target.connection_id)
            && (user_id.is_empty() || owner == user_id)
    });
    Ok(Json(json!({"dropped": dropped})))
}

/// Makes the next event to a user's sockets skip a sequence number.
async fn skip_seq(
    State(sim): State<AppState>,
    JsonBody(target): JsonBody<SocketTarget>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &target.username)?;
    Ok(Json(json!({"connections": sim.hub.skip_seq(&user_id)})))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct StallPongs {
    #[serde(rename = "as")]
    username: String,
    stalled: bool,
}

/// Stops (or resumes) answering `ping` on a person's sockets, so a client's
/// liveness check fires.
async fn stall_pongs(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<StallPongs>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    Ok(Json(
        json!({"connections": sim.hub.stall_pongs(&user_id, request.stalled)}),
    ))
}

#[derive(Deserialize)]
struct DelayEvents {
    #[serde(rename = "as")]
    username: String,
    delay_ms: u64,
    #[serde(default = "one")]
    events: u32,
}

fn one() -> u32 {
    1
}

/// Holds the next `events` events to a person's sockets for `delay_ms`, so an
/// event arrives after the REST response that caused it.
async fn delay_events(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<DelayEvents>,
) -> ApiResult<Json<Value>> {
    let user_id = user_id_of(&sim, &request.username)?;
    let connections = sim.hub.delay_events(
        &user_id,
        Duration::from_millis(request.delay_ms),
        request.events,
    );
    Ok(Json(json!({"connections": connections})))
}

async fn add_faults(
    State(sim): State<AppState>,
    JsonBody(faults): JsonBody<Vec<Fault>>,
) -> Json<Value> {
    let mut transient = sim.transient();
    transient.faults.extend(faults);
    Json(json!({"faults": transient.faults.len()}))
}

async fn clear_faults(State(sim): State<AppState>) -> Json<Value> {
    sim.transient().faults.clear();
    Json(json!({"faults": 0}))
}

async fn outgoing(State(sim): State<AppState>) -> Json<Value> {
    Json(serde_json::to_value(&sim.transient().outgoing).unwrap_or_default())
}

async fn clear_outgoing(State(sim): State<AppState>) -> Json<Value> {
    sim.transient().outgoing.clear();
    Json(json!({"status": "OK"}))
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClockChange {
    advance_ms: i64,
    freeze: Option<bool>,
}

async fn clock(
    State(sim): State<AppState>,
    JsonBody(change): JsonBody<ClockChange>,
) -> Json<Value> {
    match change.freeze {
        Some(true) => sim.clock.freeze(),
        Some(false) => sim.clock.thaw(),
        None => {}
    }
    sim.clock.advance(change.advance_ms);
    Json(json!({"now": sim.clock.now()}))
}

/// Applies injected faults to Mattermost routes: a delay, or a status in
/// place of the handler's answer.
pub async fn faults(
    State(sim): State<AppState>,
    request: axum::extract::Request,
    next: middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let method = request.method().as_str().to_string();
    // Under `nest`, the URI has lost its `/api/v4` prefix; faults name the
    // full path, as a client sees it.
    let path = request
        .extensions()
        .get::<axum::extract::OriginalUri>()
        .map_or_else(|| request.uri().path(), |original| original.path())
        .to_string();
    let fault = {
        let mut transient = sim.transient();
        transient.requests.push(format!("{method} {path}"));
        let index = transient.faults.iter().position(|f| {
            (f.method == "*" || f.method.eq_ignore_ascii_case(&method))
                && path.starts_with(&f.path_prefix)
        });
        index.map(|i| {
            let fault = transient.faults[i].clone();
            if let Some(times) = transient.faults[i].times.as_mut() {
                *times -= 1;
                if *times == 0 {
                    transient.faults.remove(i);
                }
            }
            fault
        })
    };
    if let Some(fault) = fault {
        if fault.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(fault.delay_ms)).await;
        }
        if let Some(status) = fault.status {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            return ApiError::new(
                status,
                "sim.fault.injected",
                "A fault was injected for this route.",
            )
            .into_response();
        }
    }
    next.run(request).await
}

/// The REST requests served so far, as `METHOD /api/v4/path`.
async fn requests(State(sim): State<AppState>) -> Json<Value> {
    Json(json!(sim.transient().requests.clone()))
}

async fn clear_requests(State(sim): State<AppState>) -> Json<Value> {
    sim.transient().requests.clear();
    Json(json!({"status": "OK"}))
}
