//! Custom slash commands: registration (contract §A.9) and execution (§D).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mattermost_wire::model::{Command, CommandResponse, ExecuteCommand, NewPost, StatusOk};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::ids::new_id;
use crate::outgoing::{self, Body};
use crate::posting::{self, Outbound, deliver};
use crate::state::{AppState, Data, pair};

const BUILT_IN: &[&str] = &[
    "away",
    "code",
    "collapse",
    "dnd",
    "echo",
    "expand",
    "groupmsg",
    "header",
    "help",
    "invite",
    "invite_people",
    "join",
    "kick",
    "leave",
    "logout",
    "me",
    "msg",
    "mute",
    "offline",
    "online",
    "open",
    "purpose",
    "remove",
    "rename",
    "search",
    "settings",
    "shortcuts",
    "shrug",
    "status",
];

fn commands_disabled() -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "api.command.disabled.app_error",
        "Commands have been disabled by the system admin.",
    )
}

/// Managing commands needs a team admin or a system admin.
fn may_manage(data: &Data, team_id: &str, user_id: &str) -> ApiResult<()> {
    let team_admin = data
        .team_members
        .get(&pair(team_id, user_id))
        .is_some_and(|m| m.scheme_admin);
    if data.is_admin(user_id) || team_admin {
        Ok(())
    } else {
        Err(ApiError::forbidden())
    }
}

fn validate(data: &Data, command: &Command, except: Option<&str>) -> ApiResult<()> {
    let invalid =
        |id: &'static str, message: &str| Err(ApiError::new(StatusCode::BAD_REQUEST, id, message));
    let trigger = &command.trigger;
    if trigger.is_empty()
        || trigger.len() > 128
        || trigger.starts_with('/')
        || trigger.contains(char::is_whitespace)
    {
        return invalid(
            "model.command.is_valid.trigger.app_error",
            "Invalid trigger.",
        );
    }
    let url_ok = command.url.len() <= 1024
        && url::Url::parse(&command.url)
            .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
    if !url_ok {
        return invalid("model.command.is_valid.url.app_error", "Invalid URL.");
    }
    if !matches!(command.method.as_str(), "P" | "G") {
        return invalid("model.command.is_valid.method.app_error", "Invalid method.");
    }
    if command.display_name.chars().count() > 64 || command.description.chars().count() > 128 {
        return invalid(
            "model.command.is_valid.display_name.app_error",
            "Invalid display name or description.",
        );
    }
    let duplicate = BUILT_IN.contains(&trigger.as_str())
        || data.commands.values().any(|c| {
            c.team_id == command.team_id
                && c.trigger == *trigger
                && c.delete_at == 0
                && Some(c.id.as_str()) != except
        });
    if duplicate {
        return invalid(
            "api.command.duplicate_trigger.app_error",
            "This trigger word is already in use.",
        );
    }
    Ok(())
}

pub async fn create(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(mut command): JsonBody<Command>,
) -> ApiResult<(StatusCode, Json<Command>)> {
    let now = sim.clock.now();
    let mut data = sim.data();
    if !data.settings.enable_commands {
        return Err(commands_disabled());
    }
    data.team(&command.team_id)?;
    may_manage(&data, &command.team_id, &caller.user_id)?;
    command.trigger = command.trigger.to_lowercase();
    if command.method.is_empty() {
        command.method = "P".into();
    }
    validate(&data, &command, None)?;
    command.id = new_id();
    command.token = new_id();
    command.creator_id = caller.user_id.clone();
    command.create_at = now;
    command.update_at = now;
    command.delete_at = 0;
    data.commands.insert(command.id.clone(), command.clone());
    Ok((StatusCode::CREATED, Json(command)))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ListQuery {
    team_id: String,
    custom_only: bool,
}

pub async fn list(
    State(sim): State<AppState>,
    caller: Caller,
    Query(query): Query<ListQuery>,
) -> ApiResult<Json<Vec<Command>>> {
    let data = sim.data();
    if !data.settings.enable_commands {
        return Err(commands_disabled());
    }
    may_manage(&data, &query.team_id, &caller.user_id)?;
    let _ = query.custom_only;
    Ok(Json(
        data.commands
            .values()
            .filter(|c| c.team_id == query.team_id && c.delete_at == 0)
            .cloned()
            .collect(),
    ))
}

fn stored(data: &Data, id: &str) -> ApiResult<Command> {
    data.commands
        .get(id)
        .filter(|c| c.delete_at == 0)
        .cloned()
        .ok_or_else(|| ApiError::not_found("app.command.getcommand.app_error", "command"))
}

pub async fn get(
    State(sim): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Command>> {
    let data = sim.data();
    let command = stored(&data, &id)?;
    may_manage(&data, &command.team_id, &caller.user_id)?;
    Ok(Json(command))
}

pub async fn update(
    State(sim): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
    JsonBody(mut command): JsonBody<Command>,
) -> ApiResult<Json<Command>> {
    if command.id != id {
        return Err(ApiError::invalid_param("command"));
    }
    let now = sim.clock.now();
    let mut data = sim.data();
    let existing = stored(&data, &id)?;
    may_manage(&data, &existing.team_id, &caller.user_id)?;
    if command.team_id != existing.team_id {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.command.team_mismatch.app_error",
            "Unable to update commands across teams.",
        ));
    }
    command.trigger = command.trigger.to_lowercase();
    validate(&data, &command, Some(&id))?;
    // The server owns these; the body cannot change them.
    command.token = existing.token;
    command.creator_id = existing.creator_id;
    command.create_at = existing.create_at;
    command.update_at = now;
    data.commands.insert(id, command.clone());
    Ok(Json(command))
}

pub async fn delete(
    State(sim): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    let now = sim.clock.now();
    let mut data = sim.data();
    let existing = stored(&data, &id)?;
    may_manage(&data, &existing.team_id, &caller.user_id)?;
    if let Some(command) = data.commands.get_mut(&id) {
        command.delete_at = now;
    }
    Ok(Json(StatusOk::ok()))
}

pub async fn regen_token(
    State(sim): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let mut data = sim.data();
    let existing = stored(&data, &id)?;
    may_manage(&data, &existing.team_id, &caller.user_id)?;
    let token = new_id();
    if let Some(command) = data.commands.get_mut(&id) {
        command.token = token.clone();
    }
    Ok(Json(json!({"token": token})))
}

pub async fn autocomplete(
    State(sim): State<AppState>,
    caller: Caller,
    Path(team_id): Path<String>,
) -> ApiResult<Json<Vec<Command>>> {
    let data = sim.data();
    if !(data.is_team_member(&team_id, &caller.user_id) || data.is_admin(&caller.user_id)) {
        return Err(ApiError::forbidden());
    }
    Ok(Json(
        data.commands
            .values()
            .filter(|c| c.team_id == team_id && c.delete_at == 0 && c.auto_complete)
            .map(|c| Command {
                token: String::new(),
                ..c.clone()
            })
            .collect(),
    ))
}

/// The mention fields of contract §D.2: each `@name` of a team member
/// (`user_mentions`, `user_mentions_ids`) and each `~name` of a public channel
/// of the team (`channel_mentions`, `channel_mentions_ids`), once each.
fn mention_fields(data: &Data, text: &str, team_id: &str) -> Vec<(String, String)> {
    let mut users = Vec::new();
    let mut channels = Vec::new();
    for word in text.split_whitespace() {
        let name = word
            .get(1..)
            .unwrap_or_default()
            .trim_end_matches(['.', ',', ':', '!', '?'])
            .to_lowercase();
        if word.starts_with('@')
            && let Some(user) = data
                .user_by_name(&name)
                .filter(|u| data.is_team_member(team_id, &u.user.id))
            && !users.iter().any(|(n, _)| *n == user.user.username)
        {
            users.push((user.user.username.clone(), user.user.id.clone()));
        }
        if word.starts_with('~')
            && let Some(channel) = data.channels.values().find(|c| {
                c.team_id == team_id && c.name == name && c.kind == "O" && c.delete_at == 0
            })
            && !channels.iter().any(|(n, _)| *n == channel.name)
        {
            channels.push((channel.name.clone(), channel.id.clone()));
        }
    }
    let mut fields = Vec::new();
    for (prefix, found) in [("user_mentions", users), ("channel_mentions", channels)] {
        for (name, id) in found {
            fields.push((prefix.to_string(), name));
            fields.push((format!("{prefix}_ids"), id));
        }
    }
    fields
}

fn failed(message: impl Into<String>) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "api.command.execute_command.failed.app_error",
        message,
    )
}

/// Runs a slash command as `user_id`, as a person typing it does: the
/// server calls the command's URL with its token and acts on the answer.
pub async fn run(
    sim: &AppState,
    user_id: &str,
    request: ExecuteCommand,
) -> ApiResult<CommandResponse> {
    let text = request.command.trim_start();
    if !text.starts_with('/') || text.len() < 2 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.command.execute_command.start.app_error",
            "No command trigger found.",
        ));
    }
    let (word, rest) = text[1..]
        .split_once(char::is_whitespace)
        .unwrap_or((&text[1..], ""));
    let trigger = word.to_lowercase();
    // Every execution gets its own response_url (`CreateCommandWebhook`).
    let hook_id = new_id();
    let (command, fields) = {
        let data = sim.data();
        if !data.settings.enable_commands {
            return Err(commands_disabled());
        }
        let channel = data.postable_channel(&request.channel_id, user_id)?.clone();
        let team_id = if channel.team_id.is_empty() {
            request.team_id.clone()
        } else {
            channel.team_id.clone()
        };
        let command = data
            .commands
            .values()
            .find(|c| c.team_id == team_id && c.trigger == trigger && c.delete_at == 0)
            .cloned()
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::NOT_FOUND,
                    "api.command.execute_command.not_found.app_error",
                    format!("Command with a trigger of '{trigger}' not found."),
                )
            })?;
        let user_name = data.user(user_id)?.user.username.clone();
        let team_domain = data
            .teams
            .get(&team_id)
            .map(|t| t.name.clone())
            .unwrap_or_default();
        let site_url = data.settings.site_url.clone();
        let mut fields = vec![
            ("token".to_string(), command.token.clone()),
            ("team_id".to_string(), team_id.clone()),
            ("team_domain".to_string(), team_domain),
            ("channel_id".to_string(), channel.id.clone()),
            ("channel_name".to_string(), channel.name.clone()),
            ("user_id".to_string(), user_id.to_string()),
            ("user_name".to_string(), user_name),
            ("command".to_string(), format!("/{trigger}")),
            ("text".to_string(), rest.trim().to_string()),
            (
                "response_url".to_string(),
                format!("{site_url}/hooks/commands/{hook_id}"),
            ),
        ];
        if !request.root_id.is_empty() {
            fields.push(("root_id".to_string(), request.root_id.clone()));
        }
        fields.extend(mention_fields(&data, rest, &team_id));
        (command, fields)
    };
    super::command_hooks::record(sim, &hook_id, &command.id, user_id, &request);
    let mut fields = fields;
    fields.push((
        "trigger_id".to_string(),
        outgoing::issue_trigger(sim, user_id),
    ));
    let body = if command.method == "G" {
        Body::Query(fields)
    } else {
        Body::Form(fields)
    };
    let reply = outgoing::send(
        sim,
        "command",
        &command.url,
        body,
        &[("Authorization", format!("Token {}", command.token))],
    )
    .await
    .map_err(|e| {
        failed(format!(
            "Command with a trigger of '/{trigger}' failed: {e}"
        ))
    })?;
    if reply.status != 200 {
        return Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api.command.execute_command.failed_resp.app_error",
            format!(
                "Command with a trigger of '/{trigger}' returned response {}.",
                reply.status
            ),
        ));
    }
    let response: CommandResponse = if reply.content_type.starts_with("application/json") {
        if reply.body.trim().is_empty() {
            CommandResponse::default()
        } else {
            serde_json::from_str(&reply.body).map_err(|e| {
                failed(format!(
                    "Command with a trigger of '/{trigger}' returned an invalid response: {e}"
                ))
            })?
        }
    } else {
        CommandResponse {
            text: reply.body.clone(),
            ..CommandResponse::default()
        }
    };
    answer_all(sim, user_id, &command, &request, &response)?;
    Ok(response)
}

/// Acts on a command response and each of its extra responses (contract
/// §D.3), whether the command's own answer or one through its
/// `response_url`.
pub(super) fn answer_all(
    sim: &AppState,
    user_id: &str,
    command: &Command,
    request: &ExecuteCommand,
    response: &CommandResponse,
) -> ApiResult<()> {
    answer(sim, user_id, command, request, response)?;
    for extra in &response.extra_responses {
        answer(sim, user_id, command, request, extra)?;
    }
    Ok(())
}

/// Acts on one command response (contract §D.3): an in-channel post
/// authored by the invoker, or an ephemeral post only they see. Both carry
/// `from_webhook`, and the overrides the server allows, the registered
/// command's own taking precedence over the response's.
fn answer(
    sim: &AppState,
    user_id: &str,
    command: &Command,
    request: &ExecuteCommand,
    response: &CommandResponse,
) -> ApiResult<()> {
    let in_channel = response.response_type == "in_channel";
    if !in_channel && response.text.is_empty() && response.attachments.is_empty() {
        return Ok(());
    }
    let now = sim.clock.now();
    let channel_id = if response.channel_id.is_empty() {
        request.channel_id.clone()
    } else {
        response.channel_id.clone()
    };
    let mut data = sim.data();
    let props = answer_props(&data.settings, command, response);
    let outbound: Vec<Outbound> = if in_channel {
        let new = NewPost {
            channel_id,
            message: response.text.clone(),
            root_id: request.root_id.clone(),
            props,
            ..NewPost::default()
        };
        posting::create(&mut data, &sim.hub, user_id, new, now)?.1
    } else {
        let mut post =
            posting::ephemeral_post(user_id, &channel_id, &request.root_id, &response.text, now);
        post.props = props;
        vec![Outbound::Ephemeral {
            to: user_id.to_string(),
            post: Box::new(post),
        }]
    };
    drop(data);
    deliver(sim, outbound);
    Ok(())
}

fn answer_props(
    settings: &crate::state::settings::Settings,
    command: &Command,
    response: &CommandResponse,
) -> mattermost_wire::model::JsonMap {
    let mut props = response.props.clone();
    if !response.attachments.is_empty() {
        props.insert(
            "attachments".into(),
            serde_json::to_value(&response.attachments).unwrap_or_default(),
        );
    }
    let first = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    if settings.enable_post_username_override {
        let name = first(&command.username, &response.username);
        if !name.is_empty() {
            props.insert("override_username".into(), Value::String(name));
        }
    }
    // The wire model keeps no `icon_url` of a response, so only the
    // registered command's icon can override.
    if settings.enable_post_icon_override {
        props.insert(
            "override_icon_url".into(),
            Value::String(command.icon_url.clone()),
        );
    }
    props.insert("from_webhook".into(), Value::String("true".into()));
    props
}

pub async fn execute(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<ExecuteCommand>,
) -> ApiResult<Json<CommandResponse>> {
    Ok(Json(run(&sim, &caller.user_id, request).await?))
}
