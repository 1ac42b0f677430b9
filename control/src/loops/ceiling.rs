//! The hourly ceiling (§7.4): turn starts are counted from the store over
//! the trailing hour (from the last resume, which grants a fresh
//! allowance); a breach raises the global halt (`halt.rs`).

use super::halt::{self, GlobalHalt};
use crate::services::Services;

/// Raises the halt for a breach; does nothing when a halt already stands.
pub async fn raise(services: &Services, count: u64) {
    let ceiling = services.limits.hourly_turn_ceiling;
    let reason =
        format!("{count} turns would have started within the hour; the ceiling is {ceiling}");
    let notice = format!(
        "⛔ **Every agent is halted.** {reason} (§7.4). Pending approvals are invalidated, and \
         nothing queued will run. A person who has looked at what was running can clear the \
         halt with `/collegium resume`, which grants a fresh allowance."
    );
    halt::raise(
        services,
        &GlobalHalt {
            by: "the hourly ceiling".into(),
            reason,
            notice,
        },
    )
    .await;
}
