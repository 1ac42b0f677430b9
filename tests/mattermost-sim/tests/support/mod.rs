//! Shared helpers for the simulator's tests: a running simulator, a client
//! that answers status and JSON, people and bots, and a WebSocket reader.

#![allow(dead_code)]

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

pub const ADMIN_PASSWORD: &str = "Admin-pass-1234";
pub const PERSON_PASSWORD: &str = "Person-pass-1234";

/// A simulator on a free loopback port.
pub async fn start() -> mattermost_sim::Running {
    mattermost_sim::start(
        "127.0.0.1:0".parse().expect("addr"),
        &mattermost_sim::Options::default(),
    )
    .await
    .expect("start the simulator")
}

/// An HTTP client acting with one token (or none).
#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub token: Option<String>,
    http: reqwest::Client,
}

/// A response: its status and its JSON body (`Null` when it had none).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub body: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl Answer {
    /// The body, asserting the status first.
    pub fn expect(self, status: u16) -> Value {
        assert_eq!(
            self.status, status,
            "unexpected status; body: {}",
            self.body
        );
        self.body
    }

    /// Asserts a Mattermost error: the status, the error id, and that the
    /// body carries `status_code` like the real server's.
    pub fn expect_error(self, status: u16, id: &str) {
        assert_eq!(self.status, status, "body: {}", self.body);
        assert_eq!(self.body["id"], id, "body: {}", self.body);
        assert_eq!(self.body["status_code"], status, "body: {}", self.body);
    }
}

impl Client {
    pub fn anonymous(base: &str) -> Self {
        Self {
            base: base.to_string(),
            token: None,
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
        }
    }

    pub fn with_token(&self, token: &str) -> Self {
        Self {
            token: Some(token.to_string()),
            ..self.clone()
        }
    }

    pub async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Answer {
        let url = if path.starts_with('/') {
            format!("{}{path}", self.base)
        } else {
            format!("{}/api/v4/{path}", self.base)
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self.http.request(method, url);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Answer {
            status,
            body,
            headers,
        }
    }

    pub async fn get(&self, path: &str) -> Answer {
        self.call("GET", path, None).await
    }
    pub async fn post(&self, path: &str, body: Value) -> Answer {
        self.call("POST", path, Some(body)).await
    }
    pub async fn put(&self, path: &str, body: Value) -> Answer {
        self.call("PUT", path, Some(body)).await
    }
    pub async fn delete(&self, path: &str) -> Answer {
        self.call("DELETE", path, None).await
    }
}

/// A fresh server's first account (its admin), logged in.
pub async fn first_admin(base: &str) -> (Client, Value) {
    let anonymous = Client::anonymous(base);
    let user = anonymous
        .post(
            "users",
            json!({"username": "admin", "email": "admin@example.com", "password": ADMIN_PASSWORD}),
        )
        .await
        .expect(201);
    let token = login(base, "admin", ADMIN_PASSWORD).await;
    (anonymous.with_token(&token), user)
}

pub async fn login(base: &str, username: &str, password: &str) -> String {
    let answer = Client::anonymous(base)
        .post(
            "users/login",
            json!({"login_id": username, "password": password}),
        )
        .await;
    assert_eq!(answer.status, 200, "login {username}: {}", answer.body);
    answer
        .headers
        .get("Token")
        .expect("Token header")
        .to_str()
        .expect("ascii")
        .to_string()
}

/// A person created through the test API, logged in.
pub async fn person(base: &str, username: &str) -> (Client, Value) {
    let user = Client::anonymous(base)
        .post(
            "/_sim/users",
            json!({"username": username, "password": PERSON_PASSWORD}),
        )
        .await
        .expect(201);
    let token = login(base, username, PERSON_PASSWORD).await;
    (Client::anonymous(base).with_token(&token), user)
}

/// Turns on what a Collegium deployment needs of a server.
pub async fn allow_integrations(base: &str) {
    Client::anonymous(base)
        .put(
            "/_sim/settings",
            json!({
                "enable_bot_account_creation": true,
                "enable_user_access_tokens": true,
                "allowed_untrusted_internal_connections": "127.0.0.0/8"
            }),
        )
        .await
        .expect(200);
}

/// A bot with a token, created by `admin`.
pub async fn bot(admin: &Client, username: &str) -> (Client, Value) {
    let bot = admin
        .post(
            "bots",
            json!({"username": username, "display_name": username}),
        )
        .await
        .expect(201);
    let token = admin
        .post(
            &format!("users/{}/tokens", bot["user_id"].as_str().expect("id")),
            json!({"description": "test"}),
        )
        .await
        .expect(200);
    (
        admin.with_token(token["token"].as_str().expect("token")),
        bot,
    )
}

/// A team named `team` with a public channel named `channel`, `members`
/// joined to both. Returns (team, channel).
pub async fn team_and_channel(
    admin: &Client,
    team: &str,
    channel: &str,
    kind: &str,
    members: &[&Value],
) -> (Value, Value) {
    let team = admin
        .post(
            "teams",
            json!({"name": team, "display_name": team, "type": "O"}),
        )
        .await
        .expect(201);
    let team_id = team["id"].as_str().expect("id").to_string();
    let channel = admin
        .post(
            "channels",
            json!({"team_id": team_id, "name": channel, "display_name": channel, "type": kind}),
        )
        .await
        .expect(201);
    let channel_id = channel["id"].as_str().expect("id");
    for member in members {
        let user_id = member
            .get("user_id")
            .or_else(|| member.get("id"))
            .and_then(Value::as_str)
            .expect("user id");
        admin
            .post(
                &format!("teams/{team_id}/members"),
                json!({"team_id": team_id, "user_id": user_id}),
            )
            .await
            .expect(201);
        admin
            .post(
                &format!("channels/{channel_id}/members"),
                json!({"user_id": user_id}),
            )
            .await
            .expect(201);
    }
    (team, channel)
}

pub fn id(value: &Value) -> String {
    value
        .get("id")
        .or_else(|| value.get("user_id"))
        .and_then(Value::as_str)
        .expect("an id")
        .to_string()
}

/// A WebSocket authenticated by challenge, reading frames with a timeout.
pub struct Socket {
    stream: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    next_seq: i64,
}

impl Socket {
    pub async fn connect(ws_url: &str, token: &str) -> Self {
        let (mut stream, _) = tokio_tungstenite::connect_async(ws_url)
            .await
            .expect("websocket");
        stream
            .send(Message::Text(
                json!({"seq": 1, "action": "authentication_challenge", "data": {"token": token}})
                    .to_string()
                    .into(),
            ))
            .await
            .expect("challenge");
        Self {
            stream,
            next_seq: 2,
        }
    }

    /// The next frame as JSON, or `None` when the socket closed or nothing
    /// came within `wait`.
    pub async fn frame(&mut self, wait: Duration) -> Option<Value> {
        loop {
            match tokio::time::timeout(wait, self.stream.next()).await {
                Ok(Some(Ok(Message::Text(text)))) => {
                    return Some(serde_json::from_str(&text).expect("json frame"));
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) | Err(_) => {
                    return None;
                }
                Ok(Some(Ok(_))) => continue,
            }
        }
    }

    /// The next event named `name`, skipping others; panics after `wait`.
    pub async fn event(&mut self, name: &str, wait: Duration) -> Value {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let frame = self
                .frame(left)
                .await
                .unwrap_or_else(|| panic!("no `{name}` event within {wait:?}"));
            if frame["event"] == name {
                return frame;
            }
        }
    }

    pub async fn send(&mut self, action: &str, data: Value) -> i64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.stream
            .send(Message::Text(
                json!({"seq": seq, "action": action, "data": data})
                    .to_string()
                    .into(),
            ))
            .await
            .expect("send");
        seq
    }

    /// Decodes a field that carries JSON inside a string.
    pub fn inner(frame: &Value, key: &str) -> Value {
        serde_json::from_str(
            frame["data"][key]
                .as_str()
                .unwrap_or_else(|| panic!("data.{key} is not a string: {frame}")),
        )
        .expect("inner json")
    }
}

pub const WAIT: Duration = Duration::from_secs(5);
