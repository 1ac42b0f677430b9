//! What the store adds to a log line for `collegium audit show`: who
//! approved the call, when and where, and the arguments the model gave. The
//! store is opened read-only (`Store::open_read_only`): a review changes
//! nothing it reads and may run beside the live daemon.

use std::collections::HashMap;
use std::path::Path;

use collegium_worker_kit::audit::{Line, digest};

use crate::store::{Millis, ObservedChannel, Store, StoreError, TraceKind, TurnEvent};

/// The schema the lookups read: `decisions.choices` arrived in version 6.
const NEEDED_VERSION: u32 = 6;

/// The approving decision a line names, as the store recorded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    pub id: String,
    /// `approval`, `extension` or `ask`.
    pub kind: String,
    /// None while it waits on a person.
    pub outcome: Option<String>,
    pub decided_by: Option<String>,
    pub requested_at: Millis,
    pub decided_at: Option<Millis>,
    pub channel_id: String,
    /// None where the store never observed the channel.
    pub channel: Option<ObservedChannel>,
    pub prompt_post_id: Option<String>,
}

/// What is known of a line's approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalLookup {
    /// The tool does not gate: the line names no decision.
    Ungated,
    /// No `--store` was given to look the decision up in.
    StoreNotGiven,
    /// The line names a decision the store does not hold.
    NotInStore,
    Found(Box<Approval>),
}

impl ApprovalLookup {
    /// Its name in `--json`'s `approval_lookup`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ungated => "ungated",
            Self::StoreNotGiven => "store_not_given",
            Self::NotInStore => "not_in_store",
            Self::Found(_) => "found",
        }
    }
}

/// What is known of a line's arguments: the log keeps only their digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgumentsLookup {
    StoreNotGiven,
    /// The turn's trace holds no result for the call: still running, or
    /// cleared from the store (§8.5).
    NotInStore,
    Found {
        /// As the model wrote them.
        text: String,
        /// Whether they hash to the line's `arguments_sha256` (the worker
        /// hashed them as dispatch serialised them).
        matches: bool,
    },
}

impl ArgumentsLookup {
    /// Its name in `--json`'s `arguments_lookup`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::StoreNotGiven => "store_not_given",
            Self::NotInStore => "not_in_store",
            Self::Found { .. } => "found",
        }
    }
}

/// A read-only store, and the turn traces already read from it.
pub struct Join {
    store: Store,
    traces: HashMap<String, Vec<TurnEvent>>,
}

impl Join {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            store: Store::open_read_only(path, NEEDED_VERSION)?,
            traces: HashMap::new(),
        })
    }

    /// The decision `line` names, with its channel.
    pub fn approval(&self, line: &Line) -> Result<ApprovalLookup, StoreError> {
        let id = &line.record.decision;
        if id.is_empty() {
            return Ok(ApprovalLookup::Ungated);
        }
        let Some(record) = self.store.decision(id)? else {
            return Ok(ApprovalLookup::NotInStore);
        };
        let (requested_at, decided_at) = self.store.decision_times(id)?.unwrap_or((0, None));
        let channel = self.store.channel(&record.channel_id)?;
        Ok(ApprovalLookup::Found(Box::new(Approval {
            id: record.id,
            kind: record.kind,
            outcome: record.outcome,
            decided_by: record.decided_by,
            requested_at,
            decided_at,
            channel_id: record.channel_id,
            channel,
            prompt_post_id: record.prompt_post_id,
        })))
    }

    /// The arguments of `line`'s call, from its turn's trace. The worker's
    /// call id is the turn's id, a slash, and the provider's call id, which
    /// is what the trace records.
    pub fn arguments(&mut self, line: &Line) -> Result<ArgumentsLookup, StoreError> {
        let turn = &line.record.turn;
        if !self.traces.contains_key(turn) {
            let events = self.store.turn_events(turn)?;
            self.traces.insert(turn.clone(), events);
        }
        let call = &line.record.call;
        let provider_call = call
            .strip_prefix(turn.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            .unwrap_or(call);
        let found = self.traces.get(turn).and_then(|events| {
            events.iter().find_map(|e| {
                let its = matches!(e.kind, TraceKind::Call | TraceKind::Result)
                    && e.call_id.as_deref() == Some(provider_call);
                its.then(|| e.arguments.clone()).flatten()
            })
        });
        Ok(match found {
            None => ArgumentsLookup::NotInStore,
            Some(text) => {
                // Dispatch hashes the parsed arguments serialised again
                // (`turns::calls`), so the same is done here.
                let matches = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|value| serde_json::to_vec(&value).ok())
                    .is_some_and(|bytes| digest(&bytes) == line.record.arguments_sha256);
                ArgumentsLookup::Found { text, matches }
            }
        })
    }
}
