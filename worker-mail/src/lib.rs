//! The mail worker (§3.13, ARCHITECTURE §4): `mail::*` over each agent's own
//! mailbox, and the daemon's `Mailbox` service (the inbound poll, marking an
//! arrival read, the boot check), both on one socket. It is the only process
//! that ever reads a mailbox password: it reads the deployment's
//! configuration and the password files itself, then drops to its own user.

pub mod arguments;
pub mod compose;
pub mod credentials;
pub mod fetch;
pub mod html;
pub mod id;
pub mod imap;
pub mod mailbox;
pub mod message;
pub mod privilege;
pub mod query;
pub mod reads;
pub mod result;
pub mod sending;
pub mod service;
pub mod settings;
pub mod smtp;
pub mod tls;
