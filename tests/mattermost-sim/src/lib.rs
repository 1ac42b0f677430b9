//! A Mattermost API v4 simulator: a real HTTP and WebSocket server that
//! behaves as Mattermost does for everything Collegium uses
//! (`docs/mattermost-sim.md`), with a browser client at `/` and a
//! test API under `/_sim/`. It stands in for Mattermost in every test and in
//! the demo; where it and Mattermost disagree, Mattermost is right.

mod api;
mod auth;
mod clock;
mod control;
mod error;
mod hub;
mod ids;
mod outgoing;
mod posting;
mod state;
mod web;
mod ws;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

pub use state::settings::Settings;
use state::{AppState, Sim};

/// How the simulator starts.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Keep the state in this file across restarts; absent, state is memory only.
    pub state_file: Option<PathBuf>,
}

/// Builds the server's state and router.
pub fn build(options: &Options) -> anyhow::Result<(AppState, Router)> {
    let data = match &options.state_file {
        Some(path) => state::load_state(path)?,
        None => state::Data::default(),
    };
    let sim = Arc::new(Sim::new(data, options.state_file.clone()));
    let router = Router::new()
        .nest(
            "/api/v4",
            api::routes().layer(middleware::from_fn_with_state(sim.clone(), control::faults)),
        )
        .merge(api::command_hooks::routes())
        .merge(control::routes())
        .merge(web::routes())
        .fallback(fallback)
        .layer(middleware::from_fn_with_state(
            sim.clone(),
            touch_after_change,
        ))
        .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
        .with_state(sim.clone());
    Ok((sim, router))
}

/// After every request that may change something, save and wake waiters.
async fn touch_after_change(State(sim): State<AppState>, request: Request, next: Next) -> Response {
    let changes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    let response = next.run(request).await;
    if changes {
        sim.touch();
    }
    response
}

/// Unknown routes answer as Mattermost's router does: a path with an empty
/// segment is redirected to its clean form, anything else is a JSON 404.
async fn fallback(request: Request) -> Response {
    let path = request.uri().path();
    if path.contains("//") {
        let mut clean = path.to_string();
        while clean.contains("//") {
            clean = clean.replace("//", "/");
        }
        if let Some(query) = request.uri().query() {
            clean = format!("{clean}?{query}");
        }
        return (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, clean)]).into_response();
    }
    error::ApiError::new(
        StatusCode::NOT_FOUND,
        "api.context.404.app_error",
        "Sorry, we could not find the page.",
    )
    .into_response()
}

/// A simulator running in the background, for tests.
pub struct Running {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    pub fn ws_url(&self) -> String {
        format!("ws://{}/api/v4/websocket", self.addr)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a simulator on `listen` (port 0 for a free one).
pub async fn start(listen: SocketAddr, options: &Options) -> anyhow::Result<Running> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    // Small streamed writes go out at once, as a real server's do; without
    // this, Nagle and delayed acknowledgement add 40 ms to every exchange.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let (sim, router) = build(options)?;
    let url = format!("http://{addr}");
    {
        let mut data = sim.data();
        if data.settings.site_url.is_empty() {
            data.settings.site_url = url.clone();
        }
    }
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(%error, "the simulator stopped");
        }
    });
    Ok(Running { url, addr, task })
}
