//! One turn (§3.3, §5.1, §7.2): open its record, take what was queued for
//! it, assemble context, and loop — call the model; text with no call is
//! the reply and ends the turn; calls run and their results go back. Usage
//! is written after each completion, every step goes to the trace, and the
//! end consumes or returns what the turn took (§5.2).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::chat::directory::framework_post;
use crate::context::replay::{Repeat, TurnResults};
use crate::context::tokens::estimate;
use crate::context::window::{CompletionDetail, RecordedCall, ResultDetail, message_cost};
use crate::inference::{
    AssistantMessage, CallLimits, Cancel, Completion, CompletionRequest, Failure, FinishReason,
    Message,
};
use crate::status::{CallLine, Disposition, Ending};
use crate::store::{
    Millis, NewTurn, ObservedPost, StoreError, TraceKind, TurnCause, TurnEnd, TurnEvent,
};
use crate::tools::core::ResultViews;

mod acting;
mod asking;
mod end;
mod exit;
mod people;
mod record;
mod reply;
mod units;

use asking::{Asked, answered, unasked};
use people::{killed, next_steer, stopped};

use exit::Exit;

use super::assemble::{AssemblyInput, assemble};
use super::calls::{self, CallScope, Executed, Outcome};
use super::fold::FoldGate;
use super::rejections::{AfterRejection, Rejection, RejectionCount, check_reply};
use super::status_post::StatusPost;
use crate::approvals::Decided;
use crate::approvals::prompt;
use crate::services::{Halt, Seat, Services, Steer};
use crate::store::decisions::NewDecision;

/// How often typing is re-sent: the client shows it for about five seconds
/// (contract §A.12), so this keeps it on while the model generates (§8.1).
pub const TYPING_EVERY: Duration = Duration::from_secs(3);

/// How the post that started a turn is recorded among its answers (§5.2).
pub const STARTED_IT: &str = "start";

/// A turn to run, as the lane starts it.
pub struct TurnStart {
    /// The turn's id, chosen by the lane so it knows which turn it runs.
    pub turn_id: String,
    pub agent: String,
    pub channel_id: String,
    pub cause: TurnCause,
    /// Posts the turn answers that are not queue rows: the post that started
    /// it and the ones the debounce folded in (§5.2).
    pub answers: Vec<(ObservedPost, &'static str)>,
    /// The post the turn answers, where one is named (§5.2).
    pub answered: Option<String>,
    /// A drain's bound: rows queued after this wait for a turn of their own.
    pub drain_bound: Option<Millis>,
    pub fold: Arc<FoldGate>,
}

/// How a turn ended, as the lane reads it.
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    pub agent: String,
    pub channel_id: String,
    pub turn_id: String,
    /// An exit that allows progress (§7.1): the queue drains.
    pub progress: bool,
}

/// Runs the turn to its end, then tells each worker whose tools the agent
/// holds that it ended, however it ended (a kill included), so nothing a
/// worker holds for a turn outlives it (§3.4: a browser session is disposed
/// at turn end).
pub async fn run(services: Arc<Services>, start: TurnStart) -> TurnOutcome {
    use tracing::Instrument;
    // Every record the turn logs carries its agent, channel and turn.
    let span = super::log_fields::turn_span(&start.turn_id, &start.agent, &start.channel_id);
    async move {
        let outcome = run_to_end(&services, start).await;
        release(&services, &outcome).await;
        outcome
    }
    .instrument(span)
    .await
}

async fn release(services: &Services, outcome: &TurnOutcome) {
    let Some(seat) = services.seat(&outcome.agent) else {
        return;
    };
    for (namespace, worker) in &services.workers {
        if seat.held.iter().any(|t| &t.namespace == namespace) {
            worker.end_turn(&outcome.turn_id).await;
        }
    }
}

/// Runs the turn to its end. Never panics on a failure of its own: every
/// way out records the end and returns the outcome the lane needs.
async fn run_to_end(services: &Arc<Services>, start: TurnStart) -> TurnOutcome {
    let turn_id = start.turn_id.clone();
    let outcome = TurnOutcome {
        agent: start.agent.clone(),
        channel_id: start.channel_id.clone(),
        turn_id: turn_id.clone(),
        progress: false,
    };
    let Some(seat) = services.seat(&start.agent) else {
        warn!(agent = %start.agent, "a turn for an agent this boot does not serve");
        return outcome;
    };
    let mut turn = Turn::new(services, seat, &start, turn_id);
    let exit = match turn.open().await {
        Ok(()) => turn.run_loop().await,
        Err(Exit::NotAdmitted { chain_limit }) => {
            turn.not_admitted(chain_limit).await;
            return TurnOutcome {
                progress: true,
                ..outcome
            };
        }
        Err(exit @ (Exit::HaltStands | Exit::CeilingReached { .. })) => {
            if let Exit::CeilingReached { count } = exit {
                crate::loops::ceiling::raise(services, count).await;
            }
            turn.held_back().await;
            return outcome;
        }
        Err(exit) => exit,
    };
    let progress = turn.end(&exit).await;
    TurnOutcome {
        progress,
        ..outcome
    }
}

/// Why a reply was not posted.
enum Unposted {
    /// The framework's rule or the server's size limit: the model reads why.
    Rejected(Rejection),
    /// Mattermost refused it for a reason of its own.
    Refused(String),
}

struct Turn<'a> {
    services: &'a Arc<Services>,
    seat: &'a Seat,
    start: &'a TurnStart,
    id: String,
    started_at: Millis,
    channel_handle: String,
    /// The work unit the turn serves as assignee, fixed as it began
    /// (§3.14); each plugin call carries it.
    served_unit: Option<String>,
    /// Every post the turn answers, oldest first.
    answers: Vec<ObservedPost>,
    window: Vec<Message>,
    window_reach: Option<String>,
    /// The turn's own messages after the framework's message.
    own: Vec<Message>,
    views: ResultViews,
    status: StatusPost,
    rejections: RejectionCount,
    /// What the runner keeps of the turn's work units (§3.15).
    units: units::UnitTurn,
    attempts: u32,
    unparseable_forgiven: bool,
    /// What relief edited since the last completion: the next completion's
    /// event says so, for the trace (§8.3, §3.8).
    relieved: crate::context::relief::Relieved,
    time_limit_cuts: u32,
    typing: watch::Sender<bool>,
    completions: u32,
    /// Call ids used in this turn.
    call_ids: BTreeSet<String>,
    /// The results the turn has read, by content (§3.8).
    repeats: TurnResults,
    /// The decision the last approval recorded.
    last_decision: Option<String>,
    /// Set when a person stops or kills the turn (§7.5).
    halted: watch::Receiver<Option<Halt>>,
    /// Actions the turn may take: the budget, plus each extension (§5.3).
    allowance: u32,
    /// A reasoned denial of an extension: words only from here (§5.4).
    words_only: bool,
    /// Words owed to the model once the current calls have their results.
    pending_words: Vec<String>,
    /// Calls made, by tool, for the extension prompt.
    call_counts: std::collections::BTreeMap<String, u32>,
    /// The newest text the agent wrote beside its calls.
    last_words: Option<String>,
    /// What the completion whose calls are running wrote beside them.
    beside_calls: String,
    /// Reasoned denials in this turn, by tool: (who, what they said). The
    /// next prompt for the same tool shows it (§3.7).
    reasoned_denials: std::collections::BTreeMap<String, (String, String)>,
    /// Where the turn sits in its chain (§7.4); never shown to the model.
    depth: u32,
    chain_length: u32,
    /// Steers from people, and those received but not yet handed over.
    steers: Option<tokio::sync::mpsc::UnboundedReceiver<Steer>>,
    steered: Vec<Steer>,
    /// What the completion a steer aborted had streamed, for the steer's
    /// event (§8.2).
    aborted: Option<crate::inference::Usage>,
}

impl<'a> Turn<'a> {
    fn new(services: &'a Arc<Services>, seat: &'a Seat, start: &'a TurnStart, id: String) -> Self {
        let (typing, _) = watch::channel(false);
        let signals = services
            .controls
            .register(&id, &start.agent, &start.channel_id);
        Self {
            services,
            seat,
            start,
            status: StatusPost::new(&id, &start.channel_id, signals.status.clone()),
            id,
            started_at: chrono::Utc::now().timestamp_millis(),
            channel_handle: String::new(),
            served_unit: None,
            answers: start.answers.iter().map(|(p, _)| p.clone()).collect(),
            window: Vec::new(),
            window_reach: None,
            own: Vec::new(),
            views: ResultViews::default(),
            rejections: RejectionCount::default(),
            units: units::UnitTurn::default(),
            attempts: 0,
            unparseable_forgiven: false,
            relieved: crate::context::relief::Relieved::default(),
            time_limit_cuts: 0,
            typing,
            completions: 0,
            call_ids: BTreeSet::new(),
            repeats: TurnResults::default(),
            last_decision: None,
            halted: signals.halted,
            steers: Some(signals.steers),
            allowance: seat.agent.limits.action_budget,
            words_only: false,
            pending_words: Vec::new(),
            call_counts: std::collections::BTreeMap::new(),
            last_words: None,
            beside_calls: String::new(),
            reasoned_denials: std::collections::BTreeMap::new(),
            depth: 0,
            chain_length: 1,
            steered: Vec::new(),
            aborted: None,
        }
    }

    async fn open(&mut self) -> Result<(), Exit> {
        let (agent, answered, limit) = (
            self.start.agent.clone(),
            self.start.answered.clone(),
            self.services.limits.chain_limit,
        );
        // Admission counts the turns carrying the root (§7.4): a turn that
        // would exceed the chain is not opened.
        let (placement, carried) = self
            .services
            .store
            .call(move |s| {
                let post = answered
                    .as_deref()
                    .map(|p| s.post(p))
                    .transpose()?
                    .flatten();
                let placement = crate::loops::place(s, &agent, post.as_ref())?;
                let carried = match &placement.chain_root {
                    Some(root) => s.chain_count(root)?,
                    None => 0,
                };
                Ok((placement, carried))
            })
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        if placement.chain_root.is_some() && carried + 1 > limit {
            return Err(Exit::NotAdmitted { chain_limit: limit });
        }
        // The hourly ceiling (§7.4): nothing opens while a halt stands, and
        // the turn that would breach it raises the halt instead.
        if self.services.controls.global_halt().is_some() {
            return Err(Exit::HaltStands);
        }
        let since = self
            .services
            .controls
            .count_from(chrono::Utc::now().timestamp_millis());
        let count = self
            .services
            .store
            .call(move |s| s.turns_started_since(since))
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        if count >= u64::from(self.services.limits.hourly_turn_ceiling) {
            return Err(Exit::CeilingReached { count: count + 1 });
        }
        self.depth = placement.depth;
        self.chain_length = placement.chain_length;
        let record = NewTurn {
            id: self.id.clone(),
            agent: self.start.agent.clone(),
            channel_id: self.start.channel_id.clone(),
            boot_id: self.services.boot_id.clone(),
            started_at: self.started_at,
            cause: self.start.cause,
            answers_post_id: self.start.answered.clone(),
            depth: placement.depth,
            chain_root: placement.chain_root.unwrap_or_else(|| self.id.clone()),
            chain_length: placement.chain_length,
            model: self.seat.agent.model.clone(),
        };
        let answers: Vec<(String, &'static str)> = self
            .start
            .answers
            .iter()
            .map(|(p, how)| (p.id.clone(), *how))
            .collect();
        let channel_id = self.start.channel_id.clone();
        let agent = self.start.agent.clone();
        (self.channel_handle, self.served_unit) = self
            .services
            .store
            .call(move |s| {
                s.open_turn(&record)?;
                for (post, how) in &answers {
                    s.record_answer(&record.id, post, how)?;
                }
                let started: Vec<String> = answers.iter().map(|(p, _)| p.clone()).collect();
                let unit =
                    crate::workers::plugins::served_unit::of(s, &agent, &channel_id, &started)?;
                Ok((
                    s.channel(&channel_id)?.map(|c| c.name).unwrap_or_default(),
                    unit,
                ))
            })
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        self.spawn_typing();
        info!(cause = self.start.cause.as_str(), "turn started");
        Ok(())
    }

    /// Keeps the typing indicator on while `typing` is true (§8.1): on while
    /// the model generates, dark during tools.
    fn spawn_typing(&self) {
        let mut on = self.typing.subscribe();
        let rest = self.seat.rest.clone();
        let user_id = self.seat.user_id.clone();
        let channel_id = self.start.channel_id.clone();
        tokio::spawn(async move {
            loop {
                if *on.borrow_and_update() {
                    let _ = rest.typing(&user_id, &channel_id).await;
                    tokio::select! {
                        _ = tokio::time::sleep(TYPING_EVERY) => {}
                        changed = on.changed() => if changed.is_err() { return },
                    }
                } else if on.changed().await.is_err() {
                    return;
                }
            }
        });
    }

    /// Takes the rows queued for the lane (§5.2) and assembles the context.
    async fn assemble(&mut self) -> Result<(), StoreError> {
        let (agent, channel, turn, bound) = (
            self.start.agent.clone(),
            self.start.channel_id.clone(),
            self.id.clone(),
            self.start.drain_bound,
        );
        // A drain's first assembly is bounded by the moment it chose the post
        // it answers; a later one (a fold's) takes everything queued.
        let bound = if self.completions == 0 { bound } else { None };
        let taken: Vec<ObservedPost> = self
            .services
            .store
            .call(move |s| {
                let ids = s.take_queued(&agent, &channel, &turn, bound)?;
                let mut posts = Vec::new();
                for id in ids {
                    s.record_answer(&turn, &id, "queue")?;
                    if let Some(post) = s.post(&id)? {
                        posts.push(post);
                    }
                }
                Ok(posts)
            })
            .await?;
        for post in taken {
            if !self.answers.iter().any(|a| a.id == post.id) {
                self.answers.push(post);
            }
        }
        self.answers
            .sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        let assembled = assemble(
            self.services,
            self.seat,
            &AssemblyInput {
                turn_id: &self.id,
                channel_id: &self.start.channel_id,
                started_at: self.started_at,
                answers: &self.answers,
                draining: self.start.cause == TurnCause::Drain,
            },
        )
        .await?;
        let (id, reach, charged) = (
            self.id.clone(),
            assembled.window.reach.clone(),
            assembled.window.charged_tokens,
        );
        let now = chrono::Utc::now().timestamp_millis();
        self.services
            .store
            .call(move |s| s.record_assembly(&id, now, reach.as_deref(), charged))
            .await?;
        self.window_reach = assembled.window.reach.clone();
        let unreached = self.unreached_by_drain(&assembled.window);
        self.window = assembled.messages;
        if let Some(note) = unreached {
            let limit = self.services.post_limit.get();
            self.status
                .note(&self.seat.rest, &self.services.store, &note, true, limit)
                .await;
        }
        Ok(())
    }

    /// A drain whose window could not reach back to the earliest post it
    /// answers says how far back context reached (§5.2): detection, not
    /// prevention. Stated once, at the first assembly.
    fn unreached_by_drain(&self, window: &crate::context::window::Window) -> Option<String> {
        if self.start.cause != TurnCause::Drain || self.completions > 0 {
            return None;
        }
        let earliest = self.answers.first()?;
        if window.post_ids.contains(&earliest.id) {
            return None;
        }
        let reached = window.reach_at.map_or_else(
            || "no earlier post".to_string(),
            |at| crate::context::window::local_time(at, self.services.timezone),
        );
        Some(format!(
            "⤒ context reached back to {reached}; the earliest queued post it answers ({}, {}) is older than that",
            earliest.id,
            crate::context::window::local_time(earliest.created_at, self.services.timezone)
        ))
    }

    async fn run_loop(&mut self) -> Exit {
        if let Err(error) = self.assemble().await {
            return Exit::Store(error.to_string());
        }
        loop {
            if let Some(halt) = self.halted_now() {
                return Exit::Halted(halt);
            }
            self.hand_over_steers().await;
            if let Some(exit) = self.relieve_pressure() {
                return exit;
            }
            let completion = match self.complete().await {
                Ok(Some(completion)) => completion,
                Ok(None) if !self.steered.is_empty() => continue,
                Ok(None) => {
                    // A fold: the fragments joined; assemble again (§4.4).
                    if let Err(error) = self.assemble().await {
                        return Exit::Store(error.to_string());
                    }
                    continue;
                }
                Err(exit) => return exit,
            };
            if let Some(exit) = self.handle(completion).await {
                return exit;
            }
        }
    }

    /// One completion. `Ok(None)` when a fold aborted it.
    async fn complete(&mut self) -> Result<Option<Completion>, Exit> {
        let request = CompletionRequest {
            system: self.seat.system_prompt.clone(),
            tools: self.seat.tools.clone(),
            messages: self.window.iter().chain(self.own.iter()).cloned().collect(),
            cache_breakpoints: self.window.len().checked_sub(2).into_iter().collect(),
            ..CompletionRequest::default()
        };
        let limits = CallLimits {
            idle_timeout: Duration::from_secs(u64::from(self.services.limits.idle_timeout_secs)),
            wall_clock: Duration::from_secs(u64::from(
                self.seat.agent.limits.completion_time_limit_secs,
            )),
        };
        let (abort, cancel) = Cancel::new();
        let _ = self.typing.send(true);
        let absorbing = self.start.fold.is_open();
        let fold = self.start.fold.clone();
        let provider = &self.seat.provider;
        let mut observe = |_: &crate::inference::StreamEvent| {};
        let mut halted = self.halted.clone();
        let mut steers = self.steers.take();
        let call = provider.complete(&request, limits, cancel, &mut observe);
        tokio::pin!(call);
        // What an aborted completion had streamed, for its event (§8.2).
        let mut folded = None;
        // A fold (§4.4) or a kill (§7.5) aborts the completion in flight.
        let completed = tokio::select! {
            done = &mut call => Some(done),
            () = fold.arrived(), if absorbing => {
                abort.cancel();
                folded = Some(aborted_estimate(call.await));
                None
            }
            Some(steer) = next_steer(&mut steers) => {
                // A steer aborts the completion in flight (§7.5).
                abort.cancel();
                self.aborted = aborted_estimate(call.await);
                self.steers = steers;
                self.steered.push(steer);
                self.completions += 1;
                let _ = self.typing.send(false);
                return Ok(None);
            }
            () = killed(&mut halted) => {
                abort.cancel();
                let _ = call.await;
                self.completions += 1;
                let _ = self.typing.send(false);
                return Err(Exit::Halted(self.halted_now().unwrap_or(Halt { by: String::new(), kill: true })));
            }
        };
        self.steers = steers;
        let _ = self.typing.send(false);
        self.completions += 1;
        let Some(completed) = completed else {
            self.record_fold(folded.flatten()).await;
            return Ok(None);
        };
        // The first model call is over: absorption ends (§4.4).
        self.start.fold.close();
        match completed {
            Ok(mut completion) => {
                self.unique_call_ids(&mut completion);
                self.record_completion(&completion).await;
                Ok(Some(completion))
            }
            // An aborted completion reports nothing, and its estimate is in
            // no total (§8.2).
            Err(Failure::Aborted { .. }) => {
                Err(Exit::Provider("the completion was aborted".into()))
            }
            // The provider measured the context too long: exhaustion, not
            // an outage, so the queue drains (§7.1).
            Err(Failure::ContextExhausted) => Err(Exit::CeilingExceeded(
                self.exhaustion(self.context_estimate(), None),
            )),
            Err(Failure::Malformed(attempts)) => Err(Exit::MalformedCompletion { attempts }),
            Err(failure) => Err(Exit::Provider(failure.phrase())),
        }
    }

    /// Gives every call of the turn its own id: a provider may number calls
    /// per completion (or send none), and a result must answer exactly one
    /// call in the turn and in later windows (§3.8).
    fn unique_call_ids(&mut self, completion: &mut Completion) {
        for call in &mut completion.tool_calls {
            if call.id.is_empty() || self.call_ids.contains(&call.id) {
                call.id = format!("call-{}-{}", self.completions, self.call_ids.len() + 1);
            }
            self.call_ids.insert(call.id.clone());
        }
    }

    async fn record_fold(&mut self, aborted: Option<crate::inference::Usage>) {
        let folded = self.start.fold.take();
        let names: Vec<String> = folded.iter().map(|p| p.id.clone()).collect();
        for post in folded {
            let (turn, id) = (self.id.clone(), post.id.clone());
            let _ = self
                .services
                .store
                .call(move |s| s.record_answer(&turn, &id, "fold"))
                .await;
            if !self.answers.iter().any(|a| a.id == post.id) {
                self.answers.push(post);
            }
        }
        // The completion the fold aborted reported nothing: its event
        // carries an estimate of what it had streamed (§8.2, §4.4).
        let detail =
            aborted.map(|usage| json!({"aborted_completion": usage.as_estimate()}).to_string());
        self.trace(
            TraceKind::Fold,
            None,
            None,
            None,
            Some(names.join(", ")),
            detail,
        )
        .await;
        let note = format!(
            "↻ started over to include {} more post{} from the same person",
            names.len(),
            if names.len() == 1 { "" } else { "s" }
        );
        let limit = self.services.post_limit.get();
        self.status
            .note(&self.seat.rest, &self.services.store, &note, false, limit)
            .await;
    }
}

/// The estimate an aborted completion carries (§8.2); none where the
/// completion finished before the abort reached it.
fn aborted_estimate(done: Result<Completion, Failure>) -> Option<crate::inference::Usage> {
    match done {
        Err(Failure::Aborted { estimated }) => Some(estimated),
        _ => None,
    }
}
