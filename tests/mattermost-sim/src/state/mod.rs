//! The simulator's shared state. `data` is behind a plain mutex that is never
//! held across an await: a click's integration may call back into the server
//! (to open a dialog or patch the post) while the click is still in flight.

mod data;
pub mod settings;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use mattermost_wire::model::{OpenDialogRequest, Post};
use serde::Serialize;

pub use data::{Data, StoredFile, TokenRecord, UserRecord, pair};

use crate::clock::Clock;
use crate::hub::Hub;

/// A trigger id's owner and issue time (contract §C.4).
#[derive(Debug, Clone)]
pub struct Trigger {
    pub user_id: String,
    pub issued_at: i64,
}

/// One request the server made to an integration, as tests read it back.
#[derive(Debug, Clone, Serialize)]
pub struct OutgoingRecord {
    pub kind: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub status: Option<u16>,
    pub response: String,
    pub error: Option<String>,
}

/// A fault a test injected into REST handling.
#[derive(Debug, Clone, serde::Deserialize, Serialize)]
pub struct Fault {
    /// `GET`, `POST`, … or `*`.
    pub method: String,
    /// The path prefix it applies to, e.g. `/api/v4/posts`.
    pub path_prefix: String,
    /// Delay before handling.
    #[serde(default)]
    pub delay_ms: u64,
    /// Answer with this status instead of handling.
    #[serde(default)]
    pub status: Option<u16>,
    /// How many requests it applies to; absent, every one.
    #[serde(default)]
    pub times: Option<u32>,
}

/// What lives only as long as the process.
#[derive(Debug, Default)]
pub struct Transient {
    pub triggers: HashMap<String, Trigger>,
    /// `pending_post_id` → (post id, time), for safe retries.
    pub pending_posts: HashMap<String, (String, i64)>,
    /// Ephemeral posts each user received, oldest first.
    pub ephemeral: HashMap<String, Vec<Post>>,
    /// Dialogs opened for each user, oldest first.
    pub dialogs: HashMap<String, Vec<OpenDialogRequest>>,
    pub outgoing: Vec<OutgoingRecord>,
    pub faults: Vec<Fault>,
    /// Every REST request served, as `METHOD /api/v4/path`, oldest first:
    /// tests prove what a client did not ask.
    pub requests: Vec<String>,
    /// Each slash command execution's `response_url`, by hook id.
    pub command_hooks: HashMap<String, crate::api::command_hooks::CommandHook>,
}

pub struct Sim {
    data: Mutex<Data>,
    pub transient: Mutex<Transient>,
    pub hub: Hub,
    pub clock: Clock,
    pub http: reqwest::Client,
    state_file: Option<PathBuf>,
    version: AtomicU64,
    changed: tokio::sync::Notify,
}

pub type AppState = Arc<Sim>;

impl Sim {
    pub fn new(data: Data, state_file: Option<PathBuf>) -> Self {
        Self {
            data: Mutex::new(data),
            transient: Mutex::new(Transient::default()),
            hub: Hub::default(),
            clock: Clock::default(),
            // No proxies: an integration is reached directly, as Mattermost does.
            http: reqwest::Client::builder()
                .no_proxy()
                .build()
                .unwrap_or_else(|_| reqwest::Client::new()),
            state_file,
            version: AtomicU64::new(0),
            changed: tokio::sync::Notify::new(),
        }
    }

    /// The data, locked. A poisoned lock (a panicking handler) is recovered:
    /// the data itself is never left half-written by a panic in a reader.
    pub fn data(&self) -> MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn transient(&self) -> MutexGuard<'_, Transient> {
        self.transient.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records that something changed: persists the data where a state file
    /// is set, and wakes anyone waiting on a condition.
    pub fn touch(&self) {
        if let Some(path) = &self.state_file {
            let snapshot = serde_json::to_vec_pretty(&*self.data());
            match snapshot {
                Ok(bytes) => {
                    let tmp = path.with_extension("tmp");
                    if let Err(error) =
                        std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path))
                    {
                        tracing::warn!(%error, path = %path.display(), "could not save the state");
                    }
                }
                Err(error) => tracing::warn!(%error, "could not serialise the state"),
            }
        }
        self.version.fetch_add(1, Ordering::SeqCst);
        self.changed.notify_waiters();
    }

    /// Waits until `condition` holds or `timeout` passes.
    pub async fn wait_for<T>(
        &self,
        timeout: std::time::Duration,
        mut condition: impl FnMut(&Sim) -> Option<T>,
    ) -> Option<T> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            if let Some(found) = condition(self) {
                return Some(found);
            }
            // A short tick also catches changes that do not touch (transient ones).
            let tick = tokio::time::sleep(std::time::Duration::from_millis(25));
            tokio::select! {
                _ = notified => {}
                _ = tick => {}
                _ = tokio::time::sleep_until(deadline) => return condition(self),
            }
        }
    }
}

/// Loads a state file, or starts empty where there is none yet.
pub fn load_state(path: &std::path::Path) -> anyhow::Result<Data> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(serde_json::from_slice(&bytes)?),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Data::default()),
        Err(error) => Err(error.into()),
    }
}
