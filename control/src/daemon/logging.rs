//! Logging through `tracing`: readable lines on a terminal, one JSON object a
//! line otherwise (journald and log shippers read those), level from
//! `RUST_LOG` (default `info`). Nothing secret or private is ever a field
//! (§3.12: reasoning never reaches a log line).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests that run the daemon in process) keeps the
    // first subscriber.
    let _ = if std::io::stderr().is_terminal() {
        builder.try_init()
    } else {
        builder.json().flatten_event(true).try_init()
    };
}
