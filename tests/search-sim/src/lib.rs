//! A search provider simulator: an HTTP server speaking Brave's Web Search
//! wire (`GET /res/v1/web/search`) and SearXNG's JSON API (`GET /search`,
//! and `/searx/search` for an instance mounted beneath a path), with bodies
//! shaped after each provider's documented responses. Tests script answers
//! per query (results, throttling, a status, a hang, a malformed body) with
//! [`Sim::script`] or `POST /_sim/script`, set the keys each wire accepts,
//! and read back every request received (`GET /_sim/requests`).

mod brave;
pub mod script;
mod searxng;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};

pub use script::{Scripted, SimHit};

/// Which wire a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Wire {
    Brave,
    Searxng,
}

/// What each wire accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The `X-Subscription-Token` Brave's wire accepts; any other, or none,
    /// is answered 401.
    pub brave_key: Option<String>,
    /// The bearer token SearXNG's wire requires, as a proxy in front of an
    /// instance would; `None` requires none.
    pub searxng_key: Option<String>,
    /// Whether SearXNG's `format=json` is enabled; when not, 403.
    pub searxng_json: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            brave_key: Some("sim-brave-key".into()),
            searxng_key: None,
            searxng_json: true,
        }
    }
}

/// A request as the simulator received it: every query parameter and every
/// header (names in lower case), in the order they came.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Recorded {
    pub wire: Wire,
    pub path: String,
    pub params: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

impl Recorded {
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn header_names(&self) -> Vec<&str> {
        self.headers.iter().map(|(n, _)| n.as_str()).collect()
    }
}

/// The simulator's state, shared by every request.
#[derive(Default)]
pub struct Sim {
    config: Mutex<Config>,
    scripts: Mutex<script::Scripts>,
    requests: Mutex<Vec<Recorded>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere leaves the data whole: every change is one
    // assignment, push or removal.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sim {
    /// Queues answers for a query, on either wire; the last one stands.
    pub fn script(&self, query: &str, answers: Vec<Scripted>) {
        lock(&self.scripts).add(query, answers);
    }

    pub fn config(&self) -> Config {
        lock(&self.config).clone()
    }

    pub fn set_config(&self, config: Config) {
        *lock(&self.config) = config;
    }

    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.requests).clone()
    }

    /// A query nothing was scripted for matches nothing: an empty result.
    fn next_answer(&self, _wire: Wire, query: &str) -> Scripted {
        lock(&self.scripts)
            .next(query)
            .unwrap_or(Scripted::Results { hits: Vec::new() })
    }

    fn record(&self, wire: Wire, uri: &Uri, params: &[(String, String)], headers: &HeaderMap) {
        let headers = headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_string(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        lock(&self.requests).push(Recorded {
            wire,
            path: uri.path().to_string(),
            params: params.to_vec(),
            headers,
        });
    }
}

pub type AppState = Arc<Sim>;

pub fn router(sim: AppState) -> Router {
    Router::new()
        .route("/res/v1/web/search", get(brave_search))
        .route("/search", get(searxng_search))
        .route("/searx/search", get(searxng_search))
        .route("/_sim/script", post(control_script).delete(control_clear))
        .route("/_sim/config", get(control_config).put(control_set_config))
        .route(
            "/_sim/requests",
            get(control_requests).delete(control_clear_requests),
        )
        .with_state(sim)
}

fn params(raw: Option<String>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .into_owned()
        .collect()
}

async fn brave_search(
    State(sim): State<AppState>,
    uri: Uri,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let params = params(raw);
    sim.record(Wire::Brave, &uri, &params, &headers);
    brave::search(&sim, params.into_iter().collect(), &headers).await
}

async fn searxng_search(
    State(sim): State<AppState>,
    uri: Uri,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let params = params(raw);
    sim.record(Wire::Searxng, &uri, &params, &headers);
    searxng::search(
        &sim,
        params.into_iter().collect::<HashMap<_, _>>(),
        &headers,
    )
    .await
}

/// Holds the request open: the client gives up, and dropping its connection
/// drops this future.
async fn hang() -> Response {
    std::future::pending::<()>().await;
    StatusCode::GATEWAY_TIMEOUT.into_response()
}

fn malformed(body: String, content_type: Option<String>) -> Response {
    let content_type = content_type.unwrap_or_else(|| "application/json".into());
    ([(header::CONTENT_TYPE, content_type)], body).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptRequest {
    query: String,
    answers: Vec<Scripted>,
}

async fn control_script(
    State(sim): State<AppState>,
    axum::Json(request): axum::Json<ScriptRequest>,
) -> StatusCode {
    sim.script(&request.query, request.answers);
    StatusCode::NO_CONTENT
}

async fn control_clear(State(sim): State<AppState>) -> StatusCode {
    lock(&sim.scripts).clear();
    StatusCode::NO_CONTENT
}

async fn control_config(State(sim): State<AppState>) -> axum::Json<Config> {
    axum::Json(sim.config())
}

async fn control_set_config(
    State(sim): State<AppState>,
    axum::Json(config): axum::Json<Config>,
) -> StatusCode {
    sim.set_config(config);
    StatusCode::NO_CONTENT
}

async fn control_requests(State(sim): State<AppState>) -> axum::Json<Vec<Recorded>> {
    axum::Json(sim.requests())
}

async fn control_clear_requests(State(sim): State<AppState>) -> StatusCode {
    lock(&sim.requests).clear();
    StatusCode::NO_CONTENT
}

/// A simulator running in the background until dropped.
pub struct Running {
    /// `http://127.0.0.1:PORT`, the SearXNG base URL.
    pub url: String,
    pub addr: SocketAddr,
    pub sim: AppState,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    /// Brave's endpoint on this simulator, for a `base_url`.
    pub fn brave_endpoint(&self) -> String {
        format!("{}/res/v1/web/search", self.url)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn start(listen: SocketAddr, config: Config) -> anyhow::Result<Running> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    let sim = Arc::new(Sim::default());
    sim.set_config(config);
    let app = router(sim.clone());
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "search-sim stopped");
        }
    });
    Ok(Running {
        url: format!("http://{addr}"),
        addr,
        sim,
        task,
    })
}
