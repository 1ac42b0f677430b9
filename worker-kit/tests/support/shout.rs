//! A toy toolset served with the kit, shared by the wire tests and the
//! round-trip benchmark: it upper-cases its text, behind the kit's grant
//! check and audit log, recording what it ran.

use std::collections::BTreeSet;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, HealthRequest,
    HealthResponse, InvokeEvent, InvokeRequest, RenderRequest, RenderResponse, Success, ToolResult,
    invoke_event, tool_result, toolset_server::Toolset,
};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::sandbox;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// Upper-cases its text, recording what it was asked.
pub struct Shout {
    admission: Admission,
    pub ran: Arc<Mutex<Vec<String>>>,
}

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for Shout {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        self.admission.handshake(request.get_ref())?;
        Ok(Response::new(DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            namespace: "shout".into(),
            sandbox: Some(sandbox::observe(None).map_err(|e| Status::internal(e.to_string()))?),
            ..DescribeResponse::default()
        }))
    }

    async fn render(&self, _: Request<RenderRequest>) -> Result<Response<RenderResponse>, Status> {
        Err(Status::unimplemented("shout does not gate"))
    }

    type InvokeStream = Events;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let request = request.into_inner();
        let admitted = self.admission.admit(&request)?;
        let text = String::from_utf8_lossy(&request.call.unwrap_or_default().arguments_json)
            .to_uppercase();
        self.ran.lock().expect("lock").push(text.clone());
        let mut result = ToolResult {
            outcome: Some(tool_result::Outcome::Success(Success {
                text,
                ..Success::default()
            })),
            ..ToolResult::default()
        };
        self.admission.close(admitted, &mut result)?;
        let event = InvokeEvent {
            event: Some(invoke_event::Event::Result(result)),
        };
        Ok(Response::new(Box::pin(tokio_stream::iter([Ok(event)]))))
    }

    async fn cancel(&self, _: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn end_turn(
        &self,
        _: tonic::Request<collegium_proto::toolset::v1::EndTurnRequest>,
    ) -> Result<tonic::Response<collegium_proto::toolset::v1::EndTurnResponse>, tonic::Status> {
        // Shout holds nothing across calls.
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

pub fn shout(log: &Path) -> (Shout, Arc<Mutex<Vec<String>>>) {
    let ran = Arc::new(Mutex::new(Vec::new()));
    let verifier = GrantVerifier::new("shout", BTreeSet::from(["it".into()]), BTreeSet::new());
    let admission = Admission::new(
        "shout",
        verifier,
        AuditLog::open(log, "shout").expect("audit log"),
    );
    (
        Shout {
            admission,
            ran: ran.clone(),
        },
        ran,
    )
}
