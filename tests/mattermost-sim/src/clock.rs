//! The simulator's clock: wall time plus an offset tests can move forward, so
//! trigger-id expiry and same-millisecond posts are produced on demand.

use std::sync::atomic::{AtomicI64, Ordering};

#[derive(Debug, Default)]
pub struct Clock {
    offset_ms: AtomicI64,
    /// When set, `now` answers this fixed time (plus the offset).
    frozen_at: AtomicI64,
}

impl Clock {
    /// Milliseconds since the Unix epoch.
    pub fn now(&self) -> i64 {
        let frozen = self.frozen_at.load(Ordering::SeqCst);
        let base = if frozen > 0 {
            frozen
        } else {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
                .unwrap_or_default()
        };
        base + self.offset_ms.load(Ordering::SeqCst)
    }

    pub fn advance(&self, ms: i64) {
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
    }

    /// Holds the clock at its current reading until [`Clock::thaw`].
    pub fn freeze(&self) {
        let now = self.now() - self.offset_ms.load(Ordering::SeqCst);
        self.frozen_at.store(now, Ordering::SeqCst);
    }

    pub fn thaw(&self) {
        self.frozen_at.store(0, Ordering::SeqCst);
    }
}
