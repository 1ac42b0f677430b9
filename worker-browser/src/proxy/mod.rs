//! The egress proxy Chromium is started behind (§3.4 "The check runs on every
//! request the session makes"): every request and tunnel the browser opens is
//! judged by the deployment's scope, connected to the address judged, and
//! logged; refusals are kept so a refused load can be reported as the typed
//! refusal naming the address the proxy stopped.
//!
//! This, not CDP interception, is the boundary: interception misses
//! WebSockets, workers and pop-ups, while every connection Chromium makes
//! through `--proxy-server` comes here.

mod body;
mod connect;
mod dial;
mod forward;
mod headers;
mod judge;
mod log;
mod peer;
mod refuse;
mod server;

/// The target judgement alone, for the fuzz harness (fuzz/harness).
#[doc(hidden)]
pub use judge::{Judged, judge};
pub use log::{ProxyLog, REFUSALS_KEPT, RefusalRecord};
pub use server::{EgressProxy, HEAD_WITHIN, ProxyError, RunningProxy};

/// The response header a refused request carries the refusal text in.
pub const REFUSAL_HEADER: &str = "x-collegium-refusal";
