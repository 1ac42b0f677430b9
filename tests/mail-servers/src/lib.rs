//! Real mail servers for tests (issue 18: no mock IMAP or SMTP anywhere):
//! OpenSMTPD accepting mail and delivering it over LMTP into Dovecot, which
//! serves it over IMAP with TLS; each instance in a directory of
//! its own with a configuration this crate writes, on free loopback ports,
//! its users in a passwd-file, its certificate from a test CA the caller
//! trusts. `doveadm` seeds mailboxes (a benchmark's tens of thousands of
//! messages are written straight into the Maildir, then resynced) and
//! changes UIDVALIDITY as a test needs. Root only, as the other real-server
//! harnesses are: Dovecot drops to its own users.

mod ca;
mod client;
mod counting;
mod dovecot;
mod maildir;
mod ports;
mod relay;
mod smtpd;

pub use ca::TestCa;
pub use client::{Protocol, send};
pub use counting::{Carried, Counted};
pub use dovecot::{Dovecot, DovecotError, User};
pub use relay::CutAfterDot;
pub use smtpd::{REFUSED_DOMAIN, Smtpd, SmtpdError};
