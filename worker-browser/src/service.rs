//! The browser worker's `Toolset` service (ARCHITECTURE §4): it describes the
//! web tools this build serves, checks each call's signed grant, runs it,
//! and writes its audit line. Every request a tool makes is held to the
//! address policy (§3.4); the policy itself is reported at the handshake so
//! the daemon can hold the worker to the configuration.

use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, HealthRequest,
    HealthResponse, InvokeEvent, InvokeRequest, RenderRequest, RenderResponse, ToolResult,
    WebScope, toolset_server::Toolset,
};
use collegium_web_scope::Scope;
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::sandbox;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::call::WebCall;
use crate::session::Sessions;
use crate::{fetch, page_actions, result, search_tool};

pub const NAMESPACE: &str = "web";

/// The tools this build's browser worker serves.
pub const SERVED: &[&str] = &[
    "navigate", "click", "fill", "hover", "select", "fetch", "search",
];

pub struct BrowserWorker {
    admission: Arc<Admission>,
    scope: Arc<Scope>,
    fetcher: fetch::Fetcher,
    sessions: Sessions,
    live_sessions: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Audit(#[from] collegium_worker_kit::audit::AuditError),
    #[error(transparent)]
    Client(#[from] fetch::ClientError),
}

impl BrowserWorker {
    /// A worker enforcing `scope` (shared with the egress proxy `sessions`
    /// browse through), trusting `trust`'s authorities beside the system's,
    /// writing its audit log at `audit`.
    pub fn new(
        scope: Arc<Scope>,
        trust: &fetch::Trust,
        sessions: Sessions,
        live_sessions: u32,
        audit: &Path,
    ) -> Result<Self, StartError> {
        let log = AuditLog::open(audit, NAMESPACE)?;
        let served: std::collections::BTreeSet<String> =
            SERVED.iter().map(|t| (*t).to_string()).collect();
        // No web tool gates: the grant names no decision for any of them.
        let admission = Admission::new(
            NAMESPACE,
            GrantVerifier::new(NAMESPACE, served, Default::default()),
            log,
        );
        Ok(Self {
            admission: Arc::new(admission),
            fetcher: fetch::Fetcher::new(scope.clone(), trust)?,
            scope,
            sessions,
            live_sessions,
        })
    }

    async fn run(&self, call: &collegium_proto::toolset::v1::Call) -> ToolResult {
        let web = match WebCall::read(call) {
            Ok(web) => web,
            Err(refused) => return result::invalid(refused.to_string()),
        };
        match call.tool.as_str() {
            "fetch" => self.fetcher.fetch(&web).await,
            "search" => search_tool::search(&self.fetcher, &web.settings, call).await,
            "navigate" | "click" | "fill" | "hover" | "select" => {
                page_actions::act(&self.sessions, &call.tool, &web).await
            }
            other => result::invalid(format!("this worker serves no tool `{other}`")),
        }
    }
}

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for BrowserWorker {
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
            web_scope: Some(WebScope {
                own_network_browsable: self.scope.own_network_browsable(),
                closed_hosts: self
                    .scope
                    .closed_hosts()
                    .iter()
                    .map(|h| h.as_str().to_string())
                    .collect(),
                live_sessions: self.live_sessions,
                browser_sandbox: self.sessions.sandboxed(),
            }),
            ..DescribeResponse::default()
        }))
    }

    async fn render(&self, _: Request<RenderRequest>) -> Result<Response<RenderResponse>, Status> {
        // No web tool gates (§3.4: browsing is ungated, named as such).
        Err(Status::failed_precondition(
            "no web tool gates, so there is no payload to render",
        ))
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
        request: Request<collegium_proto::toolset::v1::EndTurnRequest>,
    ) -> Result<Response<collegium_proto::toolset::v1::EndTurnResponse>, Status> {
        // The turn's browser session ends with it, its processes gone
        // before the answer (§3.4).
        let released = self.sessions.end(&request.into_inner().turn_id).await;
        Ok(Response::new(
            collegium_proto::toolset::v1::EndTurnResponse { released },
        ))
    }

    async fn cancel(&self, _: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        // A read or a page action is abandoned at its deadline; the session
        // it used ends with its turn.
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}
