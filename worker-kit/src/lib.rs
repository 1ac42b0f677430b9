//! The machinery every worker and every plugin shares (ARCHITECTURE §4): the
//! `Toolset` server on a Unix socket that only allowed peers may reach, the
//! check of the daemon's signed dispatch grants, the hash-chained audit log,
//! the sandbox as the process observes itself for the handshake, the one
//! logging initialiser and the redacting type every secret is held in.

pub mod admission;
pub mod audit;
pub mod client;
pub mod deadline;
pub mod grant;
pub mod logging;
pub mod own_dir;
pub mod ready;
pub mod redact;
pub mod sandbox;
pub mod serve;
