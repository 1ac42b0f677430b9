//! The mail worker's `Toolset` service (§3.13, ARCHITECTURE §4): it
//! describes the mail tools, checks each call's signed grant, maps the
//! call's agent to that agent's own mailbox, runs the tool, and writes its
//! audit line. A send is rendered for the person approving it from the same
//! value it is sent from.

use std::collections::BTreeSet;
use std::pin::Pin;
use std::sync::Arc;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, EndTurnRequest,
    EndTurnResponse, HealthRequest, HealthResponse, InvokeEvent, InvokeRequest, PayloadKind,
    RenderRequest, RenderResponse, ToolResult, toolset_server::Toolset,
};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::sandbox;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::reads;
use crate::result;
use crate::sending::{self, Unprepared};
use crate::settings::{Mailbox, Mailboxes};
use crate::tls::Trust;

pub const NAMESPACE: &str = "mail";

/// The tools this build's mail worker serves.
pub const SERVED: &[&str] = &["list", "search", "open", "conversation", "send", "reply"];
/// Those that stop for a person (§3.7).
pub const GATED: &[&str] = &["send", "reply"];

pub struct MailWorker {
    admission: Arc<Admission>,
    mailboxes: Arc<Mailboxes>,
    trust: Arc<Trust>,
}

impl MailWorker {
    pub fn new(mailboxes: Arc<Mailboxes>, trust: Arc<Trust>, audit: AuditLog) -> Self {
        let names = |tools: &[&str]| -> BTreeSet<String> {
            tools.iter().map(|t| (*t).to_string()).collect()
        };
        let admission = Admission::new(
            NAMESPACE,
            GrantVerifier::new(NAMESPACE, names(SERVED), names(GATED)),
            audit,
        );
        Self {
            admission: Arc::new(admission),
            mailboxes,
            trust,
        }
    }

    fn mailbox(&self, agent: &str) -> Option<&Mailbox> {
        self.mailboxes.get(agent)
    }

    async fn run(&self, call: &collegium_proto::toolset::v1::Call) -> ToolResult {
        let Some(mailbox) = self.mailbox(&call.agent) else {
            return result::refusal(
                format!(
                    "You have no mailbox: the mail worker's configuration gives agent {} none.",
                    call.agent
                ),
                "no mailbox".into(),
            );
        };
        let trust = &self.trust;
        let bytes = &call.arguments_json;
        match call.tool.as_str() {
            "list" => reads::list(mailbox, trust, bytes).await,
            "search" => reads::search(mailbox, trust, bytes).await,
            "open" => reads::open(mailbox, trust, bytes).await,
            "conversation" => reads::conversation(mailbox, trust, bytes).await,
            "send" => match sending::prepare_send(mailbox, bytes) {
                Ok(outgoing) => sending::deliver(mailbox, trust, &outgoing).await,
                Err(unprepared) => unprepared.into_result(),
            },
            "reply" => match sending::prepare_reply(mailbox, trust, bytes).await {
                Ok(outgoing) => sending::deliver(mailbox, trust, &outgoing).await,
                Err(unprepared) => unprepared.into_result(),
            },
            other => result::invalid(format!("this worker serves no tool `{other}`")),
        }
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for MailWorker {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        self.admission.handshake(&request.into_inner())?;
        let sandbox = sandbox::observe(None).map_err(|e| Status::internal(e.to_string()))?;
        let tools = SERVED
            .iter()
            .filter_map(|tool| {
                collegium_control::workers::declarations::framework_wire(NAMESPACE, tool)
            })
            .collect();
        Ok(Response::new(DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            build_version: env!("CARGO_PKG_VERSION").into(),
            namespace: NAMESPACE.into(),
            sandbox: Some(sandbox),
            tools,
            settings_schema_json: serde_json::json!({"type": "object"}).to_string(),
            ..DescribeResponse::default()
        }))
    }

    async fn render(
        &self,
        request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        let call = request.into_inner().call.unwrap_or_default();
        let Some(mailbox) = self.mailbox(&call.agent) else {
            return Err(Status::failed_precondition(format!(
                "agent {} has no mailbox in the mail worker's configuration",
                call.agent
            )));
        };
        let prepared = match call.tool.as_str() {
            "send" => sending::prepare_send(mailbox, &call.arguments_json),
            "reply" => sending::prepare_reply(mailbox, &self.trust, &call.arguments_json).await,
            other => {
                return Err(Status::failed_precondition(format!(
                    "mail::{other} does not stop for a person, so there is no payload to render"
                )));
            }
        };
        match prepared {
            Ok(outgoing) => Ok(Response::new(RenderResponse {
                kind: PayloadKind::Text as i32,
                payload: outgoing.payload(),
                summary: format!(
                    "mail::{} to {}",
                    call.tool,
                    outgoing
                        .recipients()
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })),
            // Refused before any prompt: the daemon answers the model with
            // it and asks no one (§3.7).
            Err(Unprepared::Invalid(message)) => Err(Status::invalid_argument(message)),
            Err(Unprepared::Refused(message)) => Err(Status::out_of_range(message)),
            Err(Unprepared::Failed(message)) => Err(Status::unavailable(message)),
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
        let event = self.admission.answer(admitted, self.run(&call).await);
        Ok(Response::new(Box::pin(tokio_stream::once(event))))
    }

    async fn end_turn(
        &self,
        _request: Request<EndTurnRequest>,
    ) -> Result<Response<EndTurnResponse>, Status> {
        // A mail call holds nothing past its own connection.
        Ok(Response::new(EndTurnResponse { released: false }))
    }

    async fn cancel(&self, _: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        // A read is abandoned at its deadline; a send is never cut in the
        // middle, where its outcome would become unknowable.
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}
