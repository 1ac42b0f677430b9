//! The operator's view of the workers' audit logs (ARCHITECTURE §4):
//! `collegium audit verify` proves a log against its chain and the
//! daemon's anchors; `collegium audit show` verifies it the same way and
//! then shows it, one call a line, joined with the store (issue 21 item 7).

pub mod filter;
mod join;
mod render;
pub mod show;
mod site;
pub mod verify;

pub use verify::{VerifyError, verify};

#[cfg(test)]
mod tests;
