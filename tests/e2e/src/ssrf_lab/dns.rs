//! The lab's DNS server: hickory-server, authoritative for `test.`, answering
//! what the test scripts per name. A name's answers form a sequence, taken
//! one per query of each record type (the last repeats), so a rebinding name
//! answers a global address first and 127.0.0.1 next (§3.4: resolve once,
//! connect to the address judged).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

use hickory_server::net::runtime::Time;
use hickory_server::proto::op::{Header, HeaderCounts, Metadata, ResponseCode};
use hickory_server::proto::rr::rdata::{A, AAAA};
use hickory_server::proto::rr::{RData, Record, RecordType};
use hickory_server::server::{Request, RequestHandler, ResponseHandler, ResponseInfo};
use hickory_server::zone_handler::MessageResponseBuilder;

use super::LabError;

/// The zone the server is authoritative for.
pub const ZONE: &str = "test";

/// One answer in a name's sequence: its addresses (A queries get the IPv4
/// ones, AAAA the IPv6 ones) and their TTL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub addrs: Vec<IpAddr>,
    pub ttl: u32,
}

impl Answer {
    /// Addresses with a TTL of 60 s.
    pub fn new(addrs: impl IntoIterator<Item = IpAddr>) -> Self {
        Self {
            addrs: addrs.into_iter().collect(),
            ttl: 60,
        }
    }

    pub fn ttl(mut self, ttl: u32) -> Self {
        self.ttl = ttl;
        self
    }
}

/// A question the server was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The name, lower-cased, without the trailing dot.
    pub name: String,
    pub record_type: RecordType,
}

#[derive(Debug, Default)]
struct State {
    names: HashMap<String, Vec<Answer>>,
    /// How many answers each (name, type) has taken so far.
    taken: HashMap<(String, RecordType), usize>,
    asked: Vec<Asked>,
}

/// The scripted zone, shared by the test and the server.
#[derive(Debug, Clone, Default)]
pub struct Zone(Arc<Mutex<State>>);

fn normalised(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

fn in_zone(name: &str) -> bool {
    name == ZONE || name.ends_with(&format!(".{ZONE}"))
}

impl Zone {
    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // Every update below leaves the maps whole, so a poisoned lock holds
        // consistent data.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers `name` with `addrs`, TTL 60 s, every time.
    pub fn set(&self, name: &str, addrs: &[IpAddr]) -> Result<(), LabError> {
        self.script(name, vec![Answer::new(addrs.iter().copied())])
    }

    /// Answers `name` with `answers` in turn, one per query of each record
    /// type; the last answers every query after. Starts the sequence over.
    pub fn script(&self, name: &str, answers: Vec<Answer>) -> Result<(), LabError> {
        let name = normalised(name);
        if !in_zone(&name) {
            return Err(LabError::NotInZone { name });
        }
        let mut state = self.state();
        state.taken.retain(|(n, _), _| *n != name);
        state.names.insert(name, answers);
        Ok(())
    }

    /// Makes `name` unknown again (NXDOMAIN).
    pub fn remove(&self, name: &str) {
        let name = normalised(name);
        let mut state = self.state();
        state.taken.retain(|(n, _), _| *n != name);
        state.names.remove(&name);
    }

    /// Every question asked so far, in order.
    pub fn asked(&self) -> Vec<Asked> {
        self.state().asked.clone()
    }

    /// Records the question and takes the next answer for it: `None` for a
    /// name the test did not script.
    fn take(&self, name: &str, record_type: RecordType) -> Option<Answer> {
        let mut state = self.state();
        state.asked.push(Asked {
            name: name.to_string(),
            record_type,
        });
        let answers = state.names.get(name)?.clone();
        let taken = state
            .taken
            .entry((name.to_string(), record_type))
            .or_insert(0);
        let answer = answers.get(*taken).or_else(|| answers.last()).cloned();
        *taken += 1;
        answer
    }
}

/// The request handler serving a [`Zone`].
pub(super) struct Scripted(pub Zone);

impl Scripted {
    /// The response code and records answering `request`.
    fn answer(&self, request: &Request) -> (ResponseCode, Vec<Record>) {
        let Ok(info) = request.request_info() else {
            return (ResponseCode::FormErr, Vec::new());
        };
        let name = normalised(&info.query.name().to_string());
        let record_type = info.query.query_type();
        if !in_zone(&name) {
            return (ResponseCode::Refused, Vec::new());
        }
        let Some(answer) = self.0.take(&name, record_type) else {
            return (ResponseCode::NXDomain, Vec::new());
        };
        let owner = info.query.original().name().clone();
        let records = answer
            .addrs
            .iter()
            .filter_map(|addr| match (addr, record_type) {
                (IpAddr::V4(v4), RecordType::A) => Some(RData::A(A(*v4))),
                (IpAddr::V6(v6), RecordType::AAAA) => Some(RData::AAAA(AAAA(*v6))),
                _ => None,
            })
            .map(|rdata| Record::from_rdata(owner.clone(), answer.ttl, rdata))
            .collect();
        (ResponseCode::NoError, records)
    }
}

#[async_trait::async_trait]
impl RequestHandler for Scripted {
    async fn handle_request<R: ResponseHandler, T: Time>(
        &self,
        request: &Request,
        mut response_handle: R,
    ) -> ResponseInfo {
        let (code, records) = self.answer(request);
        let mut metadata = Metadata::response_from_request(&request.metadata);
        metadata.authoritative = code != ResponseCode::Refused;
        metadata.response_code = code;
        let response = MessageResponseBuilder::from_message_request(request).build(
            metadata,
            records.iter(),
            [],
            [],
            [],
        );
        match response_handle.send_response(response).await {
            Ok(info) => info,
            Err(_) => {
                let mut failed = Metadata::response_from_request(&request.metadata);
                failed.response_code = ResponseCode::ServFail;
                ResponseInfo::from(Header {
                    metadata: failed,
                    counts: HeaderCounts::default(),
                })
            }
        }
    }
}
