//! The `Toolset` server a plugin built with the SDK runs (§3.14, ARCHITECTURE
//! §4): the handshake within the SDK's protocol range, renders for gated
//! tools, and calls admitted by the worker kit — the daemon's signed grant
//! checked before the body runs, and every call's line in the audit log.
//! A body's panic is a tool that threw (§7.1), never a silent end.

use std::collections::{BTreeMap, HashMap};
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use collegium_proto::toolset::v1::{
    Call, CancelRequest, CancelResponse, DescribeRequest, DescribeResponse, EndTurnRequest,
    EndTurnResponse, HealthRequest, HealthResponse, InvokeEvent, InvokeRequest, PayloadKind,
    RenderRequest, RenderResponse, toolset_server::Toolset,
};
use collegium_worker_kit::admission::Admission;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::context::Context;
use crate::reply::ToolError;
use crate::storage::Storage;
use crate::tool::Tool;

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

/// A plugin's `Toolset` service, ready to serve (see
/// [`Plugin::service`](crate::Plugin::service)).
pub struct PluginService<S> {
    inner: Arc<Inner<S>>,
}

struct Inner<S> {
    namespace: String,
    tools: BTreeMap<String, Tool<S>>,
    /// What `Describe` answers, but for the sandbox, observed per call.
    described: DescribeResponse,
    admission: Admission,
    storage: Storage,
    running: Mutex<HashMap<String, AbortHandle>>,
}

impl<S> PluginService<S>
where
    S: DeserializeOwned + Send + Sync + 'static,
{
    pub(crate) fn new(
        namespace: String,
        tools: BTreeMap<String, Tool<S>>,
        described: DescribeResponse,
        admission: Admission,
        storage: Storage,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                namespace,
                tools,
                described,
                admission,
                storage,
                running: Mutex::default(),
            }),
        }
    }
}

impl<S> Inner<S>
where
    S: DeserializeOwned + Send + Sync + 'static,
{
    fn tool(&self, name: &str) -> Result<&Tool<S>, Status> {
        self.tools.get(name).ok_or_else(|| {
            Status::not_found(format!(
                "this plugin serves no tool {}::{name}",
                self.namespace
            ))
        })
    }

    /// The agent's effective settings, which the daemon validated against
    /// the declared schema at boot; none configured is an empty object.
    fn settings(&self, call: &Call) -> Result<S, ToolError> {
        let text = if call.settings_json.trim().is_empty() {
            "{}"
        } else {
            call.settings_json.as_str()
        };
        serde_json::from_str(text).map_err(|e| {
            ToolError::Failed(format!(
                "the settings the daemon passed do not parse as this plugin's: {e}"
            ))
        })
    }
}

fn arguments(call: &Call) -> Result<Value, ToolError> {
    serde_json::from_slice(&call.arguments_json)
        .map_err(|e| ToolError::InvalidArguments(format!("the arguments are not JSON: {e}")))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(ToString::to_string)
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with no message".into())
}

#[tonic::async_trait]
impl<S> Toolset for PluginService<S>
where
    S: DeserializeOwned + Send + Sync + 'static,
{
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let request = request.into_inner();
        let version = crate::protocol::agree(request.protocol_version)
            .map_err(Status::failed_precondition)?;
        self.inner.admission.handshake(&request)?;
        let sandbox = collegium_worker_kit::sandbox::observe(None)
            .map_err(|e| Status::internal(e.to_string()))?;
        Ok(Response::new(DescribeResponse {
            protocol_version: version,
            sandbox: Some(sandbox),
            ..self.inner.described.clone()
        }))
    }

    async fn render(
        &self,
        request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        let call = request
            .into_inner()
            .call
            .ok_or_else(|| Status::invalid_argument("the request carries no call"))?;
        let tool = self.inner.tool(&call.tool)?;
        let render = tool.render.clone().ok_or_else(|| {
            Status::failed_precondition(format!(
                "{}::{} does not stop for a person",
                self.inner.namespace, call.tool
            ))
        })?;
        let rendered = async {
            let arguments = arguments(&call)?;
            let settings = self.inner.settings(&call)?;
            let cx = Context::new(call, settings, self.inner.storage.clone(), None);
            render(cx, arguments).await
        };
        match rendered.await {
            Ok(prompt) => Ok(Response::new(RenderResponse {
                kind: PayloadKind::Text as i32,
                payload: prompt.payload,
                summary: prompt.summary,
            })),
            Err(ToolError::InvalidArguments(message)) => Err(Status::invalid_argument(message)),
            Err(other) => Err(Status::internal(other.to_string())),
        }
    }

    type InvokeStream = Events;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let request = request.into_inner();
        let admitted = self.inner.admission.admit(&request)?;
        let call = request.call.unwrap_or_default();
        let tool = self.inner.tool(&call.tool)?;
        let full_name = format!("{}::{}", self.inner.namespace, call.tool);
        let (events, stream) = mpsc::channel(8);
        let prepared =
            arguments(&call).and_then(|arguments| Ok((arguments, self.inner.settings(&call)?)));
        let call_id = call.call_id.clone();
        let body = tool.body.clone();
        let inner = self.inner.clone();
        let progress = events.clone();
        tokio::spawn(async move {
            let result = match prepared {
                Err(error) => error.into_result(&full_name),
                Ok((arguments, settings)) => {
                    let cx = Context::new(call, settings, inner.storage.clone(), Some(progress));
                    let running = tokio::spawn(body(cx, arguments));
                    if let Ok(mut map) = inner.running.lock() {
                        map.insert(call_id.clone(), running.abort_handle());
                    }
                    let abort = running.abort_handle();
                    let joined = tokio::select! {
                        joined = running => Some(joined),
                        // The daemon went away: nobody reads a result, and
                        // the admitted call's line says it was abandoned.
                        () = events.closed() => None,
                    };
                    if let Ok(mut map) = inner.running.lock() {
                        map.remove(&call_id);
                    }
                    match joined {
                        None => {
                            abort.abort();
                            return;
                        }
                        Some(Ok(Ok(reply))) => reply.into_result(&full_name),
                        Some(Ok(Err(error))) => error.into_result(&full_name),
                        Some(Err(joined)) if joined.is_cancelled() => {
                            ToolError::Failed("the daemon cancelled the call".into())
                                .into_result(&full_name)
                        }
                        Some(Err(joined)) => {
                            let message = panic_message(&*joined.into_panic());
                            ToolError::Failed(format!("the tool panicked: {message}"))
                                .into_result(&full_name)
                        }
                    }
                }
            };
            let event = inner.admission.answer(admitted, result);
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
            .inner
            .running
            .lock()
            .map_err(|_| Status::internal("a call panicked while holding the running calls"))?
            .remove(&id)
            .map(|handle| handle.abort())
            .is_some();
        Ok(Response::new(CancelResponse { found }))
    }

    async fn end_turn(
        &self,
        _: Request<EndTurnRequest>,
    ) -> Result<Response<EndTurnResponse>, Status> {
        // An SDK plugin holds nothing for a turn between calls: what it
        // keeps, it keeps in storage.
        Ok(Response::new(EndTurnResponse { released: false }))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}
