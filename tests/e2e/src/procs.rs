//! Processes as `/proc` shows them, for scenarios that prove nothing the
//! daemon starts outlives it (§3.14), and for the drivers that measure the
//! daemon's memory.

use std::time::{Duration, Instant};

/// One process, named by its pid and its start time: a pid the kernel hands
/// to a new process afterwards is not taken for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Process {
    pub pid: u32,
    started: u64,
}

/// The fields of `/proc/PID/stat` after the command name, which may itself
/// hold spaces and parentheses: state, ppid, …
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, after) = stat.rsplit_once(')')?;
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// The children of `parent` whose executable is named `name`.
pub fn children_named(parent: u32, name: &str) -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let fields = stat_fields(pid)?;
            let ppid: u32 = fields.get(1)?.parse().ok()?;
            let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok()?;
            let named = exe.file_name().is_some_and(|n| n == name);
            // Field 22 of stat: the start time, 20th after the name.
            let started = fields.get(19)?.parse().ok()?;
            (ppid == parent && named).then_some(Process { pid, started })
        })
        .collect()
}

/// Whether the process still runs: a zombie no one has reaped yet has
/// ended, and a pid reused since names another process.
pub fn running(process: &Process) -> bool {
    stat_fields(process.pid).is_some_and(|fields| {
        fields.first().is_some_and(|state| state != "Z")
            && fields
                .get(19)
                .and_then(|s| s.parse::<u64>().ok())
                .is_some_and(|started| started == process.started)
    })
}

/// The processes of `processes` still running once `within` has passed, or
/// none as soon as all have ended.
pub fn still_running_after(processes: &[Process], within: Duration) -> Vec<Process> {
    let deadline = Instant::now() + within;
    loop {
        let left: Vec<Process> = processes.iter().filter(|p| running(p)).cloned().collect();
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Asserts that none of `processes` runs `within` after the process that
/// started them ended, killing any that does so the failure leaves nothing
/// behind.
pub fn assert_ended(processes: &[Process], within: Duration) {
    let left = still_running_after(processes, within);
    for process in &left {
        let _ = std::process::Command::new("kill")
            .args(["-KILL", &process.pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "still running {} s after the daemon ended: {left:?}",
        within.as_secs()
    );
}

/// A process's resident memory in KiB (`VmRSS`); none once it is gone.
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}
