//! The Collegium control daemon: one module per concept of the spec
//! (ARCHITECTURE §2). What exists so far is the foundation: configuration, the
//! declaration registry, skills, the store and the daemon's lifecycle.

pub mod chat;
pub mod commands;
pub mod config;
pub mod context;
pub mod daemon;
pub mod inference;
pub mod skills;
pub mod store;
pub mod tools;
