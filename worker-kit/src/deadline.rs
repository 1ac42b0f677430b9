//! The time a worker keeps back from the daemon's deadline for a call: what
//! it runs is stopped early enough that its signals, the drain of its output
//! and the answer all land before the daemon gives up on the call (§7.1). The
//! configuration check holds an agent's own deadline under the daemon's by
//! the same margin, so neither side cuts the other short in silence.

use std::time::Duration;

/// Three signals a second apart, the output drained, and the answer's trip.
pub const STOP_MARGIN: Duration = Duration::from_secs(6);
