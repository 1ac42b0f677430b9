//! The Collegium control daemon: one module per concept of the spec
//! (ARCHITECTURE §2). What exists so far: configuration, the declaration
//! registry, skills, the store, the daemon's lifecycle, inference, the
//! Mattermost client and boot checks, and the audit side of the workers.

pub mod activation;
pub mod chat;
pub mod commands;
pub mod config;
pub mod context;
pub mod daemon;
pub mod inference;
pub mod ownership;
pub mod queue;
pub mod skills;
pub mod status;
pub mod store;
pub mod tools;
pub mod turns;
pub mod workers;
