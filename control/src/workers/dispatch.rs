//! Dispatch to a worker (ARCHITECTURE §4): connect with a peer check, hand
//! over the boot's grant key at the handshake and refuse a worker that does
//! not match its expectation, then send each call with a signed grant and its
//! deadline. A call is recorded as dispatched before it is sent, so one that
//! may have acted is never forgotten; a call whose answer is lost is ended as
//! §7.1 says for its declaration, and never sent again.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    Call, CancelRequest, DescribeRequest, DescribeResponse, EndTurnRequest, InvokeRequest,
    RenderRequest, RenderResponse, ToolResult, invoke_event, tool_result,
    toolset_client::ToolsetClient,
};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::audit::digest;
use collegium_worker_kit::client;
use collegium_worker_kit::grant::GrantSigner;
use tonic::transport::Channel;

use super::handshake::{HandshakeRefused, SandboxExpectation, compare};
use super::reach::{self, ReachExpectation};
use crate::store::worker_calls::{AuditAnchor, CallEnd, Disclosure, NewWorkerCall};
use crate::store::{StoreError, StoreHandle};
use crate::tools::{ToolDeclaration, ToolsetDeclaration};

/// One worker as the configuration names it.
#[derive(Debug, Clone)]
pub struct WorkerSpec {
    pub socket: PathBuf,
    /// The uid that must serve the socket; none to accept any.
    pub served_by: Option<u32>,
    pub declaration: ToolsetDeclaration,
    pub sandbox: SandboxExpectation,
}

#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("worker `{worker}`: cannot connect to {socket}: {reason}")]
    Connect {
        worker: String,
        socket: PathBuf,
        reason: String,
    },
    #[error("worker `{worker}`: the handshake failed: {reason}")]
    Describe { worker: String, reason: String },
    #[error(transparent)]
    Refused(#[from] HandshakeRefused),
}

/// A connected worker whose handshake matched.
pub struct Worker {
    namespace: String,
    client: ToolsetClient<Channel>,
    tools: BTreeMap<String, ToolDeclaration>,
    described: DescribeResponse,
    /// What the worker was held to at boot, to hold a restarted worker to
    /// the same (ARCHITECTURE §4).
    declaration: ToolsetDeclaration,
    sandbox: SandboxExpectation,
    /// What its agents' users must not reach, for a worker that runs
    /// commands as them (§6.4).
    reach: Option<ReachExpectation>,
    /// The address policy the browser worker was held to at boot (§3.4).
    web_scope: Option<collegium_proto::toolset::v1::WebScope>,
    /// How a plugin the daemon restarts is held to its boot (§3.14, §9):
    /// its description exactly, its tools unavailable once it differs, and
    /// its process's deaths counted. None for a framework worker.
    plugin: Option<super::plugins::restart::Held>,
}

/// One call to send.
#[derive(Debug, Clone)]
pub struct Dispatch {
    pub call_id: String,
    pub turn_id: String,
    pub agent: String,
    /// The tool segment; the namespace is the worker's.
    pub tool: String,
    /// The exact argument bytes, which the grant's digest covers.
    pub arguments_json: Vec<u8>,
    /// The agent's effective settings for this toolset (§3.4).
    pub settings_json: String,
    /// The channel's handle; empty in a direct or group message.
    pub channel: String,
    /// Every tool the agent holds (`namespace::tool`), so a text the worker
    /// renders names another tool only where the agent holds it (§3.4).
    pub held_tools: Vec<String>,
    /// The work unit the turn serves as assignee (`U-12`), fixed when the
    /// turn began; none for any other turn (§3.14).
    pub unit: Option<String>,
    /// The decision that let a gated call through.
    pub decision_id: Option<String>,
    pub deadline: Duration,
}

/// Why a toolset's own rendering of a call's payload could not be had
/// (§3.4, §3.14). Its text is for the log: the message a failing process
/// returned is its own words, which never reach an approval prompt (§3.7).
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("it did not answer within {} s", .0.as_secs_f64())]
    TimedOut(Duration),
    #[error("it answered with an error: {0}")]
    Failed(String),
    /// It refused the call itself while rendering it: its arguments, or a
    /// value its domain refuses (a mail address that does not parse).
    #[error("it refused the call: {0}")]
    Refused(String),
}

/// How a call ended, as the turn reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The worker's own result.
    Finished(Box<ToolResult>),
    /// The tool never ran: the worker could not be reached or refused the
    /// call before acting. Nothing happened.
    NotSent(String),
    /// The call may have acted and did not answer, and its tool is not
    /// retryable: side-effect ambiguity (§7.1). It is never sent again.
    Ambiguous(String),
    /// A retryable call that did not answer: a plain failure (§7.1).
    Lost(String),
    /// A plugin's call that ended in an error it did not return as a
    /// result, or whose process died under it: a tool that threw (§3.14,
    /// §7.1), whatever the tool declares. A dead process is restarted for
    /// the next call.
    Threw(String),
}

impl Worker {
    /// Connects, hands over the boot's key and checks what the worker
    /// reports against `spec`.
    pub async fn connect(spec: &WorkerSpec, signer: &GrantSigner) -> Result<Self, WorkerError> {
        let declared = spec.declaration.clone();
        Self::connect_declaring(spec, signer, |_, _| declared)
            .await
            .map(|(worker, _)| worker)
    }

    /// As [`Worker::connect`], for a toolset whose description is its
    /// declaration (a plugin, §3.14): `declare` builds the declaration from
    /// what the worker reports, and the check then holds the report to it
    /// and to the sandbox `spec` expects.
    pub async fn connect_declaring(
        spec: &WorkerSpec,
        signer: &GrantSigner,
        declare: impl FnOnce(&str, &DescribeResponse) -> ToolsetDeclaration,
    ) -> Result<(Self, ToolsetDeclaration), WorkerError> {
        let namespace = spec.declaration.namespace.clone();
        let mut client = client::connect(&spec.socket, spec.served_by)
            .await
            .map_err(|e| WorkerError::Connect {
                worker: namespace.clone(),
                socket: spec.socket.clone(),
                reason: error_chain(&e),
            })?;
        let described = handshake(&mut client, &namespace, signer).await?;
        let declaration = declare(&namespace, &described);
        let gaps = compare(&declaration, &spec.sandbox, &described);
        if !gaps.is_empty() {
            return Err(HandshakeRefused {
                worker: namespace,
                gaps,
            }
            .into());
        }
        let worker = Self {
            namespace,
            client,
            tools: declaration
                .tools
                .iter()
                .map(|t| (t.name.clone(), t.clone()))
                .collect(),
            described,
            declaration: declaration.clone(),
            sandbox: spec.sandbox.clone(),
            reach: None,
            web_scope: None,
            plugin: None,
        };
        Ok((worker, declaration))
    }

    /// Holds the worker's report of what each agent's user reached to
    /// `expected`, now and at every later handshake (§6.4).
    pub fn hold_reach(mut self, expected: ReachExpectation) -> Result<Self, HandshakeRefused> {
        let gaps = reach::gaps(&expected, &self.described);
        if !gaps.is_empty() {
            return Err(HandshakeRefused {
                worker: self.namespace,
                gaps,
            });
        }
        self.reach = Some(expected);
        Ok(self)
    }

    /// Holds the address policy the worker reported at this handshake, which
    /// the caller has checked against the configuration, at every later
    /// handshake (§3.4).
    pub fn hold_web_scope(mut self) -> Self {
        self.web_scope = Some(self.described.web_scope.clone().unwrap_or_default());
        self
    }

    /// Holds a plugin the daemon restarts to `held` (§3.14, §9).
    pub fn hold_as_plugin(mut self, held: super::plugins::restart::Held) -> Self {
        self.plugin = Some(held);
        self
    }

    /// How a plugin is held to its boot; none for a framework worker.
    pub fn plugin(&self) -> Option<&super::plugins::restart::Held> {
        self.plugin.as_ref()
    }

    /// Hands the boot's key to a worker that restarted under this daemon and
    /// holds it to what it was held to at boot: a restarted worker that no
    /// longer matches serves nothing.
    async fn handshake_again(&self, signer: &GrantSigner) -> Result<(), WorkerError> {
        let described = handshake(&mut self.client.clone(), &self.namespace, signer).await?;
        if let Some(held) = &self.plugin {
            // A plugin describes itself exactly as at boot, or its tools
            // are unavailable until the daemon restarts (§9).
            return held.described_again(&self.namespace, &self.described, &described);
        }
        let mut gaps = compare(&self.declaration, &self.sandbox, &described);
        if let Some(expected) = &self.reach {
            gaps.extend(reach::gaps(expected, &described));
        }
        if let Some(held) = &self.web_scope {
            gaps.extend(super::handshake::web_scope_changes(
                held,
                described.web_scope.as_ref(),
            ));
        }
        if gaps.is_empty() {
            tracing::info!(worker = %self.namespace, "a restarted worker was handshaken again");
            return Ok(());
        }
        Err(HandshakeRefused {
            worker: self.namespace.clone(),
            gaps,
        }
        .into())
    }

    /// What the worker reported at the handshake, for `/collegium inspect`.
    pub fn described(&self) -> &DescribeResponse {
        &self.described
    }

    /// Sends one call and waits for its end, handing each progress line to
    /// `progress`. The store records the call before it is sent and its end
    /// after; only a store failure is an error here.
    pub async fn invoke(
        &self,
        store: &StoreHandle,
        signer: &GrantSigner,
        dispatch: Dispatch,
        mut progress: impl FnMut(String) + Send,
    ) -> Result<CallOutcome, StoreError> {
        let Some(declared) = self.tools.get(&dispatch.tool) else {
            return Ok(CallOutcome::NotSent(format!(
                "{}::{} is not a tool this worker was declared with",
                self.namespace, dispatch.tool
            )));
        };
        if let Some(reason) = self.plugin.as_ref().and_then(|p| p.unavailable()) {
            return Ok(CallOutcome::NotSent(reason));
        }
        let deaths = self.plugin.as_ref().map(|p| p.deaths());
        // No gated tool is ever dispatched without a recorded approving
        // decision for it (§3.7, §6.2): checked here, at the last step
        // before the worker, whatever the caller believes.
        if declared.gate != crate::tools::Gate::None {
            let tool = format!("{}::{}", self.namespace, dispatch.tool);
            let approved = match dispatch.decision_id.clone() {
                Some(id) => store
                    .call(move |s| s.decision(&id))
                    .await?
                    .is_some_and(|d| d.approves(&dispatch.turn_id, &dispatch.agent, &tool)),
                None => false,
            };
            if !approved {
                return Ok(CallOutcome::NotSent(format!(
                    "{}::{} stops for a person, and no approving decision is recorded for this call",
                    self.namespace, dispatch.tool
                )));
            }
        }
        let now = now_ms();
        let call = wire_call(&dispatch, now.saturating_add(millis(dispatch.deadline)));
        let decision = dispatch.decision_id.clone().unwrap_or_default();
        let grant = signer.sign(&self.namespace, &call, &decision, now);
        let record = NewWorkerCall {
            call_id: dispatch.call_id.clone(),
            turn_id: dispatch.turn_id.clone(),
            agent: dispatch.agent.clone(),
            worker: self.namespace.clone(),
            tool: format!("{}::{}", self.namespace, dispatch.tool),
            arguments_sha256: digest(&dispatch.arguments_json),
            decision_id: dispatch.decision_id.clone(),
            retryable: declared.retryable,
            dispatched_at: to_millis(now),
        };
        store.call(move |s| s.record_dispatch(&record)).await?;

        let request = InvokeRequest {
            call: Some(call),
            grant: Some(grant),
        };
        let sent = tokio::time::timeout(dispatch.deadline, async {
            match self.exchange(request.clone(), &mut progress).await {
                // The worker restarted since boot and holds no key: it
                // refused before acting, so the call is sent once more
                // after the key is handed over again.
                Exchange::NotHandshaken(reason) => match self.handshake_again(signer).await {
                    Ok(()) => self.exchange(request, &mut progress).await,
                    // A plugin that came back otherwise than it booted
                    // says so in the framework's words (§9).
                    Err(error) => Exchange::RefusedBeforeActing(
                        self.plugin
                            .as_ref()
                            .and_then(|p| p.unavailable())
                            .unwrap_or_else(|| format!("{reason}; {error}")),
                    ),
                },
                exchanged => exchanged,
            }
        })
        .await;
        let outcome = match sent {
            Ok(Exchange::Result(result)) => CallOutcome::Finished(result),
            Ok(Exchange::RefusedBeforeActing(reason) | Exchange::NotHandshaken(reason)) => {
                CallOutcome::NotSent(reason)
            }
            Ok(Exchange::Lost(reason)) => match deaths {
                Some(deaths) => super::plugins::restart::threw(deaths, reason).await,
                None => lost(declared, reason),
            },
            Err(_) => {
                // Best effort, and bounded: a wedged worker must not hold the
                // call past its deadline a second time.
                let _ = tokio::time::timeout(
                    CANCEL_WAIT,
                    self.client.clone().cancel(CancelRequest {
                        call_id: dispatch.call_id.clone(),
                    }),
                )
                .await;
                lost(
                    declared,
                    format!(
                        "it did not answer within its deadline of {} s",
                        dispatch.deadline.as_secs_f64()
                    ),
                )
            }
        };
        let (end, anchor) = ending(&outcome);
        let disclosure = disclosed(&outcome);
        let call_id = dispatch.call_id;
        let ended = to_millis(now_ms());
        store
            .call(move |s| {
                s.record_call_end(&call_id, end, anchor.as_ref(), disclosure.as_ref(), ended)
            })
            .await?;
        Ok(outcome)
    }

    /// Tells the worker that `turn_id` ended, however it ended, so it
    /// releases what it held for the turn (a browser session, §3.4).
    /// Bounded, and best effort: a worker that does not answer is logged,
    /// and what it holds it releases by its own idle bound.
    pub async fn end_turn(&self, turn_id: &str) {
        let request = EndTurnRequest {
            turn_id: turn_id.to_string(),
        };
        match tokio::time::timeout(CANCEL_WAIT, self.client.clone().end_turn(request)).await {
            Ok(Ok(_)) => {}
            Ok(Err(status)) => {
                tracing::warn!(turn = %turn_id, namespace = %self.described.namespace, error = %status.message(), "a worker did not take a turn's end");
            }
            Err(_) => {
                tracing::warn!(turn = %turn_id, namespace = %self.described.namespace, "a worker did not answer a turn's end in time");
            }
        }
    }

    /// The payload a person approving `dispatch` reads, as the toolset
    /// renders it from the very arguments and settings the call would carry
    /// (§3.4). Nothing is recorded and nothing runs: rendering is no call.
    pub async fn render(
        &self,
        dispatch: &Dispatch,
        within: Duration,
    ) -> Result<RenderResponse, RenderError> {
        if let Some(reason) = self.plugin.as_ref().and_then(|p| p.unavailable()) {
            return Err(RenderError::Failed(reason));
        }
        let request = RenderRequest {
            call: Some(wire_call(dispatch, now_ms().saturating_add(millis(within)))),
        };
        match tokio::time::timeout(within, self.client.clone().render(request)).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status))
                if matches!(
                    status.code(),
                    tonic::Code::InvalidArgument | tonic::Code::OutOfRange
                ) =>
            {
                Err(RenderError::Refused(status.message().to_string()))
            }
            Ok(Err(status)) => Err(RenderError::Failed(status.message().to_string())),
            Err(_) => Err(RenderError::TimedOut(within)),
        }
    }

    async fn exchange(
        &self,
        request: InvokeRequest,
        progress: &mut (impl FnMut(String) + Send),
    ) -> Exchange {
        let mut events = match self.client.clone().invoke(request).await {
            Ok(response) => response.into_inner(),
            Err(status) => return before_any_event(&status),
        };
        let mut started = false;
        loop {
            match events.message().await {
                Ok(Some(event)) => match event.event {
                    Some(invoke_event::Event::Progress(p)) => {
                        started = true;
                        progress(p.line);
                    }
                    Some(invoke_event::Event::Result(result)) => {
                        return Exchange::Result(Box::new(result));
                    }
                    None => {}
                },
                Ok(None) => {
                    return Exchange::Lost("the worker ended the call without a result".into());
                }
                Err(status) if !started => return before_any_event(&status),
                Err(status) => {
                    return Exchange::Lost(format!(
                        "the worker's answer was lost: {}",
                        status.message()
                    ));
                }
            }
        }
    }
}

/// The call as the wire carries it, abandoned after `deadline_ms`.
fn wire_call(dispatch: &Dispatch, deadline_ms: u64) -> Call {
    Call {
        agent: dispatch.agent.clone(),
        turn_id: dispatch.turn_id.clone(),
        call_id: dispatch.call_id.clone(),
        tool: dispatch.tool.clone(),
        arguments_json: dispatch.arguments_json.clone(),
        settings_json: dispatch.settings_json.clone(),
        deadline_unix_ms: deadline_ms,
        channel: dispatch.channel.clone(),
        held_tools: dispatch.held_tools.clone(),
        unit: dispatch.unit.clone().unwrap_or_default(),
    }
}

/// How long a cancel after a missed deadline may take.
const CANCEL_WAIT: Duration = Duration::from_secs(2);

enum Exchange {
    Result(Box<ToolResult>),
    RefusedBeforeActing(String),
    /// Refused before acting because the worker holds no boot key.
    NotHandshaken(String),
    Lost(String),
}

/// The handshake: the boot's key handed over, and the worker's report of
/// itself back.
async fn handshake(
    client: &mut ToolsetClient<Channel>,
    namespace: &str,
    signer: &GrantSigner,
) -> Result<DescribeResponse, WorkerError> {
    client
        .describe(DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
            boot_id: signer.boot_id().to_string(),
            grant_public_key: signer.public_key().to_vec(),
        })
        .await
        .map(tonic::Response::into_inner)
        .map_err(|status| WorkerError::Describe {
            worker: namespace.to_string(),
            reason: status.message().to_string(),
        })
}

/// An error before the call produced anything. The worker kit refuses with
/// these codes before a tool acts (a refused grant, a malformed request, a
/// tool it does not serve); a connection that could not be opened sent
/// nothing. Anything else may have come after the tool acted, or from a
/// connection that died with the request on it.
fn before_any_event(status: &tonic::Status) -> Exchange {
    use tonic::Code;
    if never_connected(status) {
        return Exchange::RefusedBeforeActing(format!(
            "the worker could not be reached: {}",
            error_chain(status)
        ));
    }
    match status.code() {
        Code::Unauthenticated => {
            Exchange::NotHandshaken(format!("the worker refused the call: {}", status.message()))
        }
        Code::PermissionDenied
        | Code::InvalidArgument
        | Code::NotFound
        | Code::FailedPrecondition => Exchange::RefusedBeforeActing(format!(
            "the worker refused the call: {}",
            status.message()
        )),
        _ => Exchange::Lost(format!(
            "the worker's answer was lost: {}",
            status.message()
        )),
    }
}

/// Whether the status comes from opening the socket: our connector's own
/// errors (no socket, nobody listening, the wrong user serving it), before a
/// byte of the request could be written.
fn never_connected(status: &tonic::Status) -> bool {
    use std::io::ErrorKind;
    let mut source = std::error::Error::source(status);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                ErrorKind::NotFound | ErrorKind::ConnectionRefused | ErrorKind::PermissionDenied
            );
        }
        source = cause.source();
    }
    false
}

fn lost(declared: &ToolDeclaration, reason: String) -> CallOutcome {
    if declared.retryable {
        CallOutcome::Lost(reason)
    } else {
        CallOutcome::Ambiguous(format!(
            "{reason}; it may have acted, and whether it completed cannot be confirmed"
        ))
    }
}

fn ending(outcome: &CallOutcome) -> (CallEnd, Option<AuditAnchor>) {
    match outcome {
        CallOutcome::Finished(result) => {
            let end = match &result.outcome {
                Some(tool_result::Outcome::Success(_)) => CallEnd::Success,
                Some(tool_result::Outcome::Refusal(_)) => CallEnd::Refusal,
                Some(tool_result::Outcome::InvalidArguments(_)) => CallEnd::InvalidArguments,
                Some(tool_result::Outcome::Unresolved(_)) => CallEnd::Unresolved,
                Some(tool_result::Outcome::Failure(_)) | None => CallEnd::Failure,
            };
            let anchor = result.audit.as_ref().map(|a| AuditAnchor {
                seq: a.seq,
                hash: a.hash.clone(),
            });
            (end, anchor)
        }
        CallOutcome::NotSent(_) => (CallEnd::NotSent, None),
        CallOutcome::Ambiguous(_) => (CallEnd::Ambiguous, None),
        CallOutcome::Lost(_) => (CallEnd::Lost, None),
        CallOutcome::Threw(_) => (CallEnd::Failure, None),
    }
}

/// What a successful call disclosed of the durable record it made, which
/// the trace shows beside the call (§3.4, §8.3).
fn disclosed(outcome: &CallOutcome) -> Option<Disclosure> {
    let CallOutcome::Finished(result) = outcome else {
        return None;
    };
    let Some(tool_result::Outcome::Success(success)) = &result.outcome else {
        return None;
    };
    success.disclosure.as_ref().map(|d| Disclosure {
        description: d.description.clone(),
        body: d.body.clone(),
        reference: d.reference.clone(),
        superseded: d.superseded.clone(),
    })
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn to_millis(ms: u64) -> crate::store::Millis {
    crate::store::Millis::try_from(ms).unwrap_or(crate::store::Millis::MAX)
}

/// A transport error with its causes, which is where the reason lives.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
