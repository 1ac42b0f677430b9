//! A thin typed client for the parts of Mattermost's API v4 Collegium uses
//! (the Mattermost contract the simulator implements, `docs/mattermost-sim.md`).
//! One instance acts with one token:
//! an agent's, the system bot's, or (in the provisioner only) an admin's.

use collegium_worker_kit::redact::Redacted;
use std::fmt;

use mattermost_wire::model::{
    AppError, Bot, Channel, ChannelMember, Command, LoginRequest, NewPost, Post, PostPatch, Team,
    TeamMember, User, UserAccessToken,
};
use reqwest::{Method, StatusCode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

#[derive(Debug, thiserror::Error)]
pub enum RestError {
    /// Mattermost answered with an error body.
    #[error("Mattermost answered {status}: {} ({})", .error.message, .error.id)]
    Api { status: u16, error: AppError },
    /// Mattermost could not be reached, or the answer did not arrive whole.
    #[error("cannot reach Mattermost at {url}: {reason}")]
    Unreachable { url: String, reason: String },
    /// The answer was not the JSON expected.
    #[error("Mattermost's answer to {path} did not parse: {reason}")]
    Decode { path: String, reason: String },
}

impl RestError {
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    pub fn is_not_found(&self) -> bool {
        self.status() == Some(404)
    }
}

pub type RestResult<T> = Result<T, RestError>;

#[derive(Clone)]
pub struct Rest {
    base: String,
    token: Option<Redacted<String>>,
    http: reqwest::Client,
}

impl fmt::Debug for Rest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The token is a credential: never printed.
        write!(
            f,
            "Rest({}, token {})",
            self.base,
            if self.token.is_some() { "set" } else { "unset" }
        )
    }
}

impl Rest {
    pub fn new(base_url: &str) -> Result<Self, reqwest::Error> {
        Ok(Self {
            base: base_url.trim_end_matches('/').to_string(),
            token: None,
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(std::time::Duration::from_secs(30))
                .build()?,
        })
    }

    /// The same client acting with `token`.
    pub fn with_token(&self, token: &str) -> Self {
        Self {
            token: Some(Redacted::new(token.to_string())),
            ..self.clone()
        }
    }

    pub fn base_url(&self) -> &str {
        &self.base
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> RestResult<T> {
        self.send(method, path, &[], body.map(Body::Json)).await
    }

    async fn send<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, &str)],
        body: Option<Body<'_>>,
    ) -> RestResult<T> {
        let url = format!("{}/api/v4/{path}", self.base);
        let url =
            reqwest::Url::parse_with_params(&url, query).map_err(|e| RestError::Unreachable {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        let mut request = self.http.request(method, url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token.expose());
        }
        match body {
            Some(Body::Json(body)) => request = request.json(body),
            Some(Body::Raw(bytes)) => request = request.body(bytes.to_vec()),
            None => {}
        }
        let unreachable = |e: reqwest::Error| RestError::Unreachable {
            url: self.base.clone(),
            reason: e.to_string(),
        };
        let response = request.send().await.map_err(unreachable)?;
        let status = response.status();
        let text = response.text().await.map_err(unreachable)?;
        if !status.is_success() {
            let error = serde_json::from_str::<AppError>(&text).unwrap_or_else(|_| AppError {
                message: text.chars().take(200).collect(),
                status_code: status.as_u16(),
                ..AppError::default()
            });
            return Err(RestError::Api {
                status: status.as_u16(),
                error,
            });
        }
        serde_json::from_str(if text.is_empty() { "null" } else { &text }).map_err(|e| {
            RestError::Decode {
                path: path.to_string(),
                reason: e.to_string(),
            }
        })
    }

    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> RestResult<T> {
        self.call(Method::GET, path, None).await
    }

    pub async fn post<T: DeserializeOwned, B: Serialize>(
        &self,
        path: &str,
        body: &B,
    ) -> RestResult<T> {
        let body = serde_json::to_value(body).unwrap_or(Value::Null);
        self.call(Method::POST, path, Some(&body)).await
    }

    pub async fn put<T: DeserializeOwned, B: Serialize>(
        &self,
        path: &str,
        body: &B,
    ) -> RestResult<T> {
        let body = serde_json::to_value(body).unwrap_or(Value::Null);
        self.call(Method::PUT, path, Some(&body)).await
    }

    pub async fn delete<T: DeserializeOwned>(&self, path: &str) -> RestResult<T> {
        self.call(Method::DELETE, path, None).await
    }

    /// A lookup that may find nothing: 404 is `None`.
    async fn find<T: DeserializeOwned>(&self, path: &str) -> RestResult<Option<T>> {
        match self.get(path).await {
            Ok(found) => Ok(Some(found)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// Logs in with a password; the session token comes in the `Token` header.
    pub async fn login(&self, login_id: &str, password: &str) -> RestResult<(User, String)> {
        let url = format!("{}/api/v4/users/login", self.base);
        let body = LoginRequest {
            login_id: login_id.to_string(),
            password: password.to_string(),
        };
        let response =
            self.http
                .post(&url)
                .json(&body)
                .send()
                .await
                .map_err(|e| RestError::Unreachable {
                    url: self.base.clone(),
                    reason: e.to_string(),
                })?;
        let status = response.status();
        let token = response
            .headers()
            .get("Token")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = response.text().await.unwrap_or_default();
        if status != StatusCode::OK {
            let error = serde_json::from_str::<AppError>(&text).unwrap_or_default();
            return Err(RestError::Api {
                status: status.as_u16(),
                error,
            });
        }
        let user: User = serde_json::from_str(&text).map_err(|e| RestError::Decode {
            path: "users/login".into(),
            reason: e.to_string(),
        })?;
        let token = token.ok_or_else(|| RestError::Decode {
            path: "users/login".into(),
            reason: "no Token header".into(),
        })?;
        Ok((user, token))
    }

    pub async fn me(&self) -> RestResult<User> {
        self.get("users/me").await
    }

    pub async fn user_by_username(&self, username: &str) -> RestResult<Option<User>> {
        self.find(&format!("users/username/{username}")).await
    }

    pub async fn bot(&self, user_id: &str) -> RestResult<Option<Bot>> {
        self.find(&format!("bots/{user_id}")).await
    }

    pub async fn create_bot(
        &self,
        username: &str,
        display_name: &str,
        description: &str,
    ) -> RestResult<Bot> {
        self.post("bots", &json!({"username": username, "display_name": display_name, "description": description}))
            .await
    }

    pub async fn enable_bot(&self, user_id: &str) -> RestResult<Bot> {
        self.post(&format!("bots/{user_id}/enable"), &json!({}))
            .await
    }

    pub async fn rename_bot(&self, user_id: &str, display_name: &str) -> RestResult<Bot> {
        self.put(
            &format!("bots/{user_id}"),
            &json!({"display_name": display_name}),
        )
        .await
    }

    pub async fn create_token(
        &self,
        user_id: &str,
        description: &str,
    ) -> RestResult<UserAccessToken> {
        self.post(
            &format!("users/{user_id}/tokens"),
            &json!({"description": description}),
        )
        .await
    }

    /// A user's tokens, without their secrets.
    pub async fn tokens_of(&self, user_id: &str) -> RestResult<Vec<UserAccessToken>> {
        self.get(&format!("users/{user_id}/tokens")).await
    }

    pub async fn revoke_token(&self, token_id: &str) -> RestResult<Value> {
        self.post("users/tokens/revoke", &json!({"token_id": token_id}))
            .await
    }

    pub async fn team_by_name(&self, name: &str) -> RestResult<Option<Team>> {
        self.find(&format!("teams/name/{name}")).await
    }

    pub async fn create_team(&self, name: &str, display_name: &str) -> RestResult<Team> {
        self.post(
            "teams",
            &json!({"name": name, "display_name": display_name, "type": "I"}),
        )
        .await
    }

    pub async fn team_member(
        &self,
        team_id: &str,
        user_id: &str,
    ) -> RestResult<Option<TeamMember>> {
        self.find(&format!("teams/{team_id}/members/{user_id}"))
            .await
    }

    pub async fn add_team_member(&self, team_id: &str, user_id: &str) -> RestResult<TeamMember> {
        self.post(
            &format!("teams/{team_id}/members"),
            &json!({"team_id": team_id, "user_id": user_id}),
        )
        .await
    }

    pub async fn make_team_admin(&self, team_id: &str, user_id: &str) -> RestResult<Value> {
        self.put(
            &format!("teams/{team_id}/members/{user_id}/schemeRoles"),
            &json!({"scheme_user": true, "scheme_admin": true}),
        )
        .await
    }

    pub async fn channel_by_name(&self, team_id: &str, name: &str) -> RestResult<Option<Channel>> {
        self.find(&format!(
            "teams/{team_id}/channels/name/{name}?include_deleted=true"
        ))
        .await
    }

    /// The direct message between two users, created on first use
    /// (contract `POST /channels/direct`).
    pub async fn direct_channel(&self, user_a: &str, user_b: &str) -> RestResult<Channel> {
        self.post("channels/direct", &json!([user_a, user_b])).await
    }

    pub async fn create_channel(
        &self,
        team_id: &str,
        name: &str,
        display_name: &str,
        kind: &str,
    ) -> RestResult<Channel> {
        self.post(
            "channels",
            &json!({"team_id": team_id, "name": name, "display_name": display_name, "type": kind}),
        )
        .await
    }

    pub async fn rename_channel(
        &self,
        channel_id: &str,
        display_name: &str,
    ) -> RestResult<Channel> {
        self.put(
            &format!("channels/{channel_id}/patch"),
            &json!({"display_name": display_name}),
        )
        .await
    }

    /// Unarchives a channel; it comes back with the members it had.
    pub async fn restore_channel(&self, channel_id: &str) -> RestResult<Channel> {
        self.post(&format!("channels/{channel_id}/restore"), &json!({}))
            .await
    }

    pub async fn channel_member(
        &self,
        channel_id: &str,
        user_id: &str,
    ) -> RestResult<Option<ChannelMember>> {
        self.find(&format!("channels/{channel_id}/members/{user_id}"))
            .await
    }

    /// Every member of a channel, page by page: Mattermost answers at most
    /// 200 a request, and a channel may hold the whole team.
    pub async fn channel_members(&self, channel_id: &str) -> RestResult<Vec<ChannelMember>> {
        const PER_PAGE: usize = 200;
        let mut members = Vec::new();
        for page in 0.. {
            let listed: Vec<ChannelMember> = self
                .get(&format!(
                    "channels/{channel_id}/members?page={page}&per_page={PER_PAGE}"
                ))
                .await?;
            let last = listed.len() < PER_PAGE;
            members.extend(listed);
            if last {
                break;
            }
        }
        Ok(members)
    }

    pub async fn add_channel_member(
        &self,
        channel_id: &str,
        user_id: &str,
    ) -> RestResult<ChannelMember> {
        self.post(
            &format!("channels/{channel_id}/members"),
            &json!({"user_id": user_id}),
        )
        .await
    }

    pub async fn commands(&self, team_id: &str) -> RestResult<Vec<Command>> {
        self.get(&format!("commands?team_id={team_id}&custom_only=true"))
            .await
    }

    pub async fn create_command(&self, command: &Command) -> RestResult<Command> {
        self.post("commands", command).await
    }

    pub async fn update_command(&self, command: &Command) -> RestResult<Command> {
        self.put(&format!("commands/{}", command.id), command).await
    }

    /// The server configuration (admins only).
    /// Posts as this session's user.
    /// Uploads a file to a channel (contract §A.8, the raw-body form); it
    /// binds to the post that names it in `file_ids`.
    pub async fn upload_file(
        &self,
        channel_id: &str,
        filename: &str,
        bytes: &[u8],
    ) -> RestResult<mattermost_wire::model::FileInfo> {
        let query = [("channel_id", channel_id), ("filename", filename)];
        let uploaded: mattermost_wire::model::FileUploadResponse = self
            .send(Method::POST, "files", &query, Some(Body::Raw(bytes)))
            .await?;
        uploaded
            .file_infos
            .into_iter()
            .next()
            .ok_or_else(|| RestError::Decode {
                path: "files".into(),
                reason: "the upload answered with no file".into(),
            })
    }

    pub async fn create_post(&self, post: &NewPost) -> RestResult<Post> {
        self.post("posts", post).await
    }

    /// Replaces a post's message (the status post is edited in place, §8.1).
    pub async fn edit_post(&self, post_id: &str, message: &str) -> RestResult<Post> {
        self.put(
            &format!("posts/{post_id}/patch"),
            &PostPatch {
                message: Some(message.to_string()),
                ..PostPatch::default()
            },
        )
        .await
    }

    /// Replaces a post's message and props (a decided prompt loses its
    /// buttons, contract §C.3).
    pub async fn replace_post(
        &self,
        post_id: &str,
        message: &str,
        props: Value,
    ) -> RestResult<Post> {
        self.put(
            &format!("posts/{post_id}/patch"),
            &json!({"message": message, "props": props}),
        )
        .await
    }

    /// Reacts to a post as `user_id` (the 👀 on a queued post, §5.2).
    pub async fn react(&self, user_id: &str, post_id: &str, emoji: &str) -> RestResult<Value> {
        self.post(
            "reactions",
            &json!({"user_id": user_id, "post_id": post_id, "emoji_name": emoji}),
        )
        .await
    }

    /// Shows `user_id` typing in a channel (§8.1); nothing durable.
    pub async fn typing(&self, user_id: &str, channel_id: &str) -> RestResult<Value> {
        self.post(
            &format!("users/{user_id}/typing"),
            &json!({"channel_id": channel_id, "parent_id": ""}),
        )
        .await
    }

    /// The server's post size limit in characters (§6.2, contract §A.11).
    pub async fn max_post_size(&self) -> RestResult<Option<usize>> {
        let config: Value = self.get("config/client?format=old").await?;
        Ok(config
            .get("MaxPostSize")
            .and_then(Value::as_str)
            .and_then(|s| s.parse().ok()))
    }

    pub async fn config(&self) -> RestResult<Value> {
        self.get("config").await
    }
}

/// What a request carries.
enum Body<'a> {
    Json(&'a Value),
    Raw(&'a [u8]),
}
