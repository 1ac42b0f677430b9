//! The refusals the proxy made lately, kept so the worker can report a
//! refused page load as the typed refusal naming the address it stopped
//! (§3.4 "A load it stops is the typed refusal naming the address it
//! stopped, not a page that failed to load").

use std::collections::VecDeque;
use std::sync::Mutex;

use collegium_web_scope::Refusal;
use url::Url;

/// How many refusals are kept; the oldest go first.
pub const REFUSALS_KEPT: usize = 512;

/// One refused request or tunnel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusalRecord {
    /// The absolute URL of a refused request; `None` for a tunnel.
    pub url: Option<String>,
    /// The host asked for, lower-case, without a trailing dot.
    pub host: String,
    /// The port asked for.
    pub port: u16,
    /// Why.
    pub refusal: Refusal,
}

/// A bounded record of the proxy's refusals.
#[derive(Debug, Default)]
pub struct ProxyLog {
    refusals: Mutex<VecDeque<RefusalRecord>>,
}

impl ProxyLog {
    pub(crate) fn record(&self, record: RefusalRecord) {
        let mut refusals = self.lock();
        if refusals.len() == REFUSALS_KEPT {
            refusals.pop_front();
        }
        refusals.push_back(record);
    }

    /// The latest refusal of this URL: the request itself when it went
    /// as an absolute-form request, else the tunnel to its host and port
    /// (how an https load reaches the proxy).
    pub fn refusal_for(&self, url: &Url) -> Option<Refusal> {
        let host = normalise_host(url.host_str()?);
        let port = url.port_or_known_default()?;
        let asked = url.as_str();
        let refusals = self.lock();
        refusals
            .iter()
            .rev()
            .find(|r| r.url.as_deref() == Some(asked))
            .or_else(|| {
                refusals
                    .iter()
                    .rev()
                    .find(|r| r.host == host && r.port == port)
            })
            .map(|r| r.refusal.clone())
    }

    /// Every refusal kept, oldest first.
    pub fn refusals(&self) -> Vec<RefusalRecord> {
        self.lock().iter().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<RefusalRecord>> {
        // A panic while holding this lock leaves a valid queue behind.
        self.refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A host as the record keys it: lower-case, no brackets, no trailing dot.
pub(crate) fn normalise_host(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}
