//! The fuzz targets' bodies (issue 21, "Fuzzing"): one module per target,
//! each `run(data)` driving the project's own code on untrusted bytes and
//! asserting the target's properties, so that a panic or a broken property
//! is a crash. The cargo-fuzz crate (`fuzz/`, outside the workspace) calls
//! these from one-line targets; `tests/corpus.rs` replays the committed
//! corpus and regressions through them in an ordinary `cargo test`, so CI
//! never needs cargo-fuzz. See `docs/fuzzing.md`.
//!
//! The Storage query grammar (issue 22) gets its module when it lands.

pub mod audit;
pub mod callbacks;
pub mod config;
pub mod mail;
pub mod mattermost_wire;
pub mod mention;
pub mod pdf;
pub mod proto;
pub mod proxy;
pub mod references;
pub mod skill;
pub mod sse;
pub mod tool_arguments;
pub mod web_page;
pub mod web_scope;
pub mod webhook;

mod split;

pub use split::SEPARATOR;

/// A target's body.
pub type Run = fn(&[u8]);

/// Every target by the name its corpus directory and fuzz target carry.
pub const TARGETS: &[(&str, Run)] = &[
    ("audit", audit::run),
    ("callbacks", callbacks::run),
    ("config", config::run),
    ("mail", mail::run),
    ("mattermost_wire", mattermost_wire::run),
    ("mention", mention::run),
    ("pdf", pdf::run),
    ("proto", proto::run),
    ("proxy", proxy::run),
    ("references", references::run),
    ("skill", skill::run),
    ("sse", sse::run),
    ("tool_arguments", tool_arguments::run),
    ("web_page", web_page::run),
    ("web_scope", web_scope::run),
    ("webhook", webhook::run),
];
