//! Real mail servers for tests (issue 18: no mock IMAP or SMTP anywhere):
//! Dovecot serving IMAP over TLS and LMTP, each instance in a directory of
//! its own with a configuration this crate writes, on free loopback ports,
//! its users in a passwd-file, its certificate from a test CA the caller
//! trusts. `doveadm` seeds mailboxes and changes UIDVALIDITY as a test
//! needs. Root only, as the other real-server harnesses are: Dovecot
//! drops to its own users.

mod ca;
mod dovecot;
mod ports;

pub use ca::TestCa;
pub use dovecot::{Dovecot, DovecotError, User};
