//! `collegium-proto-plugin`: the plugin `echo`, written against the
//! generated `collegium.toolset.v1` types and tonic alone — no SDK, no
//! worker kit — to show the wire is the contract (§3.14, issue 22). It reads
//! the daemon's arguments, serves `Toolset` on the socket to the allowed
//! uids only, reports its sandbox from /proc, and prints `ready`.
//!
//! Tools: `echo::shout` (does not gate) answers its text in capitals;
//! `echo::stamp` (gated) renders the text it will stamp and answers it
//! stamped. It does not verify grants or keep an audit log, which the SDK's
//! worker kit does; the daemon's side of the wire is the same either way.
//! It declares one storage collection, `marks`, which its hostile half
//! (`hostile.rs`, armed by `ECHO_HOSTILE_REPORT`) attacks around.

mod hostile;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::pin::Pin;

use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, EndTurnRequest,
    EndTurnResponse, Gate, HealthRequest, HealthResponse, InvalidArguments, InvokeEvent,
    InvokeRequest, PayloadKind, RenderRequest, RenderResponse, Sandbox, Success, ToolDeclaration,
    ToolResult, invoke_event, tool_result,
    toolset_server::{Toolset, ToolsetServer},
};
use tokio::net::UnixListener;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

const NAMESPACE: &str = "echo";
const SCHEMA: &str = r#"{"type":"object","additionalProperties":false,"required":["text"],"properties":{"text":{"type":"string"}}}"#;

struct Args {
    socket: PathBuf,
    allow_uids: BTreeSet<u32>,
}

fn args() -> Result<Args, String> {
    let mut socket = None;
    let mut allow_uids = BTreeSet::new();
    let mut given = std::env::args().skip(1);
    while let Some(flag) = given.next() {
        let value = given
            .next()
            .ok_or_else(|| format!("{flag} takes a value"))?;
        match flag.as_str() {
            "--socket" => socket = Some(PathBuf::from(value)),
            "--allow-uid" => {
                allow_uids.insert(value.parse().map_err(|_| format!("--allow-uid {value}"))?);
            }
            // The audit log and the storage socket are the SDK's business;
            // this plugin keeps neither.
            "--audit" | "--storage-socket" => {}
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(Args {
        socket: socket.ok_or("--socket is required")?,
        allow_uids,
    })
}

/// The process's own credentials and capability sets, as the handshake
/// reports them.
fn sandbox() -> Result<Sandbox, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(str::trim)
            .ok_or_else(|| format!("/proc/self/status has no {name}"))
    };
    let id = |name: &str| -> Result<u32, String> {
        field(name)?
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} is not a uid list"))
    };
    let caps = |name: &str| -> Result<u64, String> {
        u64::from_str_radix(field(name)?, 16).map_err(|e| format!("{name}: {e}"))
    };
    Ok(Sandbox {
        effective_uid: id("Uid:")?,
        effective_gid: id("Gid:")?,
        cap_inheritable: caps("CapInh:")?,
        cap_permitted: caps("CapPrm:")?,
        cap_effective: caps("CapEff:")?,
        cap_ambient: caps("CapAmb:")?,
        cap_bounding: caps("CapBnd:")?,
        no_new_privileges: field("NoNewPrivs:")? == "1",
        ..Sandbox::default()
    })
}

fn tool(name: &str, description: &str, gate: Gate) -> ToolDeclaration {
    ToolDeclaration {
        name: name.into(),
        description: description.into(),
        parameters_schema_json: SCHEMA.into(),
        parameters_schema_sha256: sha256_hex(SCHEMA),
        gate: gate as i32,
        retryable: true,
        concurrent: false,
        supersedable: false,
        requires_settings: Vec::new(),
        budget_exempt: false,
        core: false,
    }
}

/// Hex SHA-256, as `ToolDeclaration.parameters_schema_sha256` carries it.
fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn text_of(arguments: &[u8]) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_slice(arguments)
        .map_err(|e| format!("the arguments are not JSON: {e}"))?;
    value["text"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| "`text` is missing: give the text as a string".into())
}

struct Echo;

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for Echo {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let version = request.into_inner().protocol_version;
        if version != collegium_proto::PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "protocol version {version} is not this plugin's {}",
                collegium_proto::PROTOCOL_VERSION
            )));
        }
        Ok(Response::new(DescribeResponse {
            protocol_version: version,
            build_version: env!("CARGO_PKG_VERSION").into(),
            namespace: NAMESPACE.into(),
            sandbox: Some(sandbox().map_err(Status::internal)?),
            tools: vec![
                tool("shout", "Answers the text in capitals.", Gate::None),
                tool(
                    "stamp",
                    "Stamps the text, once a person approves.",
                    Gate::Approval,
                ),
            ],
            settings_schema_json: r#"{"type":"object","additionalProperties":false}"#.into(),
            min_protocol_version: collegium_proto::PROTOCOL_VERSION,
            max_protocol_version: collegium_proto::PROTOCOL_VERSION,
            storage_collections: hostile::collections(),
            ..DescribeResponse::default()
        }))
    }

    async fn render(
        &self,
        request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        let call = request.into_inner().call.unwrap_or_default();
        if call.tool != "stamp" {
            return Err(Status::failed_precondition(format!(
                "echo::{} does not stop for a person",
                call.tool
            )));
        }
        let text = text_of(&call.arguments_json).map_err(Status::invalid_argument)?;
        Ok(Response::new(RenderResponse {
            kind: PayloadKind::Text as i32,
            payload: format!("Stamp this text?\n\n{text}"),
            summary: "stamp a text".into(),
        }))
    }

    type InvokeStream = Events;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let call = request.into_inner().call.unwrap_or_default();
        let outcome = match (call.tool.as_str(), text_of(&call.arguments_json)) {
            (_, Err(message)) => {
                tool_result::Outcome::InvalidArguments(InvalidArguments { message })
            }
            ("shout", Ok(text)) => tool_result::Outcome::Success(Success {
                text: text.to_uppercase(),
                ..Success::default()
            }),
            ("stamp", Ok(text)) => tool_result::Outcome::Success(Success {
                text: format!("[stamped] {text}"),
                ..Success::default()
            }),
            (other, Ok(_)) => return Err(Status::not_found(format!("no tool echo::{other}"))),
        };
        let result = InvokeEvent {
            event: Some(invoke_event::Event::Result(ToolResult {
                outcome: Some(outcome),
                summary: format!("echo::{}", call.tool),
                ..ToolResult::default()
            })),
        };
        Ok(Response::new(Box::pin(tokio_stream::once(Ok(result)))))
    }

    async fn cancel(&self, _: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn end_turn(
        &self,
        _: Request<EndTurnRequest>,
    ) -> Result<Response<EndTurnResponse>, Status> {
        Ok(Response::new(EndTurnResponse { released: false }))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}

async fn serve(args: Args) -> Result<(), String> {
    let _ = std::fs::remove_file(&args.socket);
    let listener = UnixListener::bind(&args.socket).map_err(|e| e.to_string())?;
    let allowed = args.allow_uids;
    // Only the daemon's uid is served; anyone else is closed unread.
    let incoming = async_stream(listener, allowed);
    if let Some(report) = hostile::report_path() {
        hostile::arm(report).await?;
    }
    println!("ready");
    tonic::transport::Server::builder()
        .add_service(ToolsetServer::new(Echo))
        .serve_with_incoming(incoming)
        .await
        .map_err(|e| e.to_string())
}

fn async_stream(
    listener: UnixListener,
    allowed: BTreeSet<u32>,
) -> tokio_stream::wrappers::ReceiverStream<std::io::Result<tokio::net::UnixStream>> {
    let (admitted, incoming) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let allowed_peer = stream
                .peer_cred()
                .is_ok_and(|peer| allowed.contains(&peer.uid()));
            if allowed_peer && admitted.send(Ok(stream)).await.is_err() {
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(incoming)
}

fn main() -> std::process::ExitCode {
    let run = || -> Result<(), String> {
        let args = args()?;
        nix::sys::prctl::set_no_new_privs().map_err(|e| format!("no_new_privs: {e}"))?;
        tokio::runtime::Runtime::new()
            .map_err(|e| e.to_string())?
            .block_on(serve(args))
    };
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("collegium-proto-plugin: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}
