//! What every read is held to (§3.4): fixed for the worker's life and
//! reported at Describe, so the daemon can log them.

use std::time::Duration;

const MIB: u64 = 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A child is killed once its resident memory passes this.
    pub memory_cap_bytes: u64,
    /// The child's RLIMIT_AS: an allocation past it aborts the child
    /// rather than growing it, should it outrun the resident-memory poll.
    pub address_space_bytes: u64,
    /// How many PDFs are read at once; the cap bounds their sum as well as
    /// each.
    pub concurrency: u32,
    /// A PDF larger than this is not read at all: one cut short does not
    /// parse.
    pub body_cap_bytes: u64,
    /// How often a child's resident memory is read.
    pub poll_interval: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_cap_bytes: 256 * MIB,
            address_space_bytes: 1024 * MIB,
            concurrency: 2,
            body_cap_bytes: 32 * MIB,
            poll_interval: Duration::from_millis(5),
        }
    }
}

impl Limits {
    pub fn to_wire(&self, memory_cgroup: bool) -> collegium_proto::pdf::v1::Limits {
        collegium_proto::pdf::v1::Limits {
            memory_cap_bytes: self.memory_cap_bytes,
            address_space_bytes: self.address_space_bytes,
            concurrency: self.concurrency,
            body_cap_bytes: self.body_cap_bytes,
            memory_cgroup,
        }
    }
}
