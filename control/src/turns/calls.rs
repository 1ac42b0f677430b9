//! Running one call a completion made (§3.4, §5.1, §7.2): the name resolved
//! over the tools the agent holds, the arguments checked against the
//! declared schema, then the call run by whoever serves it — this daemon
//! for the core tools, a worker or a plugin for the rest. Every refusal is a
//! result the model reads; the provider's raw argument text is never read
//! back to it.

use std::time::Duration;

use collegium_proto::toolset::v1::PayloadKind;
use collegium_proto::toolset::v1::tool_result::Outcome as WireOutcome;
use serde_json::{Value, json};

use crate::inference::ToolCall;
use crate::status::Disposition;
use crate::tools::arguments::{self, ArgumentError};
use crate::tools::core::ResultViews;
use crate::tools::resolve::resolve;
use crate::tools::{Gate, Host, ToolRef};
use crate::workers::dispatch::{CallOutcome, Dispatch, RenderError};

use crate::services::{Seat, Services};

/// What a call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The tool ran and returned this text.
    Ran {
        text: String,
        /// The line later turns read in its place, where the tool gave one.
        replay_line: Option<String>,
        /// The part of the result that is its content, for a supersedable
        /// tool (§3.8): an identical read is judged by it.
        content_key: Option<String>,
        /// A note on how it came out, for the status line.
        note: Option<String>,
    },
    /// The tool, the framework or the arguments refused it; it did not run,
    /// or ran and refused. The text is what the model reads.
    Refused { text: String, reason: String },
    /// It failed in a way it did not return as a result: whether it acted
    /// is unknown, and the turn ends (§7.2, semantic error).
    Failed { text: String, reason: String },
    /// A retryable call that never answered (past its deadline, or its
    /// worker gone): a plain failure the model reads, and the turn goes on
    /// (§3.4, §7.2).
    Lost { text: String, reason: String },
    /// A call that is not retryable did not answer in time: whether it
    /// completed cannot be confirmed, and the turn ends (§7.1).
    Unconfirmed { text: String, reason: String },
    /// Its arguments were not JSON: forgiven once (§7.1).
    Unparseable,
    /// The name resolves to no tool the agent holds (§3.4, §4.5).
    NotHeld { text: String },
    /// A person denied it; it did not run (§5.4).
    Denied { by: String, reason: Option<String> },
    /// It was never run: the turn ended first.
    NotRun { why: String },
    /// A person's stop or kill cancelled it before it ran (§7.5).
    Cancelled { by: String },
    /// It was still running when a person killed the turn: the turn did
    /// not wait for it, and it may still complete (§7.5).
    Abandoned { by: String },
}

/// One call, resolved as far as it could be.
#[derive(Debug, Clone, PartialEq)]
pub struct Executed {
    pub call: ToolCall,
    pub tool: Option<ToolRef>,
    /// The status post's subject for the call.
    pub summary: String,
    pub outcome: Outcome,
}

impl Executed {
    /// Whether a tool actually ran (absorption ends, the rejection count
    /// resets).
    pub fn ran(&self) -> bool {
        matches!(
            self.outcome,
            Outcome::Ran { .. }
                | Outcome::Failed { .. }
                | Outcome::Lost { .. }
                | Outcome::Unconfirmed { .. }
        )
    }

    pub fn disposition(&self) -> Disposition {
        match &self.outcome {
            Outcome::Ran { note: None, .. } => Disposition::Done,
            Outcome::Ran { note: Some(n), .. } => Disposition::Came(n.clone()),
            Outcome::Refused { reason, .. } => Disposition::Refused {
                reason: reason.clone(),
            },
            Outcome::Failed { reason, .. } | Outcome::Lost { reason, .. } => Disposition::Failed {
                reason: reason.clone(),
            },
            Outcome::Unconfirmed { .. } => Disposition::TimedOut,
            Outcome::Unparseable => Disposition::Refused {
                reason: "its arguments were not valid JSON".into(),
            },
            Outcome::NotHeld { .. } => Disposition::Refused {
                reason: "not a tool this agent holds".into(),
            },
            Outcome::Denied { by, .. } => Disposition::Denied { by: by.clone() },
            Outcome::NotRun { why } => Disposition::Refused {
                reason: why.clone(),
            },
            Outcome::Cancelled { by } => Disposition::Cancelled {
                by: format!("@{by}"),
            },
            Outcome::Abandoned { by } => Disposition::Abandoned {
                by: format!("@{by}"),
            },
        }
    }
}

/// Where a call is going, decided before anything runs: the budget admits
/// a run of concurrent calls before any of them starts (§5.1).
pub struct Planned {
    pub call: ToolCall,
    pub resolved: Result<(ToolRef, Value, Vec<String>), Executed>,
    pub concurrent: bool,
    pub budget_exempt: bool,
    /// It stops for a person's approval before it runs (§3.7).
    pub gated: bool,
    /// It asks a person a question; the answer is its result (§3.7a).
    pub asks: bool,
}

impl Planned {
    /// The tool it resolved to, in display form, else the name the model
    /// wrote.
    pub fn tool_name(&self) -> String {
        self.resolved
            .as_ref()
            .map_or_else(|_| self.call.name.clone(), |(t, _, _)| t.to_string())
    }

    /// What the call comes to if a person kills the turn while it runs.
    pub fn abandoned(&self, by: &str) -> Executed {
        Executed {
            summary: self.tool_name(),
            tool: self.resolved.as_ref().ok().map(|(t, _, _)| t.clone()),
            outcome: Outcome::Abandoned { by: by.to_string() },
            call: self.call.clone(),
        }
    }

    /// The call as one that did not run: denied, cancelled, or cut off by
    /// the turn's end.
    pub fn unrun(self, outcome: Outcome) -> Executed {
        let tool = self.resolved.as_ref().ok().map(|(t, _, _)| t.clone());
        Executed {
            summary: self.tool_name(),
            tool,
            outcome,
            call: self.call,
        }
    }
}

/// Resolves the name and checks the arguments.
pub fn plan(services: &Services, seat: &Seat, call: &ToolCall) -> Planned {
    let refused = |outcome: Outcome, tool: Option<ToolRef>, summary: String| Planned {
        call: call.clone(),
        resolved: Err(Executed {
            call: call.clone(),
            tool,
            summary,
            outcome,
        }),
        concurrent: false,
        budget_exempt: false,
        gated: false,
        asks: false,
    };
    let tool = match resolve(&call.name, &seat.held) {
        Ok(tool) => tool,
        Err(not_held) => {
            return refused(
                Outcome::NotHeld {
                    text: not_held.message,
                },
                None,
                call.name.clone(),
            );
        }
    };
    let Some(declared) = services.registry.tool(&tool) else {
        return refused(
            Outcome::NotHeld {
                text: format!("{tool} is not declared in this deployment."),
            },
            Some(tool.clone()),
            tool.to_string(),
        );
    };
    let schema = declared
        .parameters
        .clone()
        .unwrap_or_else(|| json!({"type": "object"}));
    let accepted = match arguments::accept(&schema, &call.arguments) {
        Ok(accepted) => accepted,
        Err(ArgumentError::Unparseable) => {
            return refused(Outcome::Unparseable, Some(tool.clone()), tool.to_string());
        }
        Err(refusal @ ArgumentError::Refused(_)) => {
            return refused(
                Outcome::Refused {
                    text: format!("The call did not run: {refusal}."),
                    reason: "its arguments were refused".into(),
                },
                Some(tool.clone()),
                tool.to_string(),
            );
        }
    };
    let asks = declared.gate == Gate::Ask;
    if asks && !is_ask_human(&tool) {
        // ask::human is the one tool that asks (§3.7a); what a plugin would
        // do with a person's answer is not settled (docs/spec-findings.md).
        return refused(
            Outcome::Refused {
                text: if seat.held.contains(&ToolRef::new("ask", "human")) {
                    format!(
                        "The call did not run: {tool} declares a question, and only ask::human \
                         may ask a person one. Use ask::human."
                    )
                } else {
                    // Naming ask::human here would point at a tool the agent cannot call (A4).
                    format!(
                        "The call did not run: {tool} declares a question, and no tool you \
                         hold may ask a person one."
                    )
                },
                reason: "only ask::human may ask a person".into(),
            },
            Some(tool.clone()),
            tool.to_string(),
        );
    }
    Planned {
        call: call.clone(),
        // A gated call is never concurrent (§5.1).
        concurrent: declared.concurrent && declared.gate == Gate::None,
        budget_exempt: declared.budget_exempt,
        gated: declared.gate == Gate::Approval,
        asks,
        resolved: Ok((tool, accepted.value, accepted.ignored)),
    }
}

fn is_ask_human(tool: &ToolRef) -> bool {
    tool.namespace == "ask" && tool.tool == "human"
}

/// What a call needs beyond its plan.
pub struct CallScope<'a> {
    pub services: &'a std::sync::Arc<Services>,
    pub seat: &'a Seat,
    pub turn_id: &'a str,
    /// The channel's handle; empty in a direct or group message.
    pub channel: &'a str,
    pub channel_id: &'a str,
    /// The work unit the turn serves as assignee (§3.14); none for any
    /// other turn.
    pub unit: Option<&'a str>,
}

/// Runs a planned call that resolved. `views` serves `results::read`;
/// `decision` is the approving decision a gated call carries.
pub async fn run(
    scope: &CallScope<'_>,
    planned: Planned,
    views: &ResultViews,
    decision: Option<String>,
) -> Executed {
    let (tool, value, ignored) = match planned.resolved {
        Ok(resolved) => resolved,
        Err(executed) => return executed,
    };
    let call = planned.call;
    let mut executed = match scope
        .services
        .registry
        .toolset(&tool.namespace)
        .map(|t| &t.host)
    {
        Some(Host::Daemon) if tool.namespace == "workspace" => {
            run_workspace(scope, &call, &tool, &value, decision).await
        }
        Some(Host::Daemon) if tool.namespace == "triggers" => {
            run_resolve(scope, &call, &tool, &value).await
        }
        Some(Host::Daemon) if tool.namespace == "skills" => {
            crate::skills::load::run(scope, &call, &tool, &value)
        }
        Some(Host::Daemon) if tool.namespace == "memory" => {
            crate::memory::run::run(scope, &call, &tool, &value).await
        }
        Some(Host::Daemon) if tool.namespace == "conversations" => {
            crate::conversations::run(scope, &call, &tool, &value).await
        }
        Some(Host::Daemon) if tool.namespace == "tasks" => {
            crate::units::call::run(scope, &call, &tool, &value).await
        }
        Some(Host::Daemon) => run_core(scope, &call, &tool, &value, views),
        Some(Host::Worker(_) | Host::Plugin) => {
            run_worker(scope, &call, &tool, &value, decision).await
        }
        None => Executed {
            call: call.clone(),
            tool: Some(tool.clone()),
            summary: tool.to_string(),
            outcome: Outcome::Refused {
                text: format!("The call did not run: nothing serves {tool}."),
                reason: "nothing serves it".into(),
            },
        },
    };
    if !ignored.is_empty()
        && let Outcome::Ran { text, .. } = &mut executed.outcome
    {
        text.push_str(&format!(
            "\n[Ignored: {} — not an argument of {tool}.]",
            ignored.join(", ")
        ));
    }
    executed
}

fn run_core(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
    views: &ResultViews,
) -> Executed {
    let services = scope.services;
    let (summary, outcome) = match (tool.namespace.as_str(), tool.tool.as_str()) {
        ("builtins", "now") => (
            "builtins::now".to_string(),
            Outcome::Ran {
                text: crate::tools::core::now(
                    chrono::Utc::now().timestamp_millis(),
                    services.timezone,
                    &services.timezone_name,
                ),
                replay_line: None,
                content_key: None,
                note: None,
            },
        ),
        ("results", "read") => {
            let reference = value
                .get("reference")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let summary = match value.get("find") {
                Some(Value::Array(phrases)) if !phrases.is_empty() => {
                    format!(
                        "results::read — finding {} phrases in {reference}",
                        phrases.len()
                    )
                }
                _ => format!(
                    "results::read — {reference} from offset {}",
                    value.get("offset").and_then(Value::as_u64).unwrap_or(0)
                ),
            };
            let outcome = match views.read(value) {
                Ok(text) => Outcome::Ran {
                    replay_line: Some(format!("[read {reference} of an earlier result]")),
                    text,
                    content_key: None,
                    note: None,
                },
                Err(text) => Outcome::Refused {
                    reason: "no such reference or offset".into(),
                    text,
                },
            };
            (summary, outcome)
        }
        _ => (
            tool.to_string(),
            Outcome::Refused {
                text: format!("The call did not run: {tool} is not served by this build yet."),
                reason: "not served by this build yet".into(),
            },
        ),
    };
    Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    }
}

/// `triggers::resolve` (§4.2), served here: the store holds the triggers.
async fn run_resolve(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
) -> Executed {
    use crate::triggers::resolve::{Caller, Resolution, resolve};
    let named = value.get("trigger").and_then(Value::as_str);
    let caller = Caller {
        agent: &scope.seat.agent.username,
        channel_id: scope.channel_id,
        turn_id: scope.turn_id,
    };
    let outcome = match resolve(scope.services, &caller, named).await {
        Resolution::Done(text) => Outcome::Ran {
            text,
            replay_line: None,
            content_key: None,
            note: None,
        },
        Resolution::Refused(text) => Outcome::Refused {
            reason: "the trigger was not marked done".into(),
            text,
        },
    };
    Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary: match named {
            Some(named) => format!("triggers::resolve {named}"),
            None => "triggers::resolve (the trigger that started this turn)".into(),
        },
        outcome,
    }
}

/// A workspace call, served here (A2): a write only on a recorded
/// approving decision for it, the same check a worker's dispatch makes.
async fn run_workspace(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
    decision: Option<String>,
) -> Executed {
    let (summary, replay_line) = crate::workspace::describe(&tool.tool, value);
    let executed = |outcome| Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary: summary.clone(),
        outcome,
    };
    let gated = scope
        .services
        .registry
        .tool(tool)
        .is_some_and(|t| t.gate == Gate::Approval);
    if gated && !approved(scope, decision, tool).await {
        return executed(Outcome::Refused {
            text: format!(
                "The call did not run: {tool} needs a person's approval, and none is recorded."
            ),
            reason: "no approval recorded".into(),
        });
    }
    let root = scope
        .services
        .workspaces_root
        .join(&scope.seat.agent.username);
    let caps = crate::workspace::Caps::from_settings(scope.seat.agent.settings.get("workspace"));
    let (name, arguments, held) = (tool.tool.clone(), value.clone(), scope.seat.held.clone());
    let served = tokio::task::spawn_blocking(move || {
        crate::workspace::serve(&root, &name, &arguments, &caps, &held)
    })
    .await;
    executed(match served {
        Ok(Ok(text)) => Outcome::Ran {
            text,
            replay_line,
            content_key: None,
            note: None,
        },
        Ok(Err(refusal)) => Outcome::Refused {
            reason: "the workspace refused it".into(),
            text: format!("The call did not run: {refusal}"),
        },
        Err(ended) => Outcome::Failed {
            text: "The workspace call ended without an answer.".into(),
            reason: ended.to_string(),
        },
    })
}

/// Whether `decision` is a recorded approval of `tool` (§3.7).
async fn approved(scope: &CallScope<'_>, decision: Option<String>, tool: &ToolRef) -> bool {
    let Some(id) = decision else {
        return false;
    };
    let wanted = tool.to_string();
    scope
        .services
        .store
        .call(move |s| s.decision(&id))
        .await
        .ok()
        .flatten()
        .is_some_and(|d| d.approves(scope.turn_id, &scope.seat.agent.username, &wanted))
}

async fn run_worker(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
    decision: Option<String>,
) -> Executed {
    let executed = |summary: String, outcome: Outcome| Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    };
    let Some(worker) = scope.services.workers.get(&tool.namespace) else {
        return executed(
            tool.to_string(),
            Outcome::Refused {
                text: format!(
                    "The call did not run: the {} worker is not running.",
                    tool.namespace
                ),
                reason: "its worker is not running".into(),
            },
        );
    };
    let dispatch = dispatch(scope, call, tool, value, decision);
    let (started, call_id) = (std::time::Instant::now(), dispatch.call_id.clone());
    // The call runs as a task of its own: a kill stops waiting for it, and
    // it may still complete and record its outcome (§7.5).
    let (services, worker) = (scope.services.clone(), worker.clone());
    let invoked = tokio::spawn(async move {
        worker
            .invoke(&services.store, &services.signer, dispatch, |_| {})
            .await
    });
    let outcome = match invoked.await {
        Ok(outcome) => outcome,
        // Not a retryable call's silence but this daemon's own task ending:
        // whether the call acted is unknown (§7.2).
        Err(ended) => {
            return executed(
                tool.to_string(),
                Outcome::Failed {
                    text: "The call's outcome could not be recorded; treat it as failed.".into(),
                    reason: format!("the call's task ended: {ended}"),
                },
            );
        }
    };
    let fallback = tool.to_string();
    match outcome {
        Err(error) => executed(
            fallback,
            Outcome::Failed {
                text: "The call's outcome could not be recorded; treat it as failed.".into(),
                reason: error.to_string(),
            },
        ),
        Ok(CallOutcome::NotSent(reason)) => executed(
            fallback,
            Outcome::Refused {
                text: format!("The call did not run: {reason}."),
                reason,
            },
        ),
        Ok(CallOutcome::Ambiguous(reason)) => executed(
            fallback,
            Outcome::Unconfirmed {
                text: format!(
                    "The call may have acted, and its outcome cannot be confirmed ({reason}). Do not repeat it; tell the person."
                ),
                reason: format!("outcome unknown: {reason}"),
            },
        ),
        Ok(CallOutcome::Lost(reason)) => executed(
            fallback,
            Outcome::Lost {
                text: format!("The call failed: {reason}."),
                reason,
            },
        ),
        // A plugin's call that failed outside its result, its process
        // dead or alive: a tool that threw (§3.14, §7.1).
        Ok(CallOutcome::Threw(reason)) => executed(
            fallback,
            Outcome::Failed {
                text: format!("The call failed: {reason}."),
                reason,
            },
        ),
        Ok(CallOutcome::Finished(mut result)) => {
            let left = dispatch_deadline(scope).saturating_sub(started.elapsed());
            read_document(scope, &mut result, value, left, &call_id).await;
            let kept = keep_captures(scope, call, tool, std::mem::take(&mut result.captures)).await;
            let summary = if result.summary.trim().is_empty() {
                fallback
            } else {
                format!("{tool} — {}", result.summary.trim())
            };
            let outcome = match result.outcome {
                Some(WireOutcome::Success(success)) => Outcome::Ran {
                    text: success.text,
                    replay_line: success.replay_line,
                    content_key: success.content_key,
                    note: None,
                },
                Some(WireOutcome::Refusal(refusal)) => Outcome::Refused {
                    reason: refusal.message.clone(),
                    text: refusal.message,
                },
                Some(WireOutcome::InvalidArguments(invalid)) => Outcome::Refused {
                    reason: "its arguments were refused".into(),
                    text: format!("The arguments were refused: {}", invalid.message),
                },
                Some(WireOutcome::Unresolved(unresolved)) => Outcome::Unconfirmed {
                    reason: format!("outcome unknown: {}", unresolved.message),
                    text: format!(
                        "The call may have acted, and its outcome cannot be confirmed: {}. Do not repeat it; tell the person.",
                        unresolved.message
                    ),
                },
                Some(WireOutcome::Failure(failure)) => Outcome::Failed {
                    reason: failure.message.clone(),
                    text: format!("The call failed: {}", failure.message),
                },
                None => Outcome::Failed {
                    text: "The tool returned nothing.".into(),
                    reason: "it returned nothing".into(),
                },
            };
            let mut outcome = outcome;
            if let Outcome::Ran { text, .. } | Outcome::Unconfirmed { text, .. } = &mut outcome {
                for line in kept {
                    text.push_str(&format!("\n{line}"));
                }
            }
            executed(summary, outcome)
        }
    }
}

/// How long a worker call may take in all (§7.2).
fn dispatch_deadline(scope: &CallScope<'_>) -> Duration {
    Duration::from_secs(u64::from(scope.services.limits.tool_call_deadline_secs))
}

/// A document a worker fetched but does not read itself (a PDF, §3.4) is
/// read by the worker that does, within what is left of the call's
/// deadline: workers never call each other, so the daemon carries it. Its
/// text takes the result's place, or the refusal its read came to.
async fn read_document(
    scope: &CallScope<'_>,
    result: &mut collegium_proto::toolset::v1::ToolResult,
    arguments: &Value,
    left: Duration,
    call_id: &str,
) {
    let Some(WireOutcome::Success(success)) = &mut result.outcome else {
        return;
    };
    let Some(document) = success.document.take() else {
        return;
    };
    let read = crate::workers::pdf_text::read(
        scope.services.pdf.as_deref(),
        &document,
        arguments,
        left,
        call_id,
    )
    .await;
    match read {
        Ok(read) => {
            success.text = read.text;
            success.content_key = Some(read.content);
        }
        Err(message) => {
            result.outcome = Some(WireOutcome::Refusal(
                collegium_proto::toolset::v1::Refusal { message },
            ));
        }
    }
}

/// The call as a worker or plugin receives it: the exact argument bytes and
/// the agent's effective settings for the namespace (§3.4).
fn dispatch(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
    decision: Option<String>,
) -> Dispatch {
    let settings = scope
        .seat
        .agent
        .settings
        .get(&tool.namespace)
        .cloned()
        .unwrap_or_else(|| json!({}));
    Dispatch {
        // Providers number calls per completion, so their ids repeat across
        // turns; the worker's record needs one unique across the store.
        call_id: format!("{}/{}", scope.turn_id, call.id),
        turn_id: scope.turn_id.to_string(),
        agent: scope.seat.agent.username.clone(),
        tool: tool.tool.clone(),
        arguments_json: serde_json::to_vec(value).unwrap_or_default(),
        settings_json: settings.to_string(),
        channel: scope.channel.to_string(),
        held_tools: scope.seat.held.iter().map(ToString::to_string).collect(),
        unit: scope.unit.map(str::to_string),
        decision_id: decision,
        deadline: dispatch_deadline(scope),
    }
}

/// How long a plugin may take to render a gated call's payload before the
/// prompt shows the arguments instead.
pub const RENDER_WITHIN: Duration = Duration::from_secs(10);

/// What an approval prompt shows of a gated plugin call (§3.4, §3.14).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rendering {
    /// The plugin's own rendering of the payload; `command` where it is a
    /// command, which is shown whole or not at all (§6.2).
    Rendered { payload: String, command: bool },
    /// The plugin could not render it: why, in the framework's words.
    Unavailable(String),
    /// A framework worker refused the call while rendering it (its
    /// arguments, or a value the domain refuses): in the worker's words,
    /// for the model, and no person is asked.
    Refused(String),
}

/// The plugin's rendering of a gated call, from the arguments and settings
/// the call itself would carry.
pub async fn render(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
) -> Rendering {
    let Some(worker) = scope.services.workers.get(&tool.namespace) else {
        return Rendering::Unavailable("the plugin is not running".into());
    };
    // A plugin unavailable until the daemon restarts (§9) would refuse the
    // call once approved: nobody is asked to approve what cannot run.
    if let Some(reason) = worker.plugin().and_then(|p| p.unavailable()) {
        return Rendering::Refused(format!("The call did not run: {reason}."));
    }
    let dispatch = dispatch(scope, call, tool, value, None);
    match worker.render(&dispatch, RENDER_WITHIN).await {
        Ok(rendered) => match PayloadKind::try_from(rendered.kind) {
            Ok(PayloadKind::Text) => Rendering::Rendered {
                payload: rendered.payload,
                command: false,
            },
            Ok(PayloadKind::ShellCommand) => Rendering::Rendered {
                payload: rendered.payload,
                command: true,
            },
            // A payload of no stated kind cannot be told a command or not,
            // so it is not shown as either.
            Ok(PayloadKind::Unspecified) | Err(_) => {
                tracing::warn!(%tool, kind = rendered.kind, "a rendering of no known kind");
                Rendering::Unavailable("it did not say what kind of payload it rendered".into())
            }
        },
        // Only a framework worker's words reach the model this way: a
        // plugin's error stays in the log (§3.14).
        Err(RenderError::Refused(message))
            if scope
                .services
                .registry
                .toolset(&tool.namespace)
                .is_some_and(|t| matches!(t.host, crate::tools::Host::Worker(_))) =>
        {
            Rendering::Refused(format!("The call did not run: {message}"))
        }
        Err(error) => {
            tracing::warn!(%tool, %error, "the plugin could not render an approval payload");
            Rendering::Unavailable(match error {
                RenderError::TimedOut(within) => {
                    format!("it did not answer within {} s", within.as_secs())
                }
                RenderError::Failed(_) | RenderError::Refused(_) => {
                    "it answered with an error".into()
                }
            })
        }
    }
}

/// Output that ran past what the result shows is kept in the workspace,
/// where an agent holding `workspace::read` may read it whole (§3.4); an
/// agent without it is told of no tool it does not hold. The lines the
/// result gains.
async fn keep_captures(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    captures: Vec<collegium_proto::toolset::v1::StreamCapture>,
) -> Vec<String> {
    let reads = scope.seat.held.contains(&ToolRef::new("workspace", "read"));
    // Only the shell's own streams are kept: a capture is a file written
    // into the workspace, which no other toolset may do without approval.
    let captures: Vec<_> = captures
        .into_iter()
        .filter(|c| c.stream == "stdout" || c.stream == "stderr")
        .collect();
    if captures.is_empty() || !reads || tool.namespace != "shell" {
        return Vec::new();
    }
    let root = scope
        .services
        .workspaces_root
        .join(&scope.seat.agent.username);
    let stem = format!("{}-{}", scope.turn_id, call.id).replace('/', "-");
    let kept = tokio::task::spawn_blocking(move || {
        captures
            .into_iter()
            .map(|capture| {
                let name = format!("{stem}.{}.txt", capture.stream);
                match crate::workspace::keep_capture(&root, &name, &capture.content, capture.total) {
                    Ok(path) => format!(
                        "[The whole {} ({} bytes) is in your workspace at `{path}`; workspace::read reads it.]",
                        capture.stream, capture.total
                    ),
                    Err(refusal) => format!("[The whole {} could not be kept: {refusal}]", capture.stream),
                }
            })
            .collect()
    })
    .await;
    kept.unwrap_or_default()
}
