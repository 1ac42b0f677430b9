//! One turn (§3.3, §5.1, §7.2): open its record, take what was queued for
//! it, assemble context, and loop — call the model; text with no call is
//! the reply and ends the turn; calls run and their results go back. Usage
//! is written after each completion, every step goes to the trace, and the
//! end consumes or returns what the turn took (§5.2).

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use mattermost_wire::model::NewPost;
use serde_json::json;
use tokio::sync::watch;
use tracing::{info, warn};

use crate::chat::directory::{ROLE_PROP, TURN_PROP};
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
use crate::tools::core::{ResultViews, VIEW_MAX_CHARS};

use super::assemble::{AssemblyInput, assemble};
use super::calls::{self, CallScope, Executed, Outcome};
use super::control::{Halt, Steer};
use super::fold::FoldGate;
use super::rejections::{AfterRejection, Rejection, RejectionCount, check_reply};
use super::services::{Seat, Services};
use super::status_post::StatusPost;
use crate::approvals::prompt::{self, AskedBy};
use crate::approvals::{Decided, sign};
use crate::store::decisions::NewDecision;

/// How often typing is re-sent: the client shows it for about five seconds
/// (contract §A.12), so this keeps it on while the model generates (§8.1).
pub const TYPING_EVERY: Duration = Duration::from_secs(3);

/// A turn to run, as the lane starts it.
pub struct TurnStart {
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

/// Why a turn ended (§7.1), in its record's words.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Exit {
    Completed,
    /// Two rejected posts in a row (§4.5).
    Rejected,
    BudgetExhausted,
    MalformedCall,
    CeilingExceeded,
    CutAtTimeLimit,
    Provider(String),
    Store(String),
    /// A person denied a call (§5.4): the turn ends and asks how to proceed.
    Denied {
        by: String,
        tool: String,
    },
    /// Mattermost refused a post the turn owed.
    Delivery(String),
    /// A person stopped or killed the turn (§7.5).
    Halted(Halt),
    /// The chain is at its limit: the turn is not opened (§7.4).
    NotAdmitted {
        chain_limit: u32,
    },
    /// Opening it would breach the hourly ceiling (§7.4).
    CeilingReached {
        count: u64,
    },
    /// Every agent is halted: nothing opens until a person resumes.
    HaltStands,
    /// A person declined to extend the budget (§5.3).
    BudgetDenied {
        by: String,
    },
}

impl Exit {
    fn kind(&self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Rejected => "rejected_posts",
            Self::BudgetExhausted => "budget_exhausted",
            Self::MalformedCall => "malformed_call",
            Self::CeilingExceeded => "context_ceiling",
            Self::CutAtTimeLimit => "time_limit",
            Self::Provider(_) => "provider_failure",
            Self::Store(_) => "store_failure",
            Self::Denied { .. } => "denied",
            Self::Delivery(_) => "delivery_failure",
            Self::Halted(Halt { kill: false, .. }) => "stopped",
            Self::Halted(Halt { kill: true, .. }) => "killed",
            Self::NotAdmitted { .. } => "not_admitted",
            Self::CeilingReached { .. } => "hourly_ceiling",
            Self::HaltStands => "halted",
            Self::BudgetDenied { .. } => "budget_exhausted",
        }
    }

    /// A completion, an exhaustion or a person's act allows progress; a
    /// failure does not (§7.1).
    fn allows_progress(&self) -> bool {
        matches!(
            self,
            Self::Completed
                | Self::Rejected
                | Self::BudgetExhausted
                | Self::Denied { .. }
                | Self::BudgetDenied { .. }
                | Self::Halted(_)
        )
    }

    /// The notice posted for an exit that is not a reply.
    fn notice(&self) -> Option<String> {
        match self {
            // The command's own notice names the agents it reached.
            Self::Completed
            | Self::Halted(_)
            | Self::NotAdmitted { .. }
            | Self::CeilingReached { .. }
            | Self::HaltStands => None,
            Self::Rejected => Some(
                "This turn ended: two replies in a row could not be posted (see /collegium trace for why).".into(),
            ),
            Self::BudgetExhausted => Some(
                "This turn ended: its action budget is spent. Ask again to continue.".into(),
            ),
            Self::MalformedCall => Some(
                "This turn ended: the model sent tool arguments that were not valid JSON twice.".into(),
            ),
            Self::CeilingExceeded => Some(
                "This turn ended: its context is over its ceiling even with every result it read reduced to a line.".into(),
            ),
            Self::CutAtTimeLimit => Some(
                "This turn ended: the model was cut off at its time limit twice.".into(),
            ),
            Self::Provider(phrase) => Some(format!("This turn ended: {phrase}.")),
            Self::Store(reason) => Some(format!("This turn ended: the store failed ({reason}).")),
            Self::Denied { by, tool } => Some(format!(
                "@{by} denied {tool}, so I stopped there. How would you like me to proceed?"
            )),
            Self::BudgetDenied { by } => Some(format!(
                "@{by} did not extend my action budget, so I stopped here. How would you like me to proceed?"
            )),
            Self::Delivery(reason) => Some(format!(
                "This turn ended: Mattermost refused a post ({reason})."
            )),
        }
    }
}

/// Runs the turn to its end. Never panics on a failure of its own: every
/// way out records the end and returns the outcome the lane needs.
pub async fn run(services: Arc<Services>, start: TurnStart) -> TurnOutcome {
    let turn_id = uuid::Uuid::now_v7().to_string();
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
    let mut turn = Turn::new(&services, seat, &start, turn_id);
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
                crate::loops::ceiling::raise(&services, count).await;
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

struct Turn<'a> {
    services: &'a Services,
    seat: &'a Seat,
    start: &'a TurnStart,
    id: String,
    started_at: Millis,
    channel_handle: String,
    /// Every post the turn answers, oldest first.
    answers: Vec<ObservedPost>,
    window: Vec<Message>,
    window_reach: Option<String>,
    /// The turn's own messages after the framework's message.
    own: Vec<Message>,
    views: ResultViews,
    status: StatusPost,
    rejections: RejectionCount,
    attempts: u32,
    unparseable_forgiven: bool,
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
    /// Where the turn sits in its chain (§7.4); never shown to the model.
    depth: u32,
    chain_length: u32,
    /// Steers from people, and those received but not yet handed over.
    steers: Option<tokio::sync::mpsc::UnboundedReceiver<Steer>>,
    steered: Vec<Steer>,
}

impl<'a> Turn<'a> {
    fn new(services: &'a Services, seat: &'a Seat, start: &'a TurnStart, id: String) -> Self {
        let (typing, _) = watch::channel(false);
        let signals = services
            .controls
            .register(&id, &start.agent, &start.channel_id);
        Self {
            services,
            seat,
            start,
            status: StatusPost::new(&id, &start.channel_id),
            id,
            started_at: chrono::Utc::now().timestamp_millis(),
            channel_handle: String::new(),
            answers: start.answers.iter().map(|(p, _)| p.clone()).collect(),
            window: Vec::new(),
            window_reach: None,
            own: Vec::new(),
            views: ResultViews::default(),
            rejections: RejectionCount::default(),
            attempts: 0,
            unparseable_forgiven: false,
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
            depth: 0,
            chain_length: 1,
            steered: Vec::new(),
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
        self.channel_handle = self
            .services
            .store
            .call(move |s| {
                s.open_turn(&record)?;
                for (post, how) in &answers {
                    s.record_answer(&record.id, post, how)?;
                }
                Ok(s.channel(&channel_id)?.map(|c| c.name).unwrap_or_default())
            })
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        self.spawn_typing();
        info!(turn = %self.id, agent = %self.start.agent, channel = %self.start.channel_id, cause = self.start.cause.as_str(), "turn started");
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
        // A fold (§4.4) or a kill (§7.5) aborts the completion in flight.
        let completed = tokio::select! {
            done = &mut call => Some(done),
            () = fold.arrived(), if absorbing => {
                abort.cancel();
                let _ = call.await;
                None
            }
            Some(steer) = next_steer(&mut steers) => {
                // A steer aborts the completion in flight (§7.5).
                abort.cancel();
                let _ = call.await;
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
            self.record_fold().await;
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
            Err(Failure::Aborted { estimated }) => {
                self.add_usage(&estimated).await;
                Err(Exit::Provider("the completion was aborted".into()))
            }
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

    async fn record_fold(&mut self) {
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
        self.trace(
            TraceKind::Fold,
            None,
            None,
            None,
            Some(names.join(", ")),
            None,
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

    async fn handle(&mut self, completion: Completion) -> Option<Exit> {
        // Stopped: nothing more is posted; calls are recorded as not run.
        if let Some(halt) = self.halted_now()
            && completion.tool_calls.is_empty()
        {
            return Some(Exit::Halted(halt));
        }
        if completion.finish == FinishReason::TimeLimit {
            self.time_limit_cuts += 1;
            if self.time_limit_cuts >= 2 {
                return Some(Exit::CutAtTimeLimit);
            }
        }
        if !completion.tool_calls.is_empty() {
            return self.run_calls(completion).await;
        }
        let rejection = if matches!(
            completion.finish,
            FinishReason::Length | FinishReason::TimeLimit
        ) {
            // Output cut at its limit is never posted as if whole (§7.1).
            Some(Rejection::CutOff {
                length: completion.text.chars().count(),
            })
        } else if completion.leaked.is_some() {
            Some(Rejection::CallAsProse)
        } else {
            self.check(&completion.text).await
        };
        match rejection {
            Some(rejection) => self.reject(&completion.text, rejection).await,
            None => match self.post_reply(&completion.text).await {
                Ok(()) => Some(Exit::Completed),
                Err(rejection) => self.reject(&completion.text, rejection).await,
            },
        }
    }

    /// Checks a reply against §4.5 with the channel's members as recorded.
    async fn check(&self, text: &str) -> Option<Rejection> {
        let channel = self.start.channel_id.clone();
        let members = self
            .services
            .store
            .call(move |s| s.members(&channel))
            .await
            .unwrap_or_default();
        let usernames: BTreeSet<String> = members.iter().map(|m| m.username.clone()).collect();
        let agents: BTreeSet<&str> = members
            .iter()
            .filter(|m| m.kind == crate::store::AuthorKind::Agent)
            .map(|m| m.username.as_str())
            .collect();
        let scan = mattermost_wire::mentions::scan(text, &|u: &str| usernames.contains(u));
        let addressed: BTreeSet<String> = scan
            .usernames()
            .into_iter()
            .filter(|u| agents.contains(u.as_str()) && *u != self.seat.agent.username)
            .collect();
        let limits = &self.services.limits;
        if !addressed.is_empty() {
            let what = if self.depth >= limits.depth_limit {
                Some(format!(
                    "its delegation limit ({} hand-offs from a person)",
                    limits.depth_limit
                ))
            } else if self.chain_length >= limits.chain_limit {
                Some(format!(
                    "its chain limit ({} turns from one person's post)",
                    limits.chain_limit
                ))
            } else {
                None
            };
            if let Some(what) = what {
                return Some(Rejection::LimitReached { what });
            }
        }
        check_reply(text, &addressed, None, self.services.post_limit.get())
    }

    async fn reject(&mut self, text: &str, rejection: Rejection) -> Option<Exit> {
        self.attempts += 1;
        let feedback = rejection.feedback();
        self.trace(
            TraceKind::RejectedPost,
            None,
            None,
            None,
            Some(text.to_string()),
            Some(json!({"reason": feedback}).to_string()),
        )
        .await;
        match self.rejections.rejected() {
            AfterRejection::EndTurn => Some(Exit::Rejected),
            AfterRejection::FeedBack => {
                self.own.push(Message::Assistant(AssistantMessage {
                    text: text.to_string(),
                    ..AssistantMessage::default()
                }));
                self.own
                    .push(Message::User(format!("[Framework] {feedback}")));
                None
            }
        }
    }

    async fn post_reply(&mut self, text: &str) -> Result<(), Rejection> {
        self.start.fold.close();
        let post = NewPost {
            channel_id: self.start.channel_id.clone(),
            message: text.to_string(),
            props: json!({ROLE_PROP: "reply", TURN_PROP: self.id})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ..NewPost::default()
        };
        match self.seat.rest.create_post(&post).await {
            Ok(_) => Ok(()),
            Err(crate::chat::RestError::Api { status: 400, error })
                if error.id.contains("message_length") =>
            {
                // The server's limit changed under us: read it again (§6.2).
                self.services.post_limit.refresh().await;
                Err(Rejection::TooLong {
                    limit: self.services.post_limit.get(),
                    length: text.chars().count(),
                })
            }
            Err(error) => {
                warn!(%error, turn = %self.id, "could not post the reply");
                Err(Rejection::Undeliverable {
                    reason: error.to_string(),
                })
            }
        }
    }

    /// Runs a completion's calls in order; a run of consecutive concurrent
    /// calls runs together, admitted to the budget first (§5.1).
    async fn run_calls(&mut self, completion: Completion) -> Option<Exit> {
        self.start.fold.close();
        let limit = self.services.post_limit.get();
        if !completion.text.trim().is_empty() {
            self.last_words = Some(completion.text.trim().to_string());
            // Text beside a call goes to the status post (§3.3), agent
            // mentions stripped (§4.5).
            let interim = crate::context::window::strip_mentions_of_agents(
                completion.text.trim(),
                &self.services.display_names,
            );
            let note = format!("💬 {}", interim.lines().next().unwrap_or_default());
            self.status
                .note(&self.seat.rest, &self.services.store, &note, true, limit)
                .await;
        }
        let sent_back = completion
            .tool_calls
            .iter()
            .map(|c| crate::inference::ToolCall {
                arguments: crate::context::window::sendable_arguments(&c.arguments),
                ..c.clone()
            })
            .collect();
        self.own.push(Message::Assistant(AssistantMessage {
            text: completion.text.clone(),
            tool_calls: sent_back,
            reasoning: completion.reasoning.clone(),
        }));
        let planned: Vec<calls::Planned> = completion
            .tool_calls
            .iter()
            .map(|call| calls::plan(self.services, self.seat, call))
            .collect();
        let mut exit = None;
        let mut remaining = planned.into_iter().peekable();
        while let Some(first) = remaining.next() {
            let mut run = vec![first];
            if run[0].concurrent {
                while remaining.peek().is_some_and(|p| p.concurrent) {
                    run.extend(remaining.next());
                }
            }
            if let Some(halt) = self.halted_now() {
                // A stop ends the turn at this boundary: no further calls.
                for planned in run {
                    let executed = planned.unrun(Outcome::Cancelled {
                        by: halt.by.clone(),
                    });
                    self.record_result(executed, limit).await;
                }
                exit.get_or_insert(Exit::Halted(halt));
                continue;
            }
            let cost = run.iter().filter(|p| !p.budget_exempt).count() as u32;
            let mut spent = self.attempts + cost > self.allowance;
            if spent && exit.is_none() && !self.words_only {
                // The agent asks a person to extend its budget (§5.3); the
                // context is kept, and an approval grants the budget again.
                match self.extension(&run).await {
                    Ok(Decided::Approved { .. }) => {
                        self.allowance += self.seat.agent.limits.action_budget;
                        spent = self.attempts + cost > self.allowance;
                    }
                    Ok(Decided::Denied { by }) => exit = Some(Exit::BudgetDenied { by }),
                    Ok(Decided::DeniedWithReason { by, reason }) => {
                        // Zero attempts left, and words only (§5.4).
                        self.words_only = true;
                        self.pending_words.push(format!(
                            "[@{by} did not extend your action budget, and said:] {reason}"
                        ));
                    }
                    Err(end) => exit = Some(end),
                }
            }
            if exit.is_some() || spent || self.words_only {
                // After an end, or past the budget, nothing more runs (§5.3).
                // A call after a reasoned denial ends the turn as exhausted,
                // without a second prompt.
                let why = if exit.is_some() {
                    "not run: the turn ended before it"
                } else {
                    "not run: the action budget is spent"
                };
                for planned in run {
                    let executed = planned.unrun(Outcome::NotRun { why: why.into() });
                    if let Some(end) = self.record_result(executed, limit).await {
                        exit.get_or_insert(end);
                    }
                }
                if !self.words_only || self.pending_words.is_empty() {
                    exit.get_or_insert(Exit::BudgetExhausted);
                }
                continue;
            }
            self.attempts += cost;
            for planned in &run {
                let name = planned
                    .resolved
                    .as_ref()
                    .map_or_else(|_| planned.call.name.clone(), |(t, _, _)| t.to_string());
                *self.call_counts.entry(name).or_default() += 1;
            }
            let ran = if run[0].gated {
                let planned = run.remove(0);
                match self.approval(&planned).await {
                    Ok(Decided::Approved { .. }) => {
                        let decision = self.last_decision.clone();
                        vec![self.run_planned(planned, decision).await]
                    }
                    Ok(Decided::Denied { by }) => {
                        let tool = planned.tool_name();
                        exit = Some(Exit::Denied {
                            by: by.clone(),
                            tool,
                        });
                        vec![planned.unrun(Outcome::Denied { by, reason: None })]
                    }
                    Ok(Decided::DeniedWithReason { by, reason }) => {
                        vec![planned.unrun(Outcome::Denied {
                            by,
                            reason: Some(reason),
                        })]
                    }
                    Err(end) => {
                        exit = Some(end);
                        vec![planned.unrun(Outcome::NotRun {
                            why: "not run: the approval could not be asked".into(),
                        })]
                    }
                }
            } else {
                let scope = CallScope {
                    services: self.services,
                    seat: self.seat,
                    turn_id: &self.id,
                    channel: &self.channel_handle,
                };
                let views = &self.views;
                futures_util::future::join_all(
                    run.into_iter()
                        .map(|planned| calls::run(&scope, planned, views, None)),
                )
                .await
            };
            for executed in ran {
                if let Some(end) = self.record_result(executed, limit).await {
                    exit.get_or_insert(end);
                }
            }
        }
        // A denial's reason follows the results its calls are owed.
        for words in std::mem::take(&mut self.pending_words) {
            self.own.push(Message::User(words));
        }
        exit
    }

    /// The extension prompt (§5.3): the running count, the calls repeated
    /// most, and the agent's last words or that it wrote none.
    async fn extension(&mut self, run: &[calls::Planned]) -> Result<Decided, Exit> {
        let budget = self.seat.agent.limits.action_budget;
        let mut repeated: Vec<(&String, &u32)> = self.call_counts.iter().collect();
        repeated.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let most: Vec<String> = repeated
            .iter()
            .take(3)
            .map(|(tool, n)| format!("`{tool}` ×{n}"))
            .collect();
        let words = match &self.last_words {
            Some(words) => format!(
                "Its last words: “{}”",
                crate::context::window::strip_mentions_of_agents(
                    &words
                        .chars()
                        .take(prompt::EXCERPT_CHARS)
                        .collect::<String>(),
                    &self.services.display_names
                )
            ),
            None => "It wrote nothing beside its calls.".to_string(),
        };
        let display = self.seat.agent.display_name.clone();
        let text = format!(
            "🔐 **More actions needed** — {display} has used {} of {} actions in this turn. \
             Most repeated: {}. {words} Approve to grant {budget} more; the turn keeps its context.",
            self.attempts,
            self.allowance,
            if most.is_empty() {
                "none".to_string()
            } else {
                most.join(", ")
            },
        );
        let call = run.first().map(|p| p.call.id.clone()).unwrap_or_default();
        self.ask_person("extension", None, &call, text).await
    }

    /// Steers received since the last completion arrive as the person
    /// speaking, prefixed with their name; each costs one attempt and is a
    /// line on the status post (§7.5).
    async fn hand_over_steers(&mut self) {
        if let Some(steers) = self.steers.as_mut() {
            while let Ok(steer) = steers.try_recv() {
                self.steered.push(steer);
            }
        }
        let limit = self.services.post_limit.get();
        for steer in std::mem::take(&mut self.steered) {
            self.attempts += 1;
            self.own.push(Message::User(format!(
                "[@{} steers this turn] {}",
                steer.by, steer.text
            )));
            self.trace(
                TraceKind::Steer,
                None,
                None,
                None,
                Some(steer.text.clone()),
                Some(json!({"by": steer.by}).to_string()),
            )
            .await;
            let note = format!("🧭 steered by @{}", steer.by);
            self.status
                .note(&self.seat.rest, &self.services.store, &note, true, limit)
                .await;
        }
    }

    /// A turn the chain limit keeps from opening (§7.4): the system bot
    /// names the agent not activated; what a drain chose is consumed, so it
    /// is not chosen again.
    async fn not_admitted(&self, chain_limit: u32) {
        let (agent, channel, turn, bound) = (
            self.start.agent.clone(),
            self.start.channel_id.clone(),
            self.id.clone(),
            self.start.drain_bound,
        );
        let _ = self
            .services
            .store
            .call(move |s| {
                s.take_queued(&agent, &channel, &turn, bound)?;
                s.consume_taken(&turn)
            })
            .await;
        let display = self
            .services
            .display_names
            .get(&self.start.agent)
            .cloned()
            .unwrap_or_else(|| self.start.agent.clone());
        let notice = NewPost {
            channel_id: self.start.channel_id.clone(),
            message: format!(
                "{display} was not activated: this chain of agents has reached its limit of \
                 {chain_limit} turns from one person's post. A new post from a person starts a fresh chain."
            ),
            props: json!({ROLE_PROP: "notice"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ..NewPost::default()
        };
        if let Err(error) = self.services.system_bot.rest.create_post(&notice).await {
            warn!(%error, "could not post the chain-limit notice");
        }
        self.services.controls.release(&self.id);
        info!(agent = %self.start.agent, "turn not admitted: the chain is at its limit");
    }

    /// A turn a halt keeps from opening: the posts it would have answered
    /// wait in the queue for `/collegium resume` (§7.4), nothing lost.
    async fn held_back(&self) {
        let (agent, channel) = (self.start.agent.clone(), self.start.channel_id.clone());
        let posts: Vec<(String, Millis)> = self
            .start
            .answers
            .iter()
            .map(|(p, _)| (p.id.clone(), p.created_at))
            .collect();
        let _ = self
            .services
            .store
            .call(move |s| {
                for (post, at) in &posts {
                    s.enqueue(&agent, &channel, post, *at)?;
                }
                Ok(())
            })
            .await;
        self.services.controls.release(&self.id);
        info!(agent = %self.start.agent, "turn held back: every agent is halted");
    }

    fn halted_now(&self) -> Option<Halt> {
        self.halted.borrow().clone()
    }

    /// A stop cancels a pending prompt without counting a denial (§7.5):
    /// recorded as cancelled, rewritten without buttons.
    async fn cancel_prompt(&self, approval: &str, halt: &Halt) {
        let (id, by) = (approval.to_string(), halt.by.clone());
        let now = chrono::Utc::now().timestamp_millis();
        let record = self
            .services
            .store
            .call(move |s| {
                s.decide(&id, "cancelled", &by, None, now)?;
                s.decision(&id)
            })
            .await;
        if let Ok(Some(decision)) = record
            && let Some(post) = decision.prompt_post_id
        {
            let how = if halt.kill { "killed" } else { "stopped" };
            let text = prompt::terminal(
                &decision.payload,
                &format!("✋ Cancelled: @{} {how} the turn.", halt.by),
            );
            if let Err(error) = self.seat.rest.replace_post(&post, &text, json!({})).await {
                warn!(%error, "could not rewrite the cancelled prompt");
            }
        }
    }

    async fn run_planned(&self, planned: calls::Planned, decision: Option<String>) -> Executed {
        let scope = CallScope {
            services: self.services,
            seat: self.seat,
            turn_id: &self.id,
            channel: &self.channel_handle,
        };
        calls::run(&scope, planned, &self.views, decision).await
    }

    /// Parks the turn on a person's decision (§3.7): the prompt under the
    /// agent's account, the status post's head saying since when, and no
    /// timeout.
    async fn approval(&mut self, planned: &calls::Planned) -> Result<Decided, Exit> {
        let Ok((tool, value, _)) = &planned.resolved else {
            return Err(Exit::Store(
                "an approval for a call that did not resolve".into(),
            ));
        };
        let payload = serde_json::to_string_pretty(value).unwrap_or_default();
        let asker = self.answers.last().cloned();
        // Agent mentions are stripped from prompts (§4.5): a quoted @name
        // would address that agent from the prompt.
        let words = asker.as_ref().map(|post| {
            crate::context::window::strip_mentions_of_agents(
                &post.message,
                &self.services.display_names,
            )
        });
        let words = words.as_deref().unwrap_or_default();
        let asked_by = asker.as_ref().map(|post| match post.author_kind {
            crate::store::AuthorKind::Agent => AskedBy::Colleague {
                display_name: self
                    .services
                    .display_names
                    .get(&post.author_name)
                    .map_or(post.author_name.as_str(), String::as_str),
                words,
            },
            _ => AskedBy::Person {
                username: &post.author_name,
                words,
            },
        });
        let text = prompt::render(&prompt::PromptFacts {
            tool: &tool.to_string(),
            action: self.attempts,
            budget: self.seat.agent.limits.action_budget,
            asked_by,
            payload: &payload,
        });
        self.ask_person("approval", Some(tool.to_string()), &planned.call.id, text)
            .await
    }

    /// Posts a prompt under the agent's account and parks the turn on it
    /// until a person decides (§3.7, §5.3): no timeout; a stop cancels it.
    async fn ask_person(
        &mut self,
        kind: &str,
        tool: Option<String>,
        call_id: &str,
        text: String,
    ) -> Result<Decided, Exit> {
        let id = uuid::Uuid::now_v7().to_string();
        let record = NewDecision {
            id: id.clone(),
            turn_id: self.id.clone(),
            call_id: call_id.to_string(),
            agent: self.start.agent.clone(),
            channel_id: self.start.channel_id.clone(),
            kind: kind.into(),
            tool,
            payload: text.clone(),
            requested_at: chrono::Utc::now().timestamp_millis(),
        };
        self.services
            .store
            .call(move |s| s.open_decision(&record))
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        // Parked before the prompt exists, so the fastest click finds it.
        let waiting = self.services.parked.park(&id);
        let signature = sign::sign(&self.services.decision_key, &id);
        let url = format!(
            "{}{}",
            self.services.callback_url,
            crate::callbacks::DECISION_ROUTE
        );
        let post = NewPost {
            channel_id: self.start.channel_id.clone(),
            message: text,
            props: json!({
                ROLE_PROP: "prompt",
                TURN_PROP: self.id,
                "attachments": prompt::attachments(&url, &id, &signature),
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
            ..NewPost::default()
        };
        // The status post says the turn waits before the prompt appears, so
        // the channel reads in the order things happened (§8.1).
        let since = chrono::Utc::now().with_timezone(&self.services.timezone);
        let head = format!(
            "🔐 _waiting on a decision since {}_",
            since.format("%H:%M %Z")
        );
        let limit = self.services.post_limit.get();
        self.status
            .set_head(&self.seat.rest, &self.services.store, Some(head), limit)
            .await;
        let posted = self
            .seat
            .rest
            .create_post(&post)
            .await
            .map_err(|e| Exit::Delivery(e.to_string()))?;
        let (decision, post_id) = (id.clone(), posted.id.clone());
        let _ = self
            .services
            .store
            .call(move |s| s.set_prompt_post(&decision, &post_id))
            .await;
        self.services.controls.parked(&self.id, true);
        let mut halted = self.halted.clone();
        let decided = tokio::select! {
            decided = waiting => decided
                .map_err(|_| Exit::Store("the wait for a decision was dropped".into()))?,
            () = stopped(&mut halted) => {
                let halt = self.halted_now().unwrap_or(Halt { by: String::new(), kill: false });
                self.cancel_prompt(&id, &halt).await;
                return Err(Exit::Halted(halt));
            }
        };
        self.services.controls.parked(&self.id, false);
        self.status
            .set_head(&self.seat.rest, &self.services.store, None, limit)
            .await;
        self.last_decision = Some(id);
        Ok(decided)
    }

    async fn record_result(&mut self, executed: Executed, limit: usize) -> Option<Exit> {
        let mut exit = None;
        if executed.ran() {
            self.rejections.tool_ran();
            self.services.controls.called(&self.id);
        }
        let now = chrono::Utc::now().timestamp_millis();
        let tool_name = executed
            .tool
            .as_ref()
            .map_or_else(|| executed.call.name.clone(), ToString::to_string);
        let mut disposition = executed.disposition();
        let (content, replay) = match &executed.outcome {
            Outcome::Ran {
                text,
                replay_line,
                content_key,
                ..
            } => {
                let tool = executed
                    .tool
                    .clone()
                    .unwrap_or_else(|| crate::tools::ToolRef::new("unknown", "tool"));
                let key = content_key.as_deref().unwrap_or(text);
                // A byte-identical result the turn still shows costs one
                // line naming it; one since replaced is shown again (§3.8).
                match self.repeats.record(&executed.call.id, &tool, key) {
                    Repeat::StillShown { line, .. } => (line, replay_line.clone()),
                    repeat => {
                        let view = self.views.enter(
                            &tool_name,
                            text,
                            now,
                            self.view_limit(),
                            self.services.timezone,
                        );
                        if view.reference.is_some() {
                            disposition = Disposition::Came(format!(
                                "shown {} of {} characters; the rest by reference",
                                view.shown, view.whole
                            ));
                        }
                        let text = match repeat {
                            Repeat::ShownAgain { earlier_call } => format!(
                                "{}\n[The content is identical to the result of call {earlier_call}, since replaced.]",
                                view.text
                            ),
                            _ => view.text,
                        };
                        (text, replay_line.clone())
                    }
                }
            }
            Outcome::Refused { text, .. } | Outcome::Failed { text, .. } => (text.clone(), None),
            Outcome::Denied { by, reason } => (
                match reason {
                    Some(reason) => {
                        format!("The call did not run: @{by} denied it, and said: “{reason}”")
                    }
                    None => format!("The call did not run: @{by} denied it."),
                },
                None,
            ),
            Outcome::NotRun { why } => (format!("The call was {why}."), None),
            Outcome::Cancelled { by } => (
                format!("The call did not run: @{by} stopped the turn."),
                None,
            ),
            Outcome::NotHeld { text } => {
                self.attempts += 1;
                if self.rejections.rejected() == AfterRejection::EndTurn {
                    exit = Some(Exit::Rejected);
                }
                (text.clone(), None)
            }
            Outcome::Unparseable => {
                if self.unparseable_forgiven {
                    exit = Some(Exit::MalformedCall);
                }
                self.unparseable_forgiven = true;
                (
                    "The call did not run: its arguments were not valid JSON. Call it again with a JSON object as its arguments.".to_string(),
                    None,
                )
            }
        };
        let full = match &executed.outcome {
            Outcome::Ran { text, .. } => text.clone(),
            _ => content.clone(),
        };
        self.trace(
            TraceKind::Result,
            Some(executed.call.id.clone()),
            Some(tool_name.clone()),
            Some(executed.call.arguments.clone()),
            Some(full),
            Some(
                serde_json::to_string(&ResultDetail {
                    replay_line: replay,
                })
                .unwrap_or_default(),
            ),
        )
        .await;
        if executed.ran() {
            let id = self.id.clone();
            let _ = self.services.store.call(move |s| s.add_action(&id)).await;
        }
        self.own.push(Message::ToolResult {
            call_id: executed.call.id.clone(),
            name: executed.call.name.clone(),
            content,
        });
        let line = CallLine {
            summary: executed.summary.clone(),
            disposition,
        };
        self.status
            .call(&self.seat.rest, &self.services.store, &line, limit)
            .await;
        exit
    }

    /// How long a result may be before it enters as a view: a fixed share
    /// of the ceiling, at most a fixed size (§3.8).
    fn view_limit(&self) -> usize {
        let share = (self.seat.agent.limits.turn_ceiling_tokens as usize) * 4 / 10;
        share.clamp(1_000, VIEW_MAX_CHARS)
    }

    /// Before each completion: over the ceiling, results the model already
    /// read are replaced by one-line stand-ins with their reference, largest
    /// first, until the context is well under it; a turn still over ends
    /// (§3.8).
    fn relieve_pressure(&mut self) -> Option<Exit> {
        let ceiling = u64::from(self.seat.agent.limits.turn_ceiling_tokens);
        let used = |turn: &Self| -> u64 {
            estimate(&turn.seat.system_prompt)
                + turn
                    .window
                    .iter()
                    .chain(turn.own.iter())
                    .map(message_cost)
                    .sum::<u64>()
        };
        if used(self) <= ceiling {
            return None;
        }
        let target = ceiling * 7 / 10;
        let mut order: Vec<(usize, u64)> = self
            .own
            .iter()
            .enumerate()
            .filter_map(|(i, m)| match m {
                Message::ToolResult { content, .. } if !content.starts_with("[Stand-in") => {
                    Some((i, estimate(content)))
                }
                _ => None,
            })
            .collect();
        order.sort_by_key(|entry| std::cmp::Reverse(entry.1));
        let now = chrono::Utc::now().timestamp_millis();
        for (index, _) in order {
            if used(self) <= target {
                break;
            }
            if let Message::ToolResult {
                name,
                content,
                call_id,
            } = &self.own[index]
            {
                self.repeats.replaced(call_id);
                let reference = self.views.keep(name, content, now);
                let size = content.chars().count();
                let stand_in = format!(
                    "[Stand-in: a result of {name}, {size} characters, already read. results::read with reference \"{reference}\" reads it again.]"
                );
                if let Message::ToolResult { content, .. } = &mut self.own[index] {
                    *content = stand_in;
                }
            }
        }
        (used(self) > ceiling).then_some(Exit::CeilingExceeded)
    }

    async fn record_completion(&self, completion: &Completion) {
        self.add_usage(&completion.usage).await;
        let detail = CompletionDetail {
            calls: completion
                .tool_calls
                .iter()
                .map(|c| RecordedCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
        };
        let mut detail = serde_json::to_value(&detail).unwrap_or_default();
        detail["usage"] = json!({
            "prompt_tokens": completion.usage.prompt_tokens,
            "cached_prompt_tokens": completion.usage.cached_prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "estimated": completion.usage_estimated,
        });
        detail["upstream"] = json!(completion.upstream);
        detail["finish"] = json!(format!("{:?}", completion.finish));
        self.trace(
            TraceKind::Completion,
            None,
            None,
            None,
            Some(completion.text.clone()),
            Some(detail.to_string()),
        )
        .await;
    }

    async fn add_usage(&self, usage: &crate::inference::Usage) {
        let (id, usage) = (self.id.clone(), *usage);
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.add_usage(&id, &usage))
            .await
        {
            warn!(%error, "could not record the turn's usage");
        }
    }

    async fn trace(
        &self,
        kind: TraceKind,
        call_id: Option<String>,
        tool: Option<String>,
        arguments: Option<String>,
        content: Option<String>,
        detail: Option<String>,
    ) {
        let event = TurnEvent {
            turn_id: self.id.clone(),
            seq: 0,
            at: chrono::Utc::now().timestamp_millis(),
            kind,
            call_id,
            tool,
            arguments,
            content,
            detail,
        };
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.append_event(&event))
            .await
        {
            warn!(%error, "could not record the turn's trace");
        }
    }

    /// Records the end, posts the notice an exit owes, closes the status
    /// post, and consumes or returns what the turn took (§5.2).
    async fn end(&mut self, exit: &Exit) -> bool {
        let _ = self.typing.send(false);
        self.start.fold.close();
        let limit = self.services.post_limit.get();
        let ending = match exit {
            Exit::Completed => Ending::Completed,
            Exit::Denied { by, .. } => Ending::EndedBy {
                person: by.clone(),
                how: "Denied".into(),
            },
            Exit::Halted(halt) => Ending::EndedBy {
                person: halt.by.clone(),
                how: if halt.kill { "Killed" } else { "Stopped" }.into(),
            },
            other => Ending::Other(format!("Ended: {}", other.kind().replace('_', " "))),
        };
        self.status
            .close(&self.seat.rest, &self.services.store, &ending, limit)
            .await;
        if let Some(notice) = exit.notice() {
            let post = NewPost {
                channel_id: self.start.channel_id.clone(),
                message: notice,
                props: json!({ROLE_PROP: "notice", TURN_PROP: self.id})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
                ..NewPost::default()
            };
            if let Err(error) = self.seat.rest.create_post(&post).await {
                warn!(%error, turn = %self.id, "could not post the turn's notice");
            }
        }
        let progress = exit.allows_progress();
        let end = TurnEnd {
            exit_kind: exit.kind().to_string(),
            ended_at: chrono::Utc::now().timestamp_millis(),
            ended_by: match exit {
                Exit::Denied { by, .. }
                | Exit::BudgetDenied { by }
                | Exit::Halted(Halt { by, .. }) => Some(by.clone()),
                _ => None,
            },
            context_reach_post_id: self.window_reach.clone(),
        };
        let id = self.id.clone();
        let (agent, channel) = (self.start.agent.clone(), self.start.channel_id.clone());
        let started: Vec<(String, Millis)> = self
            .start
            .answers
            .iter()
            .map(|(p, _)| (p.id.clone(), p.created_at))
            .collect();
        let recorded = self
            .services
            .store
            .call(move |s| {
                s.end_turn(&id, &end)?;
                if progress {
                    s.consume_taken(&id)
                } else {
                    // A failure returns what it took and queues the post that
                    // started it, so nothing it answered is lost (§5.2).
                    s.return_taken(&id)?;
                    for (post, at) in &started {
                        s.enqueue(&agent, &channel, post, *at)?;
                    }
                    Ok(())
                }
            })
            .await;
        if let Err(error) = recorded {
            warn!(%error, turn = %self.id, "could not record the turn's end");
        }
        self.services.controls.release(&self.id);
        info!(turn = %self.id, exit = exit.kind(), "turn ended");
        progress
    }
}

/// Resolves when a person kills the turn; never when the turn's control is
/// released (the turn is ending anyway).
async fn killed(halted: &mut watch::Receiver<Option<Halt>>) {
    if halted
        .wait_for(|h| h.as_ref().is_some_and(|h| h.kill))
        .await
        .is_err()
    {
        std::future::pending::<()>().await;
    }
}

/// Resolves when a person stops or kills the turn.
async fn stopped(halted: &mut watch::Receiver<Option<Halt>>) {
    if halted.wait_for(Option::is_some).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The next steer, where the turn listens for them.
async fn next_steer(
    steers: &mut Option<tokio::sync::mpsc::UnboundedReceiver<Steer>>,
) -> Option<Steer> {
    match steers {
        Some(steers) => steers.recv().await,
        None => std::future::pending().await,
    }
}
