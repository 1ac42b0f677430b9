//! The server's post size limit, read at runtime (§6.2).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tracing::{info, warn};

use crate::chat::Rest;

/// The server's post size limit, in characters, read at runtime and re-read
/// (§6.2): a limit cached forever would miss a server that changed it.
#[derive(Clone)]
pub struct PostLimit {
    chars: Arc<AtomicUsize>,
    rest: Rest,
}

/// What the limit is taken to be until the server says (contract §A.11).
pub const DEFAULT_POST_LIMIT: usize = 16_383;

/// How often the limit is read again.
pub const POST_LIMIT_REREAD: Duration = Duration::from_secs(600);

impl PostLimit {
    pub fn new(rest: Rest) -> Self {
        Self {
            chars: Arc::new(AtomicUsize::new(DEFAULT_POST_LIMIT)),
            rest,
        }
    }

    pub fn get(&self) -> usize {
        self.chars.load(Ordering::Relaxed)
    }

    /// The limit as the server states it now, for a post cut to fit it: a
    /// limit an administrator lowered since the last read would have the
    /// post refused whole (§3.7, §6.2).
    pub async fn read_now(&self) -> usize {
        self.refresh().await;
        self.get()
    }

    /// Reads the limit from the server; keeps the last one when it cannot.
    pub async fn refresh(&self) {
        match self.rest.max_post_size().await {
            Ok(Some(limit)) => {
                let before = self.chars.swap(limit, Ordering::Relaxed);
                if before != limit {
                    info!(limit, "the server's post size limit");
                }
            }
            Ok(None) => warn!("the server's client configuration names no MaxPostSize"),
            Err(error) => warn!(%error, "could not read the server's post size limit"),
        }
    }
}
