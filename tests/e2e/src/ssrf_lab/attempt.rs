//! The one way to make an SSRF attempt (§3.4, the SSRF matrix): from a
//! process or thread the lab has checked is inside its worker namespace. An
//! [`Attempt`] cannot be built any other way, so a matrix written against it
//! cannot run an attempt on the host's own network.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::enter::id_of;
use super::hits::Hit;
use super::{Lab, LabError};

/// What the lab checked is inside its worker namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inside {
    /// A process, by pid.
    Process(u32),
    /// A thread of the test process that entered the worker namespace.
    Thread,
}

/// An attempt made from inside the lab: what it may reach is only the lab.
pub struct Attempt<'lab> {
    lab: &'lab Lab,
    inside: Inside,
    /// Honeypot hits recorded before the attempt began.
    start: usize,
}

impl std::fmt::Debug for Attempt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Attempt")
            .field("inside", &self.inside)
            .field("start", &self.start)
            .finish()
    }
}

impl<'lab> Attempt<'lab> {
    pub(super) fn new(lab: &'lab Lab, inside: Inside) -> Self {
        Self {
            lab,
            inside,
            start: lab.hits.mark(),
        }
    }

    pub fn inside(&self) -> Inside {
        self.inside
    }

    /// Honeypot connections and datagrams since the attempt began, once
    /// every honeypot has taken in what reached it. Read it after the
    /// attempt has returned.
    pub fn honeypot_hits(&self) -> Result<Vec<Hit>, LabError> {
        super::settle::settle(self.lab)?;
        Ok(self.lab.hits.since(self.start))
    }
}

/// How long `ip netns exec` may take to enter the namespace and exec the
/// program it was given.
const ENTERING: Duration = Duration::from_secs(10);

fn is_ip(pid: u32) -> bool {
    std::fs::read_link(format!("/proc/{pid}/exe"))
        .is_ok_and(|exe| exe.file_name().is_some_and(|name| name == "ip"))
}

/// Checks that process `pid` is in the namespace whose handle is `worker`.
/// A process started by [`Lab::command_in_worker`] is `ip` until it has
/// entered the namespace and exec'd the program, so the check waits that
/// long.
pub(super) fn check_process(pid: u32, worker: &Path) -> Result<(), LabError> {
    let outside = |why: String| LabError::Outside {
        what: format!("process {pid}"),
        why,
    };
    let deadline = Instant::now() + ENTERING;
    while is_ip(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let own = PathBuf::from(format!("/proc/{pid}/ns/net"));
    let theirs = id_of(&own).map_err(|e| outside(format!("its namespace is unreadable: {e}")))?;
    let lab = id_of(worker).map_err(|e| outside(format!("the lab's namespace is gone: {e}")))?;
    if theirs != lab {
        return Err(outside(
            "its network namespace is not the lab's worker namespace".into(),
        ));
    }
    Ok(())
}

/// Checks that the calling thread is in the namespace whose handle is
/// `worker`.
pub(super) fn check_thread(worker: &Path) -> Result<(), LabError> {
    let outside = |why: String| LabError::Outside {
        what: "this thread".into(),
        why,
    };
    let own = id_of(Path::new("/proc/thread-self/ns/net"))
        .map_err(|e| outside(format!("its namespace is unreadable: {e}")))?;
    let lab = id_of(worker).map_err(|e| outside(format!("the lab's namespace is gone: {e}")))?;
    if own != lab {
        return Err(outside(
            "its network namespace is not the lab's worker namespace".into(),
        ));
    }
    Ok(())
}
