//! The daemon logs through the initialiser every worker shares
//! (`collegium_worker_kit::logging`, issue 21 item 6): native journal
//! records under systemd, text on a terminal, JSON lines otherwise. Nothing
//! secret or private is ever a field (§3.12: reasoning never reaches a log
//! line; secrets are `Redacted`).

/// The daemon's `SYSLOG_IDENTIFIER`, as `journalctl -t` matches it.
pub const IDENTIFIER: &str = "collegium";

pub fn init() {
    collegium_worker_kit::logging::init(IDENTIFIER);
}
