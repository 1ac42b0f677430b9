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

impl Client {
    /// A request with a body of any type (uploads); the answer as [`Client::call`]
    /// gives it.
    pub async fn send_bytes(
        &self,
        method: &str,
        path: &str,
        content_type: &str,
        body: Vec<u8>,
    ) -> Answer {
        let url = self.url(path);
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut request = self
            .http
            .request(method, url)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(body);
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
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

    /// A GET answered with raw bytes (downloads).
    pub async fn get_bytes(&self, path: &str) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
        let mut request = self.http.get(self.url(path));
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let bytes = response.bytes().await.expect("body").to_vec();
        (status, headers, bytes)
    }

    fn url(&self, path: &str) -> String {
        if path.starts_with('/') {
            format!("{}{path}", self.base)
        } else {
            format!("{}/api/v4/{path}", self.base)
        }
    }
}

/// Merges simulator settings (`PUT /_sim/settings`).
pub async fn settings(base: &str, patch: Value) -> Value {
    Client::anonymous(base)
        .put("/_sim/settings", patch)
        .await
        .expect(200)
}

/// Moves or holds the simulator's clock; answers its reading.
pub async fn clock(base: &str, change: Value) -> i64 {
    Client::anonymous(base)
        .post("/_sim/clock", change)
        .await
        .expect(200)["now"]
        .as_i64()
        .expect("now")
}

/// A multipart/form-data body with the given parts, in the given order.
pub struct Multipart {
    pub boundary: String,
    pub body: Vec<u8>,
}

pub enum Part<'a> {
    Field(&'a str, &'a str),
    File(&'a str, &'a str, &'a [u8]),
}

impl Multipart {
    pub fn new(parts: &[Part<'_>]) -> Self {
        let boundary = "----conformance-boundary-7d1f".to_string();
        let mut body = Vec::new();
        for part in parts {
            body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
            match part {
                Part::Field(name, value) => {
                    body.extend_from_slice(
                        format!(
                            "Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
                        )
                        .as_bytes(),
                    );
                }
                Part::File(name, filename, bytes) => {
                    body.extend_from_slice(
                        format!(
                            "Content-Disposition: form-data; name=\"{name}\"; filename=\"{filename}\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                        )
                        .as_bytes(),
                    );
                    body.extend_from_slice(bytes);
                    body.extend_from_slice(b"\r\n");
                }
            }
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        Self { boundary, body }
    }

    pub fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={}", self.boundary)
    }
}

/// Serves `router` on a free loopback port; answers `http://127.0.0.1:PORT`.
pub async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, router).await });
    url
}

/// A request an integration received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: axum::http::HeaderMap,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    /// The body (or, for GET, the query) as form fields, in order.
    pub fn form(&self) -> Vec<(String, String)> {
        let source = if self.method == "GET" {
            self.query.as_bytes()
        } else {
            &self.body
        };
        url::form_urlencoded::parse(source)
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| v.to_str().expect("ascii header").to_string())
    }
}

/// What a scripted integration answers on a path.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

impl Reply {
    pub fn json(body: Value) -> Self {
        Self {
            status: 200,
            content_type: "application/json".into(),
            body: body.to_string(),
        }
    }

    pub fn text(body: &str) -> Self {
        Self {
            status: 200,
            content_type: "text/plain; charset=utf-8".into(),
            body: body.to_string(),
        }
    }

    pub fn status(status: u16) -> Self {
        Self {
            status,
            content_type: "text/plain".into(),
            body: "no".into(),
        }
    }
}

#[derive(Default)]
struct Script {
    replies: std::sync::Mutex<std::collections::HashMap<String, Reply>>,
    requests: std::sync::Mutex<Vec<Recorded>>,
}

/// An integration on loopback that records every request and answers each
/// path with the reply set for it (`{}` as JSON by default).
#[derive(Clone)]
pub struct Integration {
    pub url: String,
    script: std::sync::Arc<Script>,
}

impl Integration {
    pub async fn start() -> Self {
        let script = std::sync::Arc::new(Script::default());
        let router = axum::Router::new()
            .fallback(record_and_reply)
            .with_state(script.clone());
        let url = serve(router).await;
        Self { url, script }
    }

    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    pub fn reply(&self, path: &str, reply: Reply) {
        self.script
            .replies
            .lock()
            .expect("lock")
            .insert(path.to_string(), reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.script.requests.lock().expect("lock").clone()
    }

    /// The only request received so far.
    pub fn single(&self) -> Recorded {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "requests: {requests:?}");
        requests[0].clone()
    }
}

async fn record_and_reply(
    axum::extract::State(script): axum::extract::State<std::sync::Arc<Script>>,
    method: axum::http::Method,
    uri: axum::http::Uri,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = uri.path().to_string();
    script.requests.lock().expect("lock").push(Recorded {
        method: method.to_string(),
        path: path.clone(),
        query: uri.query().unwrap_or_default().to_string(),
        headers,
        body: body.to_vec(),
    });
    let reply = script
        .replies
        .lock()
        .expect("lock")
        .get(&path)
        .cloned()
        .unwrap_or_else(|| Reply::json(json!({})));
    (
        axum::http::StatusCode::from_u16(reply.status).expect("status"),
        [(axum::http::header::CONTENT_TYPE, reply.content_type)],
        reply.body,
    )
        .into_response()
}

/// What reading a socket found.
#[derive(Debug)]
pub enum Next {
    Frame(Value),
    Closed,
    Quiet,
}

type WsStream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A WebSocket reading frames with a timeout.
pub struct Socket {
    stream: WsStream,
    next_seq: i64,
    pending: std::collections::VecDeque<Value>,
}

impl Socket {
    /// Connects and authenticates by challenge (`seq` 1), as
    /// `@mattermost/client` does; the challenge reply and `hello` are left
    /// unread.
    pub async fn connect(ws_url: &str, token: &str) -> Self {
        let mut socket = Self::unauthenticated(ws_url).await;
        let seq = socket
            .send("authentication_challenge", json!({"token": token}))
            .await;
        assert_eq!(seq, 1);
        socket
    }

    /// Connects, authenticates by challenge and reads both the challenge's
    /// `OK` and `hello` (in whichever order they come); answers the socket and
    /// the `hello` event.
    pub async fn open(ws_url: &str, token: &str) -> (Self, Value) {
        let mut socket = Self::connect(ws_url, token).await;
        let reply = socket.response(1).await;
        assert_eq!(reply["status"], "OK", "challenge: {reply}");
        let hello = socket.event("hello", WAIT).await;
        (socket, hello)
    }

    /// Connects without authenticating.
    pub async fn unauthenticated(ws_url: &str) -> Self {
        let (stream, _) = tokio_tungstenite::connect_async(ws_url)
            .await
            .expect("websocket");
        Self::wrap(stream)
    }

    /// Connects with `Authorization: Bearer` at the upgrade.
    pub async fn with_header(ws_url: &str, token: &str) -> Self {
        Self::wrap(
            Self::try_with_header(ws_url, token)
                .await
                .expect("websocket"),
        )
    }

    pub async fn try_with_header(
        ws_url: &str,
        token: &str,
    ) -> Result<WsStream, tokio_tungstenite::tungstenite::Error> {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let mut request = ws_url.into_client_request().expect("request");
        request.headers_mut().insert(
            "Authorization",
            format!("Bearer {token}").parse().expect("header"),
        );
        tokio_tungstenite::connect_async(request)
            .await
            .map(|(stream, _)| stream)
    }

    /// A socket over an upgraded stream, its own requests numbered from 1.
    pub fn wrap(stream: WsStream) -> Self {
        Self {
            stream,
            next_seq: 1,
            pending: Default::default(),
        }
    }

    /// The next frame, the socket's close, or nothing within `wait`.
    pub async fn next(&mut self, wait: Duration) -> Next {
        if let Some(frame) = self.pending.pop_front() {
            return Next::Frame(frame);
        }
        loop {
            match tokio::time::timeout(wait, self.stream.next()).await {
                Ok(Some(Ok(Message::Text(text)))) => {
                    return Next::Frame(serde_json::from_str(&text).expect("json frame"));
                }
                Ok(Some(Ok(Message::Close(_)))) | Ok(None) | Ok(Some(Err(_))) => {
                    return Next::Closed;
                }
                Ok(Some(Ok(_))) => continue,
                Err(_) => return Next::Quiet,
            }
        }
    }

    /// The next frame as JSON, or `None` when the socket closed or nothing
    /// came within `wait`.
    pub async fn frame(&mut self, wait: Duration) -> Option<Value> {
        match self.next(wait).await {
            Next::Frame(frame) => Some(frame),
            Next::Closed | Next::Quiet => None,
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

    /// Sends a request with the next `seq`; answers that `seq`.
    pub async fn send(&mut self, action: &str, data: Value) -> i64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.send_raw(json!({"seq": seq, "action": action, "data": data}))
            .await;
        seq
    }

    pub async fn send_raw(&mut self, frame: Value) {
        self.stream
            .send(Message::Text(frame.to_string().into()))
            .await
            .expect("send");
    }

    /// Reads until the response to `seq`, keeping the frames before it for
    /// later reads.
    pub async fn response(&mut self, seq: i64) -> Value {
        let mut before = Vec::new();
        let found = loop {
            let frame = self
                .read_wire(WAIT)
                .await
                .unwrap_or_else(|| panic!("no response to seq {seq}"));
            if frame["seq_reply"] == seq {
                break frame;
            }
            before.push(frame);
        };
        self.pending.extend(before);
        found
    }

    /// Every frame the server sent before now: sends a `ping` and collects
    /// what arrives before its answer. Events are queued in order on the
    /// connection, so whatever a finished REST call published is here.
    pub async fn drain(&mut self) -> Vec<Value> {
        let seq = self.send("ping", json!({})).await;
        let mut frames: Vec<Value> = self.pending.drain(..).collect();
        loop {
            let frame = self
                .read_wire(WAIT)
                .await
                .unwrap_or_else(|| panic!("no pong for seq {seq}; got {frames:?}"));
            if frame["seq_reply"] == seq {
                assert_eq!(frame["data"]["text"], "pong", "{frame}");
                return frames;
            }
            frames.push(frame);
        }
    }

    /// The events among [`Socket::drain`]'s frames.
    pub async fn drain_events(&mut self) -> Vec<Value> {
        self.drain()
            .await
            .into_iter()
            .filter(|f| f.get("event").is_some())
            .collect()
    }

    /// Whether the server closes the socket within `wait` without sending
    /// another frame first (panics on a frame).
    pub async fn closes_silently(&mut self, wait: Duration) -> bool {
        match self.next(wait).await {
            Next::Closed => true,
            Next::Quiet => false,
            Next::Frame(frame) => panic!("expected the socket to close, got {frame}"),
        }
    }

    async fn read_wire(&mut self, wait: Duration) -> Option<Value> {
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

/// The events named `name` among `frames`.
pub fn named<'a>(frames: &'a [Value], name: &str) -> Vec<&'a Value> {
    frames.iter().filter(|f| f["event"] == name).collect()
}

/// Asserts an id has Mattermost's form: 26 characters of its base32 alphabet.
pub fn assert_id(value: &Value) {
    let id = value
        .as_str()
        .unwrap_or_else(|| panic!("not an id: {value}"));
    assert_eq!(id.len(), 26, "{id}");
    assert!(
        id.bytes()
            .all(|b| b"ybndrfg8ejkmcpqxot1uwisza345h769".contains(&b)),
        "{id}"
    );
}

/// Asserts a millisecond timestamp near now.
pub fn assert_millis(value: &Value) {
    let ms = value
        .as_i64()
        .unwrap_or_else(|| panic!("not a number: {value}"));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64;
    assert!(
        (now - 600_000..now + 600_000).contains(&ms),
        "{ms} is not a millisecond timestamp near {now}"
    );
}

pub const WAIT: Duration = Duration::from_secs(5);

/// A running simulator with its first admin signed in.
pub struct World {
    pub running: mattermost_sim::Running,
    pub base: String,
    pub admin: Client,
    pub admin_user: Value,
}

impl World {
    /// A fresh server and its admin; bots, tokens and loopback integrations
    /// allowed, as a Collegium deployment sets them.
    pub async fn new() -> Self {
        let world = Self::bare().await;
        allow_integrations(&world.base).await;
        world
    }

    /// A fresh server and its admin, every setting at its default.
    pub async fn bare() -> Self {
        let running = start().await;
        let base = running.url.clone();
        let (admin, admin_user) = first_admin(&base).await;
        Self {
            running,
            base,
            admin,
            admin_user,
        }
    }

    pub fn ws(&self) -> String {
        self.running.ws_url()
    }

    pub fn anonymous(&self) -> Client {
        Client::anonymous(&self.base)
    }

    pub async fn person(&self, username: &str) -> (Client, Value) {
        person(&self.base, username).await
    }

    pub async fn bot(&self, username: &str) -> (Client, Value) {
        bot(&self.admin, username).await
    }

    /// An open team created by the admin.
    pub async fn team(&self, name: &str) -> Value {
        self.admin
            .post(
                "teams",
                json!({"name": name, "display_name": name, "type": "O"}),
            )
            .await
            .expect(201)
    }

    /// A channel created by the admin (who becomes its member).
    pub async fn channel(&self, team: &Value, name: &str, kind: &str) -> Value {
        self.admin
            .post(
                "channels",
                json!({"team_id": id(team), "name": name, "display_name": name, "type": kind}),
            )
            .await
            .expect(201)
    }

    /// Adds a user to a team (and so its default channels).
    pub async fn add_to_team(&self, team: &Value, user: &Value) {
        self.admin
            .post(
                &format!("teams/{}/members", id(team)),
                json!({"team_id": id(team), "user_id": id(user)}),
            )
            .await
            .expect(201);
    }

    /// Adds a user (already in the team) to a channel.
    pub async fn add_to_channel(&self, channel: &Value, user: &Value) {
        self.admin
            .post(
                &format!("channels/{}/members", id(channel)),
                json!({"user_id": id(user)}),
            )
            .await
            .expect(201);
    }

    /// Adds users to a team and a channel of it.
    pub async fn members(&self, team: &Value, channel: &Value, users: &[&Value]) {
        for user in users {
            self.add_to_team(team, user).await;
            self.add_to_channel(channel, user).await;
        }
    }

    /// A post by `client` in `channel`.
    pub async fn post(&self, client: &Client, channel: &Value, message: &str) -> Value {
        client
            .post(
                "posts",
                json!({"channel_id": id(channel), "message": message}),
            )
            .await
            .expect(201)
    }
}
