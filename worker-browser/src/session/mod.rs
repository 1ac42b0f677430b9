//! Browser sessions (§3.4 Browsing): one per turn, opened by the turn's
//! first page action, each its own Chromium holding a fresh incognito
//! context, disposed when the turn ends (kill included), when the worker
//! stops, or after a fallback idle time. At most the deployment's live cap
//! are open at once; a turn that would open one past it is refused.

mod action;
mod chromium;
mod config;
mod devtools;
mod intercept;
mod live;
mod net_error;
mod refusal;
mod settle;
mod tabs;
mod traffic;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::time::Instant;

pub use action::{Action, Outcome};
pub use chromium::{group_members, sandboxed};
pub use config::{CertificateCheck, RefusalFor, SessionsConfig};
pub use refusal::Holds;

use chromium::Group;
use live::{Ended, Live};
use refusal::{Refusal, naming};

/// How often idle sessions are looked for.
const REAP_EVERY: Duration = Duration::from_secs(30);
/// Beyond the settle wait, how long an action may take before its browser
/// counts as hung and its session is ended.
const HANG_MARGIN: Duration = Duration::from_secs(40);

/// A turn's place among the live sessions, held from its first page action
/// to its end.
struct Slot {
    /// The session's browser, stoppable while an action holds the session.
    group: Mutex<Option<Group>>,
    live: tokio::sync::Mutex<Option<Live>>,
    ended: AtomicBool,
    used: Mutex<Instant>,
}

struct Inner {
    config: SessionsConfig,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
}

/// The worker's browser sessions.
#[derive(Clone)]
pub struct Sessions {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The maps and stamps behind these locks stay whole across a panic.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sessions {
    /// Sessions under `config`; starts the idle reaper on the current runtime.
    pub fn new(config: SessionsConfig) -> Self {
        let inner = Arc::new(Inner {
            config,
            slots: Mutex::new(HashMap::new()),
        });
        tokio::spawn(reap(Arc::downgrade(&inner)));
        Self { inner }
    }

    /// Whether Chromium runs with its own sandbox, for the handshake.
    pub fn sandboxed(&self) -> bool {
        sandboxed()
    }

    /// How many sessions are live.
    pub fn live(&self) -> usize {
        lock(&self.inner.slots).len()
    }

    /// The process id of the Chromium serving `turn`, if one runs.
    pub fn browser_pid(&self, turn: &str) -> Option<u32> {
        let slot = lock(&self.inner.slots).get(turn).cloned()?;
        lock(&slot.group).as_ref().map(Group::pid)
    }

    /// Runs a page action in `turn`'s session, opening it on the turn's
    /// first navigation. Page actions of one turn run one at a time.
    pub async fn act(&self, turn: &str, action: Action, holds: Holds<'_>) -> Outcome {
        let config = &self.inner.config;
        // An address the browser would not open takes no session.
        if let Action::Navigate { url } = &action
            && let Err(refusal) = live::openable(url)
        {
            return Outcome::Refused(refusal.to_string());
        }
        let slot = match self.slot(turn, &action, holds) {
            Ok(slot) => slot,
            Err(outcome) => return outcome,
        };
        *lock(&slot.used) = Instant::now();
        let mut live = slot.live.lock().await;
        if slot.ended.load(Ordering::SeqCst) {
            return Outcome::Refused(
                Refusal::BrowserStopped {
                    reason: "this turn's session was ended".into(),
                }
                .to_string(),
            );
        }
        if live.is_none() {
            let Action::Navigate { .. } = action else {
                return Outcome::Refused(
                    Refusal::NoPage {
                        reference: action.reference().unwrap_or_default().to_string(),
                    }
                    .to_string(),
                );
            };
            match Live::open(config).await {
                Ok(opened) => {
                    *lock(&slot.group) = Some(opened.group());
                    *live = Some(opened);
                }
                Err(error) => {
                    drop(live);
                    self.forget(turn, &slot);
                    return Outcome::Failed(format!("The browser could not be started: {error}."));
                }
            }
        }
        let Some(session) = live.as_mut() else {
            return Outcome::Failed("The browser session was lost before the action.".into());
        };
        let limit = config.settle_wait + HANG_MARGIN;
        let result = tokio::time::timeout(limit, session.act(&action, holds, config)).await;
        let outcome = match result {
            Ok(Ok(outcome)) => return finish(&slot, live, outcome).await,
            Ok(Err(Ended(reason))) => reason,
            Err(_) => format!("it did not answer within {}s", limit.as_secs()),
        };
        // The browser stopped or hung: it ends only this session, and the
        // turn's next web::navigate starts a fresh one.
        if let Some(stopped) = live.take() {
            stopped.close().await;
        }
        *lock(&slot.group) = None;
        Outcome::Refused(Refusal::BrowserStopped { reason: outcome }.to_string())
    }

    /// The slot `turn` acts in, opened for a navigation within the cap.
    fn slot(&self, turn: &str, action: &Action, holds: Holds<'_>) -> Result<Arc<Slot>, Outcome> {
        let mut slots = lock(&self.inner.slots);
        if let Some(slot) = slots.get(turn) {
            return Ok(slot.clone());
        }
        if !matches!(action, Action::Navigate { .. }) {
            return Err(Outcome::Refused(
                Refusal::NoPage {
                    reference: action.reference().unwrap_or_default().to_string(),
                }
                .to_string(),
            ));
        }
        let cap = self.inner.config.live_cap;
        if slots.len() >= cap {
            return Err(Outcome::Refused(
                Refusal::LiveCap {
                    cap,
                    fetch: naming(
                        holds,
                        "web::fetch",
                        "web::fetch needs none: it reads a page with one plain request, without a browser.",
                    ),
                }
                .to_string(),
            ));
        }
        let slot = Arc::new(Slot {
            group: Mutex::new(None),
            live: tokio::sync::Mutex::new(None),
            ended: AtomicBool::new(false),
            used: Mutex::new(Instant::now()),
        });
        slots.insert(turn.to_string(), slot.clone());
        Ok(slot)
    }

    fn forget(&self, turn: &str, slot: &Arc<Slot>) {
        let mut slots = lock(&self.inner.slots);
        if slots.get(turn).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            slots.remove(turn);
        }
    }

    /// Ends `turn`'s session: its browser and every process it started are
    /// gone when this returns. The daemon calls it at every turn's end, a
    /// killed turn's included; a turn with no session is no error.
    pub async fn end(&self, turn: &str) -> bool {
        let slot = lock(&self.inner.slots).remove(turn);
        match slot {
            Some(slot) => {
                end_slot(&slot).await;
                true
            }
            None => false,
        }
    }

    /// Ends every session: the worker is stopping.
    pub async fn shutdown(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.inner.slots).drain().map(|(_, s)| s).collect();
        for slot in slots {
            end_slot(&slot).await;
        }
    }
}

async fn finish(
    slot: &Slot,
    mut live: tokio::sync::MutexGuard<'_, Option<Live>>,
    outcome: Outcome,
) -> Outcome {
    *lock(&slot.used) = Instant::now();
    // The turn ended while the action ran: its browser is stopped already.
    if slot.ended.load(Ordering::SeqCst)
        && let Some(stopped) = live.take()
    {
        stopped.close().await;
    }
    outcome
}

async fn end_slot(slot: &Slot) {
    slot.ended.store(true, Ordering::SeqCst);
    let group = lock(&slot.group).take();
    if let Some(group) = group {
        group.kill().await;
    }
    // An action still running finds its browser gone and closes it itself.
    if let Ok(mut live) = slot.live.try_lock()
        && let Some(stopped) = live.take()
    {
        stopped.close().await;
    }
}

/// Ends sessions no action has used for the idle time (§3.4: sessions are
/// disposed even should a turn's end never be reported).
async fn reap(inner: Weak<Inner>) {
    loop {
        let every = match inner.upgrade() {
            Some(inner) => REAP_EVERY.min(inner.config.idle_timeout / 2),
            None => return,
        };
        tokio::time::sleep(every.max(Duration::from_millis(100))).await;
        let Some(inner) = inner.upgrade() else { return };
        let idle = inner.config.idle_timeout;
        let stale: Vec<Arc<Slot>> = {
            let mut slots = lock(&inner.slots);
            let turns: Vec<String> = slots
                .iter()
                .filter(|(_, s)| lock(&s.used).elapsed() >= idle && s.live.try_lock().is_ok())
                .map(|(t, _)| t.clone())
                .collect();
            turns.iter().filter_map(|t| slots.remove(t)).collect()
        };
        for slot in stale {
            end_slot(&slot).await;
        }
    }
}
