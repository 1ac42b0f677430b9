//! A model provider simulator: an HTTP server speaking the OpenAI Chat
//! Completions wire (`/v1/chat/completions`, `/v1/models`; OpenRouter's
//! dialect under `/api/v1`) and the Anthropic Messages wire (`/v1/messages`),
//! streaming as the providers do. Tests script responses per model through
//! `POST /_sim/script` (or [`Sim::script`]), inject failures, hold completions
//! open, and read back every request received (`GET /_sim/requests`).

mod anthropic;
pub mod demo;
mod openai;
pub mod script;

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use script::{Piece, Scripted, Scripts};

/// Which wire a request came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WireKind {
    Openai,
    Openrouter,
    Anthropic,
}

/// A request as the simulator received it.
#[derive(Debug, Clone, Serialize)]
pub struct Recorded {
    pub wire: WireKind,
    pub path: String,
    pub model: String,
    pub body: Value,
    /// The credential headers it carried (names only matter to tests).
    pub authorization: Option<String>,
    pub api_key: Option<String>,
    /// True where nothing scripted answered it.
    pub unscripted: bool,
}

#[derive(Default)]
struct Holds {
    released: HashSet<String>,
    waiting: HashMap<String, Arc<Notify>>,
}

/// Computes the answer to a request no queued response matches, before any
/// standing one: a load driver's model, which answers every request by its
/// content rather than from a queue a test fills in advance.
pub type Responder = Arc<dyn Fn(WireKind, &Value) -> Option<Scripted> + Send + Sync>;

/// The simulator's state, shared by every request.
#[derive(Default)]
pub struct Sim {
    scripts: Mutex<Scripts>,
    responder: Mutex<Option<Responder>>,
    requests: Mutex<Vec<Recorded>>,
    /// Set, requests are answered but not kept: a long load run would
    /// otherwise hold every request body it ever sent.
    unrecorded: AtomicBool,
    holds: Mutex<Holds>,
    /// Answers unscripted requests with the demo's scripted replies.
    pub demo: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere leaves the data whole: every change is one push or
    // one removal.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Sim {
    pub fn script(&self, model: &str, responses: Vec<Scripted>) {
        lock(&self.scripts).add(model, responses);
    }

    /// Answers with `responder` whatever no queued response matches.
    pub fn respond_with(&self, responder: Responder) {
        *lock(&self.responder) = Some(responder);
    }

    /// Stops keeping requests (and drops those kept so far).
    pub fn stop_recording(&self) {
        self.unrecorded.store(true, Ordering::Relaxed);
        lock(&self.requests).clear();
    }

    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.requests).clone()
    }

    /// Releases a held completion (before or after it arrives).
    pub fn release(&self, name: &str) {
        let mut holds = lock(&self.holds);
        holds.released.insert(name.to_string());
        if let Some(notify) = holds.waiting.remove(name) {
            notify.notify_waiters();
        }
    }

    async fn wait_for_release(&self, name: &str) {
        loop {
            let notify = {
                let mut holds = lock(&self.holds);
                if holds.released.contains(name) {
                    return;
                }
                holds.waiting.entry(name.to_string()).or_default().clone()
            };
            let notified = notify.notified();
            if lock(&self.holds).released.contains(name) {
                return;
            }
            // A release that raced this wait is caught by the short tick.
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
    }
}

pub type AppState = Arc<Sim>;

pub fn router(sim: AppState) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai_completion))
        .route("/api/v1/chat/completions", post(openrouter_completion))
        .route("/v1/models", get(models))
        .route("/api/v1/models", get(models))
        .route("/v1/messages", post(anthropic_completion))
        .route("/_sim/script", post(control_script).delete(control_clear))
        .route(
            "/_sim/requests",
            get(control_requests).delete(control_clear_requests),
        )
        .route("/_sim/release/{name}", post(control_release))
        .route("/_sim/pending", get(control_pending))
        .with_state(sim)
}

/// A simulator running in the background.
pub struct Running {
    pub url: String,
    pub addr: SocketAddr,
    pub sim: AppState,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn start(listen: SocketAddr, demo: bool) -> anyhow::Result<Running> {
    let listener = tokio::net::TcpListener::bind(listen).await?;
    let addr = listener.local_addr()?;
    // Small streamed writes go out at once, as a real server's do; without
    // this, Nagle and delayed acknowledgement add 40 ms to every exchange.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let sim = Arc::new(Sim {
        demo,
        ..Sim::default()
    });
    let app = router(sim.clone());
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "model-sim stopped");
        }
    });
    Ok(Running {
        url: format!("http://{addr}"),
        addr,
        sim,
        task,
    })
}

/// The system prompt of a request, for `match`: OpenAI's system message(s),
/// or Anthropic's `system` as a string or blocks.
fn system_prompt(wire: WireKind, body: &Value) -> String {
    let text_of = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    match wire {
        WireKind::Anthropic => text_of(&body["system"]),
        _ => body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter(|m| m["role"] == "system" || m["role"] == "developer")
                    .map(|m| text_of(&m["content"]))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default(),
    }
}

fn error_response(
    wire: WireKind,
    status: u16,
    message: &str,
    code: Option<&str>,
    retry_after: Option<u64>,
) -> Response {
    let body = match wire {
        WireKind::Anthropic => anthropic::error_body(status, message, code),
        _ => openai::error_body(status, message, code),
    };
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, Json(body)).into_response();
    if let Some(seconds) = retry_after
        && let Ok(value) = header::HeaderValue::from_str(&seconds.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

async fn openai_completion(
    State(sim): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    completion(sim, WireKind::Openai, "/v1/chat/completions", headers, body).await
}

async fn openrouter_completion(
    State(sim): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    completion(
        sim,
        WireKind::Openrouter,
        "/api/v1/chat/completions",
        headers,
        body,
    )
    .await
}

async fn anthropic_completion(
    State(sim): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    completion(sim, WireKind::Anthropic, "/v1/messages", headers, body).await
}

async fn completion(
    sim: AppState,
    wire: WireKind,
    path: &str,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error_response(wire, 400, "the request body is not JSON", None, None);
    };
    let model = request["model"].as_str().unwrap_or_default().to_string();
    let system = system_prompt(wire, &request);
    let queued = lock(&sim.scripts).take_queued(&model, &system);
    let responder = lock(&sim.responder).clone();
    let scripted = queued
        .or_else(|| responder.and_then(|respond| respond(wire, &request)))
        .or_else(|| lock(&sim.scripts).take_standing(&model, &system))
        .or_else(|| sim.demo.then(|| demo::answer(wire, &request)));
    let header_text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    if !sim.unrecorded.load(Ordering::Relaxed) {
        lock(&sim.requests).push(Recorded {
            wire,
            path: path.to_string(),
            model: model.clone(),
            body: request.clone(),
            authorization: header_text("authorization"),
            api_key: header_text("x-api-key"),
            unscripted: scripted.is_none(),
        });
    }
    let Some(scripted) = scripted else {
        return error_response(
            wire,
            500,
            &format!("model-sim: no scripted response left for model {model}"),
            Some("sim_unscripted"),
            None,
        );
    };
    if let Some(fail) = &scripted.fail
        && let Some(status) = fail.status
    {
        // A provider takes its time before it refuses, too: a held
        // refusal waits for its release like a held completion.
        if let Some(name) = &scripted.hold {
            sim.wait_for_release(name).await;
        }
        let message = fail
            .message
            .clone()
            .unwrap_or_else(|| format!("model-sim injected status {status}"));
        return error_response(
            wire,
            status,
            &message,
            fail.code.as_deref(),
            fail.retry_after,
        );
    }
    if request["stream"] != true {
        tokio::time::sleep(Duration::from_millis(scripted.latency_ms)).await;
        return whole_completion(wire, &model, &request, &scripted);
    }
    stream_completion(sim, wire, model, &request, scripted)
}

/// The rendered SSE lines of a completion, as one list (also what the
/// parsing benchmark feeds the adapters).
pub fn render(wire: WireKind, model: &str, request: &Value, scripted: &Scripted) -> Vec<String> {
    let prompt_chars = request.to_string().len();
    let usage = scripted.usage(prompt_chars);
    let id = format!("sim-{}", request.to_string().len());
    let pieces = scripted.pieces();
    match wire {
        WireKind::Anthropic => {
            let signature = format!(
                "sim-signature-{}",
                scripted.reasoning.as_deref().map_or(0, str::len)
            );
            let mut w = anthropic::AnthropicWire::new(
                format!("msg_{id}"),
                model.to_string(),
                usage,
                signature,
            );
            let mut lines = w.start();
            for piece in &pieces {
                lines.extend(w.piece(piece));
            }
            lines.extend(w.finish(scripted.finish()));
            lines
        }
        _ => {
            let upstream = scripted
                .upstream
                .clone()
                .or_else(|| request["provider"]["order"][0].as_str().map(str::to_string))
                .unwrap_or_else(|| "model-sim".to_string());
            let w = openai::OpenAiWire {
                id: format!("chatcmpl-{id}"),
                created: 1_700_000_000,
                model: model.to_string(),
                include_usage: request["stream_options"]["include_usage"] == true,
                openrouter: (wire == WireKind::Openrouter)
                    .then(|| (upstream, scripted.cost.unwrap_or(0.0))),
            };
            let mut lines = w.start();
            for piece in &pieces {
                lines.extend(w.piece(piece));
            }
            lines.extend(w.finish(scripted.finish(), usage));
            lines
        }
    }
}

fn stream_completion(
    sim: AppState,
    wire: WireKind,
    model: String,
    request: &Value,
    scripted: Scripted,
) -> Response {
    let lines = render(wire, &model, request, &scripted);
    let (tx, rx) = mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        if let Some(name) = &scripted.hold {
            sim.wait_for_release(name).await;
        }
        if scripted.latency_ms > 0 {
            tokio::time::sleep(Duration::from_millis(scripted.latency_ms)).await;
        }
        let fail = scripted.fail.clone().unwrap_or_default();
        for (index, line) in lines.into_iter().enumerate() {
            if fail.cut_after_chunks == Some(index) {
                // End the body without the stream's end marker.
                return;
            }
            if fail.malformed_after_chunks == Some(index) {
                let broken = match wire {
                    WireKind::Anthropic => {
                        "event: content_block_delta\ndata: {\"type\": \"content_block_delta\", \"index\n\n"
                    }
                    _ => "data: {\"id\": \"chatcmpl-broken\", \"choices\": [{\"delta\": \n\n",
                };
                if tx.send(Ok(Bytes::from(broken))).await.is_err() {
                    return;
                }
            }
            if fail.stall_after_chunks == Some(index) {
                tokio::time::sleep(Duration::from_millis(fail.stall_ms)).await;
            }
            if scripted.delay_ms > 0 && index > 0 {
                tokio::time::sleep(Duration::from_millis(scripted.delay_ms)).await;
            }
            if tx.send(Ok(Bytes::from(line))).await.is_err() {
                return;
            }
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(stream),
    )
        .into_response()
}

/// A non-streaming answer (the boot probe may ask for one).
fn whole_completion(wire: WireKind, model: &str, request: &Value, scripted: &Scripted) -> Response {
    let usage = scripted.usage(request.to_string().len());
    let text = scripted.text.clone().unwrap_or_default();
    let calls: Vec<(usize, &script::ScriptedCall)> =
        scripted.tool_calls.iter().enumerate().collect();
    let body = match wire {
        WireKind::Anthropic => {
            let mut content = Vec::new();
            if let Some(reasoning) = &scripted.reasoning {
                content.push(json!({"type": "thinking", "thinking": reasoning, "signature": format!("sim-signature-{}", reasoning.len())}));
            }
            if !text.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for (i, call) in &calls {
                content.push(json!({"type": "tool_use", "id": format!("toolu_sim_{i}"), "name": call.name, "input": call.arguments}));
            }
            json!({
                "id": "msg_sim", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": if calls.is_empty() { "end_turn" } else { "tool_use" }, "stop_sequence": null,
                "usage": {"input_tokens": usage.prompt_tokens.saturating_sub(usage.cached_tokens + usage.cache_write_tokens), "output_tokens": usage.completion_tokens,
                          "cache_read_input_tokens": usage.cached_tokens, "cache_creation_input_tokens": usage.cache_write_tokens},
            })
        }
        _ => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(i, c)| json!({"id": format!("call_sim_{i}"), "type": "function", "function": {"name": c.name, "arguments": c.arguments.to_string()}}))
                .collect();
            let mut message = json!({"role": "assistant", "content": text});
            if !tool_calls.is_empty() {
                message["tool_calls"] = json!(tool_calls);
            }
            json!({
                "id": "chatcmpl-sim", "object": "chat.completion", "created": 1_700_000_000, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": if calls.is_empty() { "stop" } else { "tool_calls" }}],
                "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                          "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                          "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                          "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens}},
            })
        }
    };
    Json(body).into_response()
}

async fn models(State(sim): State<AppState>) -> Json<Value> {
    let data: Vec<Value> = lock(&sim.scripts)
        .models()
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "model-sim"}))
        .collect();
    Json(json!({"object": "list", "data": data}))
}

#[derive(Deserialize)]
struct ScriptRequest {
    model: String,
    responses: Vec<Scripted>,
}

async fn control_script(State(sim): State<AppState>, body: Bytes) -> Response {
    match serde_json::from_slice::<ScriptRequest>(&body) {
        Ok(request) => {
            let count = request.responses.len();
            sim.script(&request.model, request.responses);
            Json(json!({"model": request.model, "added": count})).into_response()
        }
        Err(error) => (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": format!("bad script: {error}")})),
        )
            .into_response(),
    }
}

async fn control_clear(State(sim): State<AppState>) -> Json<Value> {
    lock(&sim.scripts).clear();
    Json(json!({"status": "cleared"}))
}

async fn control_requests(State(sim): State<AppState>) -> Json<Vec<Recorded>> {
    Json(sim.requests())
}

async fn control_clear_requests(State(sim): State<AppState>) -> Json<Value> {
    lock(&sim.requests).clear();
    Json(json!({"status": "cleared"}))
}

async fn control_release(State(sim): State<AppState>, Path(name): Path<String>) -> Json<Value> {
    sim.release(&name);
    Json(json!({"released": name}))
}

async fn control_pending(State(sim): State<AppState>) -> Json<Value> {
    Json(json!(lock(&sim.scripts).pending()))
}

/// The pieces a scripted response streams, for tests of the wire renderers.
pub fn pieces_of(scripted: &Scripted) -> Vec<Piece> {
    scripted.pieces()
}
