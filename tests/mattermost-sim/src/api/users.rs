//! Users, login, sessions and personal access tokens (contract §A.1).

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use mattermost_wire::model::{LoginRequest, NewUser, StatusOk, User, UserAccessToken};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::auth::{Caller, MaybeCaller};
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::ids::new_id;
use crate::state::{AppState, Data, TokenRecord, UserRecord};

const RESERVED_USERNAMES: &[&str] = &["all", "channel", "here", "matterbot", "system"];
const MIN_PASSWORD_BYTES: usize = 8;
const MAX_PASSWORD_BYTES: usize = 72;

pub fn hash_password(salt: &str, password: &str) -> String {
    let digest = Sha256::digest(format!("{salt}:{password}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Mattermost's username rule: 1–64 lowercase letters, digits, `.`, `-`, `_`,
/// not a reserved word.
pub fn check_username(username: &str) -> ApiResult<()> {
    let valid = !username.is_empty()
        && username.len() <= 64
        && username.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'_')
        })
        && !RESERVED_USERNAMES.contains(&username);
    if valid {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.user.is_valid.username.app_error",
            "Username must begin with a letter and contain between 1 and 64 lowercase characters made up of numbers, letters, and the symbols '.', '-', and '_'.",
        ))
    }
}

/// Mattermost's default password rule (`PasswordSettings`): 8 to 72 bytes,
/// judged by length before any character class.
fn check_password(password: &str) -> ApiResult<()> {
    let id = if password.len() < MIN_PASSWORD_BYTES {
        "model.user.is_valid.pwd_min_length.app_error"
    } else if password.len() > MAX_PASSWORD_BYTES {
        "model.user.is_valid.pwd_max_length.app_error"
    } else {
        return Ok(());
    };
    Err(ApiError::new(
        StatusCode::BAD_REQUEST,
        id,
        format!(
            "Your password must contain between {MIN_PASSWORD_BYTES} and {MAX_PASSWORD_BYTES} characters."
        ),
    ))
}

pub fn username_taken() -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        "app.user.save.username_exists.app_error",
        "An account with that username already exists.",
    )
}

/// Creates a person; the first account on an empty server is its admin.
pub fn create_person(data: &mut Data, new: &NewUser, now: i64) -> ApiResult<User> {
    let username = new.username.to_lowercase();
    check_username(&username)?;
    if data.user_by_name(&username).is_some() {
        return Err(username_taken());
    }
    if !new.email.contains('@') {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "model.user.is_valid.email.app_error",
            "Invalid email.",
        ));
    }
    if data
        .users
        .values()
        .any(|u| u.user.email.eq_ignore_ascii_case(&new.email))
    {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "app.user.save.email_exists.app_error",
            "An account with that email already exists.",
        ));
    }
    check_password(&new.password)?;
    let first = data.users.is_empty();
    let salt = new_id();
    let user = User {
        id: new_id(),
        create_at: now,
        update_at: now,
        username,
        email: new.email.to_lowercase(),
        first_name: new.first_name.clone(),
        last_name: new.last_name.clone(),
        nickname: new.nickname.clone(),
        roles: if first {
            "system_admin system_user"
        } else {
            "system_user"
        }
        .to_string(),
        locale: "en".to_string(),
        ..User::default()
    };
    data.users.insert(
        user.id.clone(),
        UserRecord {
            user: user.clone(),
            password_hash: hash_password(&salt, &new.password),
            salt,
            bot: None,
        },
    );
    Ok(user)
}

pub async fn create_user(
    State(sim): State<AppState>,
    MaybeCaller(caller): MaybeCaller,
    JsonBody(new): JsonBody<NewUser>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    let allowed = data.users.is_empty()
        || data.settings.enable_open_server
        || caller.as_ref().is_some_and(|c| data.is_admin(&c.user_id));
    if !allowed {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "api.user.create_user.no_open_server",
            "This server does not allow open signups.",
        ));
    }
    let user = create_person(&mut data, &new, now)?;
    drop(data);
    announce_new_user(&sim, &user.id);
    Ok((StatusCode::CREATED, Json(user)))
}

/// `new_user` goes to everyone connected when an account is made
/// (realistic noise, contract §F.1 item 27).
pub fn announce_new_user(sim: &AppState, user_id: &str) {
    let event = crate::hub::event(
        "new_user",
        crate::posting::jsonmap(&[("user_id", user_id)]),
        mattermost_wire::model::Broadcast::default(),
    );
    sim.hub.to_everyone(&event);
}

/// Opens a session for a person with the right password. As Mattermost's
/// preflight checks do, a deactivated account or a bot is refused before the
/// password is looked at, with ids the login handler leaves unmasked.
pub fn open_session(data: &mut Data, login_id: &str, password: &str) -> ApiResult<(String, User)> {
    let lower = login_id.to_lowercase();
    let invalid = || {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.user.login.invalid_credentials_email_username",
            "Enter a valid email or username and/or password.",
        )
    };
    let record = data
        .users
        .values()
        .find(|u| u.user.username == lower || u.user.email == lower)
        .ok_or_else(invalid)?;
    if record.user.delete_at != 0 {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.user.login.inactive.app_error",
            "Login failed because your account has been deactivated.",
        ));
    }
    if record.user.is_bot {
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "api.user.login.bot_login_forbidden.app_error",
            "Bot login is forbidden.",
        ));
    }
    if record.password_hash.is_empty()
        || hash_password(&record.salt, password) != record.password_hash
    {
        return Err(invalid());
    }
    let user = record.user.clone();
    let token = new_id();
    data.sessions.insert(token.clone(), user.id.clone());
    Ok((token, user))
}

pub async fn login(
    State(sim): State<AppState>,
    JsonBody(request): JsonBody<LoginRequest>,
) -> ApiResult<Response> {
    let (token, user) = open_session(&mut sim.data(), &request.login_id, &request.password)?;
    let mut headers = HeaderMap::new();
    if let Ok(value) = HeaderValue::from_str(&token) {
        headers.insert("Token", value);
    }
    if let Ok(cookie) = HeaderValue::from_str(&format!(
        "MMAUTHTOKEN={token}; Path=/; HttpOnly; SameSite=Lax"
    )) {
        headers.insert(axum::http::header::SET_COOKIE, cookie);
    }
    Ok((StatusCode::OK, headers, Json(user)).into_response())
}

pub async fn logout(State(sim): State<AppState>, caller: Caller) -> Json<StatusOk> {
    sim.data().sessions.remove(&caller.token);
    sim.hub.close_where(|_, _, token| token == caller.token);
    Json(StatusOk::ok())
}

pub async fn get_user(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<Json<User>> {
    let user_id = caller.resolve(&user_id);
    if !crate::ids::is_valid(user_id) {
        return Err(ApiError::invalid_url_param("user_id"));
    }
    Ok(Json(sim.data().user(user_id)?.user.clone()))
}

pub async fn get_by_username(
    State(sim): State<AppState>,
    _caller: Caller,
    Path(username): Path<String>,
) -> ApiResult<Json<User>> {
    sim.data()
        .user_by_name(&username)
        .map(|u| Json(u.user.clone()))
        .ok_or_else(|| ApiError::not_found("app.user.get_by_username.app_error", "user"))
}

pub async fn get_by_ids(
    State(sim): State<AppState>,
    _caller: Caller,
    JsonBody(ids): JsonBody<Vec<String>>,
) -> ApiResult<Json<Vec<User>>> {
    if ids.is_empty() {
        return Err(ApiError::invalid_param("user_ids"));
    }
    let data = sim.data();
    Ok(Json(
        ids.iter()
            .filter_map(|id| data.users.get(id))
            .map(|u| u.user.clone())
            .collect(),
    ))
}

pub async fn get_by_usernames(
    State(sim): State<AppState>,
    _caller: Caller,
    JsonBody(names): JsonBody<Vec<String>>,
) -> ApiResult<Json<Vec<User>>> {
    if names.is_empty() {
        return Err(ApiError::invalid_param("usernames"));
    }
    let data = sim.data();
    Ok(Json(
        names
            .iter()
            .filter_map(|n| data.user_by_name(n))
            .map(|u| u.user.clone())
            .collect(),
    ))
}

/// `DELETE /users/{id}`: deactivation, which ends every session and socket.
pub async fn deactivate(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    set_active(&sim, &caller, caller.resolve(&user_id), false)?;
    Ok(Json(StatusOk::ok()))
}

#[derive(Deserialize)]
pub struct Active {
    active: bool,
}

pub async fn update_active(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    JsonBody(body): JsonBody<Active>,
) -> ApiResult<Json<StatusOk>> {
    set_active(&sim, &caller, caller.resolve(&user_id), body.active)?;
    Ok(Json(StatusOk::ok()))
}

pub fn set_active(sim: &AppState, caller: &Caller, user_id: &str, active: bool) -> ApiResult<()> {
    let now = sim.clock.now();
    let mut data = sim.data();
    if caller.user_id != user_id && !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    let record = data
        .users
        .get_mut(user_id)
        .ok_or_else(|| ApiError::not_found("app.user.missing_account.const", "user"))?;
    record.user.delete_at = if active { 0 } else { now };
    record.user.update_at = now;
    if let Some(bot) = record.bot.as_mut() {
        bot.delete_at = record.user.delete_at;
        bot.update_at = now;
    }
    if !active {
        data.sessions.retain(|_, owner| owner != user_id);
        drop(data);
        sim.hub.close_where(|_, owner, _| owner == user_id);
    }
    Ok(())
}

#[derive(Deserialize)]
pub struct TokenRequest {
    #[serde(default)]
    description: String,
}

/// `POST /users/{id}/tokens`, with Mattermost's checks in its order: the
/// description, then `create_user_access_token` (system admins only), then the
/// target, then the setting — which bots are exempt from (contract §A.1).
pub async fn create_token(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
    JsonBody(request): JsonBody<TokenRequest>,
) -> ApiResult<Json<UserAccessToken>> {
    let target = caller.resolve(&user_id).to_string();
    if request.description.is_empty() {
        return Err(ApiError::invalid_param("description"));
    }
    let mut data = sim.data();
    if !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    let is_bot = data.user(&target)?.user.is_bot;
    if !is_bot && !data.settings.enable_user_access_tokens {
        return Err(ApiError::new(
            StatusCode::NOT_IMPLEMENTED,
            "app.user_access_token.disabled",
            "Personal access tokens are disabled on this server. Please contact your system administrator for details.",
        ));
    }
    let token = TokenRecord {
        id: new_id(),
        token: new_id(),
        user_id: target,
        description: request.description,
        is_active: true,
    };
    data.tokens.insert(token.token.clone(), token.clone());
    Ok(Json(UserAccessToken {
        id: token.id,
        token: token.token,
        user_id: token.user_id,
        description: token.description,
        is_active: true,
    }))
}

pub async fn list_tokens(
    State(sim): State<AppState>,
    caller: Caller,
    Path(user_id): Path<String>,
) -> ApiResult<Json<Vec<UserAccessToken>>> {
    let target = caller.resolve(&user_id).to_string();
    let data = sim.data();
    if target != caller.user_id && !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(
        data.tokens
            .values()
            .filter(|t| t.user_id == target)
            .map(|t| UserAccessToken {
                id: t.id.clone(),
                token: String::new(),
                user_id: t.user_id.clone(),
                description: t.description.clone(),
                is_active: t.is_active,
            })
            .collect(),
    ))
}

#[derive(Deserialize)]
pub struct RevokeRequest {
    token_id: String,
}

pub async fn revoke_token(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<RevokeRequest>,
) -> ApiResult<Json<StatusOk>> {
    let mut data = sim.data();
    let (secret, owner) = data
        .tokens
        .values()
        .find(|t| t.id == request.token_id)
        .map(|t| (t.token.clone(), t.user_id.clone()))
        .ok_or_else(|| {
            ApiError::not_found("app.user_access_token.get_by_user.app_error", "token")
        })?;
    if owner != caller.user_id && !data.is_admin(&caller.user_id) {
        return Err(ApiError::forbidden());
    }
    data.tokens.remove(&secret);
    drop(data);
    sim.hub.close_where(|_, _, token| token == secret);
    Ok(Json(StatusOk::ok()))
}
