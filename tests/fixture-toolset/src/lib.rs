//! The fixture toolset (issue: worker machinery): served over the real wire
//! with the worker kit, never in the production registry. The turn and
//! control issues' end-to-end scenarios use it through the configuration
//! like any toolset. Every call it is asked to make is recorded, one JSON
//! line each, before it acts.

pub mod describe;
pub mod tools;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, Disclosure, Failure,
    HealthRequest, HealthResponse, InvokeEvent, InvokeRequest, PayloadKind, Progress,
    RenderRequest, RenderResponse, Success, ToolResult, invoke_event, tool_result,
    toolset_server::Toolset,
};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::sandbox;
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use tools::{Behaviour, NAMESPACE};

pub struct Fixture {
    admission: Arc<Admission>,
    record: Option<PathBuf>,
    running: Arc<Mutex<HashMap<String, oneshot::Sender<()>>>>,
}

impl Fixture {
    pub fn new(admission: Admission, record: Option<PathBuf>) -> Self {
        Self {
            admission: Arc::new(admission),
            record,
            running: Arc::default(),
        }
    }

    /// Appends what was asked to the record file, with the settings, the
    /// channel, the unit and the held tools the call carried (§3.14).
    fn record(
        &self,
        call: &collegium_proto::toolset::v1::Call,
        tool: &str,
        arguments: &Value,
        settings: &Value,
    ) -> Result<(), Status> {
        let Some(path) = &self.record else {
            return Ok(());
        };
        let line = json!({
            "call_id": call.call_id, "tool": tool, "arguments": arguments, "settings": settings,
            "channel": call.channel, "unit": call.unit, "held_tools": call.held_tools,
        });
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| Status::internal(format!("cannot record the call: {e}")))
    }
}

/// Where the turns the daemon said ended are recorded, beside the calls.
fn ended_path(record: &Path) -> PathBuf {
    let mut name = record.as_os_str().to_owned();
    name.push(".ended");
    PathBuf::from(name)
}

/// Every turn the daemon told the fixture had ended, in order.
pub fn ended(record: &Path) -> Vec<String> {
    std::fs::read_to_string(ended_path(record))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every call the fixture was asked to make, in order.
pub fn asked(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A `write` whose path starts so is refused a rendering, with
/// `UNRENDERABLE_BECAUSE`.
pub const UNRENDERABLE: &str = "unrenderable";
/// The fixture's own words for a refused rendering.
pub const UNRENDERABLE_BECAUSE: &str = "the fixture's own reason for not rendering";
/// A `write` whose path starts so is never rendered: the request hangs.
pub const RENDER_HANGS: &str = "render-hangs";

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

fn result(outcome: tool_result::Outcome, summary: String) -> ToolResult {
    ToolResult {
        outcome: Some(outcome),
        summary,
        audit: None,
        captures: Vec::new(),
    }
}

fn success(text: String) -> tool_result::Outcome {
    tool_result::Outcome::Success(Success {
        text,
        ..Success::default()
    })
}

#[tonic::async_trait]
impl Toolset for Fixture {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let request = request.into_inner();
        self.admission.handshake(&request)?;
        let sandbox = sandbox::observe(None).map_err(|e| Status::internal(e.to_string()))?;
        let mut described = DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            build_version: env!("CARGO_PKG_VERSION").into(),
            namespace: NAMESPACE.into(),
            sandbox: Some(sandbox),
            tools: tools::declarations(),
            // Tests of a malformed declaration replace the schema.
            settings_schema_json: std::env::var("FIXTURE_SETTINGS_SCHEMA")
                .unwrap_or_else(|_| tools::settings_schema().to_string()),
            ..DescribeResponse::default()
        };
        // Tests of the plugin host's refusals ask for one malformed
        // description by name (`FIXTURE_DESCRIBE`).
        if let Some(variant) = describe::Variant::from_env() {
            if variant == describe::Variant::Silent {
                std::future::pending::<()>().await;
            }
            variant.apply(&mut described);
        }
        Ok(Response::new(described))
    }

    async fn render(
        &self,
        request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        let call = request
            .into_inner()
            .call
            .ok_or_else(|| Status::invalid_argument("the request carries no call"))?;
        let arguments: Value = serde_json::from_slice(&call.arguments_json)
            .map_err(|e| Status::invalid_argument(format!("arguments: {e}")))?;
        match call.tool.as_str() {
            "write" => {
                let path = arguments["path"].as_str().unwrap_or_default();
                // Paths that make the rendering fail or never come, for the
                // prompt's fallback to the arguments.
                if path.starts_with(UNRENDERABLE) {
                    return Err(Status::internal(UNRENDERABLE_BECAUSE));
                }
                if path.starts_with(RENDER_HANGS) {
                    std::future::pending::<()>().await;
                }
                Ok(Response::new(RenderResponse {
                    kind: PayloadKind::Text as i32,
                    payload: format!(
                        "write {path}:\n{}",
                        arguments["content"].as_str().unwrap_or_default()
                    ),
                    summary: format!("write {path}"),
                }))
            }
            "confirm" => Ok(Response::new(RenderResponse {
                kind: PayloadKind::Text as i32,
                payload: arguments["question"].as_str().unwrap_or_default().into(),
                summary: "a question".into(),
            })),
            other => Err(Status::failed_precondition(format!(
                "fixture::{other} does not stop for a person"
            ))),
        }
    }

    type InvokeStream = Events;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let request = request.into_inner();
        let admitted = self.admission.admit(&request)?;
        let call = request.call.unwrap_or_default();
        let tool = tools::find(&call.tool)
            .ok_or_else(|| Status::not_found(format!("no tool fixture::{}", call.tool)))?;
        let arguments: Value = serde_json::from_slice(&call.arguments_json).unwrap_or(Value::Null);
        let settings: Value = serde_json::from_str(&call.settings_json).unwrap_or(Value::Null);
        self.record(&call, tool.name, &arguments, &settings)?;
        let (cancel, cancelled) = oneshot::channel();
        self.running
            .lock()
            .map_err(|_| Status::internal("poisoned"))?
            .insert(call.call_id.clone(), cancel);
        let (events, stream) = mpsc::channel(8);
        let admission = self.admission.clone();
        let running = self.running.clone();
        let behaviour = tool.behaviour;
        tokio::spawn(async move {
            let outcome = act(behaviour, &arguments, &settings, &events, cancelled).await;
            if let Ok(mut map) = running.lock() {
                map.remove(&call.call_id);
            }
            let Some((outcome, summary)) = outcome else {
                return;
            };
            let mut result = result(outcome, summary);
            let event = match admission.close(admitted, &mut result) {
                Ok(()) => Ok(InvokeEvent {
                    event: Some(invoke_event::Event::Result(result)),
                }),
                Err(status) => Err(status),
            };
            let _ = events.send(event).await;
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(stream))))
    }

    async fn cancel(
        &self,
        request: Request<CancelRequest>,
    ) -> Result<Response<CancelResponse>, Status> {
        let id = request.into_inner().call_id;
        let found = self
            .running
            .lock()
            .map_err(|_| Status::internal("poisoned"))?
            .remove(&id)
            .map(|cancel| cancel.send(()))
            .is_some();
        Ok(Response::new(CancelResponse { found }))
    }

    async fn end_turn(
        &self,
        request: tonic::Request<collegium_proto::toolset::v1::EndTurnRequest>,
    ) -> Result<tonic::Response<collegium_proto::toolset::v1::EndTurnResponse>, tonic::Status> {
        // The fixture holds nothing across calls; it records the end, so a
        // test can see the daemon said so.
        if let Some(path) = &self.record {
            let turn = request.into_inner().turn_id;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(ended_path(path))
                .and_then(|mut f| writeln!(f, "{turn}"))
                .map_err(|e| Status::internal(format!("cannot record the end: {e}")))?;
        }
        Ok(tonic::Response::new(
            collegium_proto::toolset::v1::EndTurnResponse { released: false },
        ))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}

/// Does what the tool does. None when the caller went away first: nobody is
/// left to read an answer.
async fn act(
    behaviour: Behaviour,
    arguments: &Value,
    settings: &Value,
    events: &mpsc::Sender<Result<InvokeEvent, Status>>,
    cancelled: oneshot::Receiver<()>,
) -> Option<(tool_result::Outcome, String)> {
    let text = |key: &str| arguments[key].as_str().unwrap_or_default().to_string();
    match behaviour {
        Behaviour::Read => Some((success(read_value(&text("key"))), "read".into())),
        Behaviour::Write => Some((
            tool_result::Outcome::Success(Success {
                text: format!("wrote {} bytes to {}", text("content").len(), text("path")),
                // A write makes a durable record, and says what it is.
                disclosure: Some(Disclosure {
                    description: format!("the file {}", text("path")),
                    body: text("content"),
                    reference: text("path"),
                    superseded: vec![format!("the earlier {}", text("path"))],
                }),
                ..Success::default()
            }),
            format!("wrote {}", text("path")),
        )),
        Behaviour::Ask => Some((success("yes".into()), "answered".into())),
        Behaviour::Greet => Some((
            success(format!(
                "{} (settings: {settings})",
                settings["greeting"].as_str().unwrap_or_default()
            )),
            "greeted".into(),
        )),
        Behaviour::Fail => Some((
            tool_result::Outcome::Failure(Failure {
                message: "the fixture failed on purpose".into(),
            }),
            "failed".into(),
        )),
        Behaviour::Page => {
            let url = text("url");
            Some((
                tool_result::Outcome::Success(Success {
                    text: format!("the page at {url}"),
                    content_key: Some(url.clone()),
                    replay_line: Some(format!("read the page at {url}")),
                    ..Success::default()
                }),
                format!("read {url}"),
            ))
        }
        Behaviour::Slow => {
            let ms = arguments["ms"].as_u64().unwrap_or(0);
            for step in 1..=4u64 {
                tokio::time::sleep(Duration::from_millis(ms / 4)).await;
                let progress = InvokeEvent {
                    event: Some(invoke_event::Event::Progress(Progress {
                        line: format!("{}% done", step * 25),
                    })),
                };
                if events.send(Ok(progress)).await.is_err() {
                    return None;
                }
            }
            Some((success(format!("slept {ms} ms")), "slept".into()))
        }
        Behaviour::Hang => {
            tokio::select! {
                _ = cancelled => Some((
                    tool_result::Outcome::Failure(Failure { message: "cancelled".into() }),
                    "cancelled".into(),
                )),
                () = events.closed() => None,
            }
        }
    }
}

/// The value a key reads: `the value of KEY`, or for a key `repeat:N:TEXT`,
/// TEXT repeated N times, with each repetition numbered — a long result from a
/// short call, for the tests of result views (§3.8).
fn read_value(key: &str) -> String {
    let repeated = key
        .strip_prefix("repeat:")
        .and_then(|rest| rest.split_once(':'))
        .and_then(|(n, text)| Some((n.parse::<usize>().ok()?, text)));
    match repeated {
        Some((times, text)) => (0..times).map(|i| format!("{text} {i:06};")).collect(),
        None => format!("the value of {key}"),
    }
}
