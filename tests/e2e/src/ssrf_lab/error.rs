//! The lab's failures, each saying what could not be done and why.

use std::net::SocketAddr;
use std::path::PathBuf;

use super::dns::ZONE;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(
        "the SSRF lab creates network namespaces, which needs root; this test runs as uid {uid}"
    )]
    NotRoot { uid: u32 },
    #[error("`ip {command}` failed: {message}")]
    Ip { command: String, message: String },
    #[error("could not enter the network namespace {namespace}: {message}")]
    Enter { namespace: String, message: String },
    #[error("could not bind {addr} in the lab: {message}")]
    Bind { addr: SocketAddr, message: String },
    #[error("could not write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("the lab's runtime could not start: {0}")]
    Runtime(std::io::Error),
    #[error("the lab's DNS server answers only names under `{ZONE}.`; `{name}` is not")]
    NotInZone { name: String },
    #[error("the lab has no test host addresses left")]
    HostsExhausted,
    #[error("refused to run an SSRF attempt from {what} outside the lab: {why}")]
    Outside { what: String, why: String },
    #[error("the honeypots' hits could not be read whole: {why}")]
    Unsettled { why: String },
    #[error("the lab's worker namespace is not isolated from the host: {why}")]
    NotIsolated { why: String },
}
