//! Waiting for a page to redraw after an action (§3.4: an action is captured
//! once the page has redrawn from the script requests it started, as far as
//! a bounded wait allows): no request in flight for a moment, then no change
//! to the document for a moment, within the wait.

use std::time::Duration;

use chromiumoxide::Page;
use tokio::time::Instant;

use super::traffic::Traffic;

/// How long the network must stay idle.
const NETWORK_QUIET: Duration = Duration::from_millis(300);
/// How long the document must go unchanged, in milliseconds (given to the page).
const DOM_QUIET_MS: u64 = 200;
/// How often the network is looked at.
const POLL: Duration = Duration::from_millis(25);

/// Resolves once no mutation has been seen for the quiet time, or at the
/// bound: true when it went quiet.
fn dom_quiet_script(bound: Duration) -> String {
    format!(
        "new Promise((resolve) => {{
            let timer;
            const done = (quiet) => {{ observer.disconnect(); clearTimeout(timer); resolve(quiet); }};
            const observer = new MutationObserver(() => {{ clearTimeout(timer); timer = setTimeout(() => done(true), {DOM_QUIET_MS}); }});
            observer.observe(document, {{ subtree: true, childList: true, attributes: true, characterData: true }});
            timer = setTimeout(() => done(true), {DOM_QUIET_MS});
            setTimeout(() => done(false), {});
        }})",
        bound.as_millis().max(1)
    )
}

/// Waits, until `deadline` at most, for the page to settle.
pub async fn settle(page: &Page, traffic: &Traffic, deadline: Instant) {
    // Let the action's own script start what it starts.
    tokio::time::sleep(POLL * 2).await;
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        match traffic.quiet_since() {
            Some(since) if now.duration_since(since) >= NETWORK_QUIET => {}
            _ => {
                tokio::time::sleep(POLL).await;
                continue;
            }
        }
        let left = deadline.saturating_duration_since(now);
        let quiet = tokio::time::timeout(left, page.evaluate(dom_quiet_script(left))).await;
        // A navigation replaces the document mid-wait; the new one is
        // waited for in turn.
        let quiet =
            matches!(quiet, Ok(Ok(ref r)) if r.value().and_then(|v| v.as_bool()) == Some(true));
        if quiet && traffic.quiet_since().is_some() {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}
