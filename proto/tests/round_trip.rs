//! A toy toolset served on a real Unix domain socket, described and invoked by a
//! tonic client: the wire every worker will speak (ARCHITECTURE §4).

use std::pin::Pin;
use std::sync::{Arc, Mutex};

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, Gate, HealthRequest,
    HealthResponse, InvokeEvent, InvokeRequest, Progress, RenderRequest, RenderResponse, Sandbox,
    Success, ToolDeclaration, ToolResult, invoke_event, tool_result,
    toolset_client::ToolsetClient,
    toolset_server::{Toolset, ToolsetServer},
};
use hyper_util::rt::TokioIo;
use tokio::net::{UnixListener, UnixStream};
use tokio_stream::{Stream, wrappers::UnixListenerStream};
use tonic::transport::{Endpoint, Server};
use tonic::{Request, Response, Status};

/// Echoes its arguments back, recording every call it was asked to make.
#[derive(Default, Clone)]
struct EchoToolset {
    calls: Arc<Mutex<Vec<String>>>,
}

type EventStream = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for EchoToolset {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        if request.get_ref().protocol_version != PROTOCOL_VERSION {
            return Err(Status::failed_precondition("protocol version mismatch"));
        }
        Ok(Response::new(DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            build_version: "echo-0.1".into(),
            namespace: "echo".into(),
            sandbox: Some(Sandbox {
                no_new_privileges: true,
                ..Sandbox::default()
            }),
            tools: vec![ToolDeclaration {
                name: "say".into(),
                description: "Says its text back.".into(),
                parameters_schema_json: r#"{"type":"object"}"#.into(),
                gate: Gate::None as i32,
                retryable: true,
                ..ToolDeclaration::default()
            }],
            ..DescribeResponse::default()
        }))
    }

    async fn render(
        &self,
        _request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        Err(Status::unimplemented("echo::say does not gate"))
    }

    type InvokeStream = EventStream;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let call = request
            .into_inner()
            .call
            .ok_or_else(|| Status::invalid_argument("no call"))?;
        let text = String::from_utf8(call.arguments_json)
            .map_err(|_| Status::invalid_argument("arguments are not UTF-8"))?;
        self.calls.lock().expect("lock").push(text.clone());
        let events = vec![
            Ok(InvokeEvent {
                event: Some(invoke_event::Event::Progress(Progress {
                    line: "echoing".into(),
                })),
            }),
            Ok(InvokeEvent {
                event: Some(invoke_event::Event::Result(ToolResult {
                    outcome: Some(tool_result::Outcome::Success(Success {
                        text,
                        ..Success::default()
                    })),
                    summary: "said it".into(),
                    audit: None,
                    captures: Vec::new(),
                })),
            }),
        ];
        Ok(Response::new(Box::pin(tokio_stream::iter(events))))
    }

    async fn cancel(
        &self,
        _request: Request<CancelRequest>,
    ) -> Result<Response<CancelResponse>, Status> {
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn end_turn(
        &self,
        _: tonic::Request<collegium_proto::toolset::v1::EndTurnRequest>,
    ) -> Result<tonic::Response<collegium_proto::toolset::v1::EndTurnResponse>, tonic::Status> {
        // The echo holds nothing across calls.
        Ok(tonic::Response::new(
            collegium_proto::toolset::v1::EndTurnResponse { released: false },
        ))
    }

    async fn health(
        &self,
        _request: Request<HealthRequest>,
    ) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}

#[tokio::test]
async fn toy_toolset_is_described_and_invoked_over_a_unix_socket() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("echo.sock");
    let toolset = EchoToolset::default();
    let calls = toolset.calls.clone();

    let listener = UnixListener::bind(&socket).expect("bind");
    let server = tokio::spawn(
        Server::builder()
            .add_service(ToolsetServer::new(toolset))
            .serve_with_incoming(UnixListenerStream::new(listener)),
    );

    // The URI is required by the builder and never dialled: the connector below
    // opens the socket.
    let connect_path = socket.clone();
    let channel = Endpoint::from_static("http://worker.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let path = connect_path.clone();
            async move { Ok::<_, std::io::Error>(TokioIo::new(UnixStream::connect(path).await?)) }
        }))
        .await
        .expect("connect");
    let mut client = ToolsetClient::new(channel);

    let described = client
        .describe(DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
            boot_id: "boot-1".into(),
            grant_public_key: vec![0; 32],
        })
        .await
        .expect("describe")
        .into_inner();
    assert_eq!(described.namespace, "echo");
    assert_eq!(described.protocol_version, PROTOCOL_VERSION);
    assert_eq!(described.tools.len(), 1);
    assert_eq!(described.tools[0].name, "say");
    assert_eq!(described.tools[0].gate(), Gate::None);
    assert!(described.sandbox.expect("sandbox").no_new_privileges);

    let mut events = client
        .invoke(InvokeRequest {
            call: Some(collegium_proto::toolset::v1::Call {
                agent: "mira".into(),
                call_id: "call-1".into(),
                tool: "say".into(),
                arguments_json: br#"{"text":"hello \u00e9"}"#.to_vec(),
                ..Default::default()
            }),
            grant: None,
        })
        .await
        .expect("invoke")
        .into_inner();
    let mut seen = Vec::new();
    while let Some(event) = events.message().await.expect("stream") {
        seen.push(event.event.expect("event"));
    }
    assert_eq!(seen.len(), 2, "one progress line, then one result");
    match &seen[0] {
        invoke_event::Event::Progress(p) => assert_eq!(p.line, "echoing"),
        other => panic!("expected progress first, got {other:?}"),
    }
    match &seen[1] {
        invoke_event::Event::Result(ToolResult {
            outcome: Some(tool_result::Outcome::Success(s)),
            summary,
            ..
        }) => {
            assert_eq!(s.text, r#"{"text":"hello \u00e9"}"#);
            assert_eq!(summary, "said it");
        }
        other => panic!("expected a success result, got {other:?}"),
    }
    assert_eq!(
        calls.lock().expect("lock").as_slice(),
        [r#"{"text":"hello \u00e9"}"#.to_string()]
    );

    let refused = client
        .describe(DescribeRequest {
            protocol_version: 99,
            ..DescribeRequest::default()
        })
        .await
        .expect_err("a mismatched protocol version is refused");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);

    server.abort();
}
