//! The page's requests in flight, from CDP's network events: what an action
//! waits on before the page counts as redrawn (§3.4: an action is captured
//! once the page has redrawn from the script requests it started).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::network::{
    EventLoadingFailed, EventLoadingFinished, EventRequestWillBeSent, ResourceType,
};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use futures::StreamExt;
use tokio::task::JoinHandle;
use tokio::time::Instant;

#[derive(Debug)]
struct State {
    in_flight: HashSet<String>,
    /// Main-frame document requests: id to address.
    documents: HashMap<String, String>,
    /// Main-frame document loads that failed since the last reset: address
    /// and Chromium's error.
    failed: Vec<(String, String)>,
    changed: Instant,
}

#[derive(Clone)]
pub struct Traffic {
    state: Arc<Mutex<State>>,
}

impl Traffic {
    pub async fn start(
        page: &Page,
        main: FrameId,
    ) -> Result<(Self, JoinHandle<()>), chromiumoxide::error::CdpError> {
        let mut sent = page.event_listener::<EventRequestWillBeSent>().await?;
        let mut finished = page.event_listener::<EventLoadingFinished>().await?;
        let mut failed = page.event_listener::<EventLoadingFailed>().await?;
        let state = Arc::new(Mutex::new(State {
            in_flight: HashSet::new(),
            documents: HashMap::new(),
            failed: Vec::new(),
            changed: Instant::now(),
        }));
        let this = Self {
            state: state.clone(),
        };
        let task = tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(e) = sent.next() => {
                        let mut s = lock(&state);
                        let id = e.request_id.inner().clone();
                        if e.r#type == Some(ResourceType::Document) && e.frame_id.as_ref() == Some(&main) {
                            s.documents.insert(id.clone(), e.request.url.clone());
                        }
                        s.in_flight.insert(id);
                        s.changed = Instant::now();
                    }
                    Some(e) = finished.next() => {
                        let mut s = lock(&state);
                        s.in_flight.remove(e.request_id.inner());
                        s.changed = Instant::now();
                    }
                    Some(e) = failed.next() => {
                        let mut s = lock(&state);
                        let id = e.request_id.inner();
                        s.in_flight.remove(id);
                        if let Some(url) = s.documents.get(id).cloned() {
                            s.failed.push((url, e.error_text.clone()));
                        }
                        s.changed = Instant::now();
                    }
                    else => break,
                }
            }
        });
        Ok((this, task))
    }

    /// Forgets what earlier actions saw; requests still in flight stay.
    pub fn reset(&self) {
        let mut s = lock(&self.state);
        s.failed.clear();
        s.changed = Instant::now();
    }

    /// Since when nothing has been in flight, if nothing is.
    pub fn quiet_since(&self) -> Option<Instant> {
        let s = lock(&self.state);
        s.in_flight.is_empty().then_some(s.changed)
    }

    /// Main-frame document loads that failed since the last reset.
    pub fn failed_documents(&self) -> Vec<(String, String)> {
        lock(&self.state).failed.clone()
    }
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // A panic while holding this lock leaves only counters behind.
    state
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
