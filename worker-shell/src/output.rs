//! What a command's result says (§3.4): its exit status, any bound it met
//! (§6.1), then each stream's bounded prefix, saying how much more there
//! was, so nothing reads as whole that is not.

use crate::bounds::{InForce, Via};
use crate::run::{Capture, Ending, Finished};

/// The signal the kernel sends a process writing past `RLIMIT_FSIZE`.
const SIGXFSZ: i32 = nix::libc::SIGXFSZ;

/// The result's text, each stream shown up to `shown` bytes.
pub fn text(finished: &Finished, shown: usize, in_force: &InForce) -> String {
    let status = match &finished.ending {
        Ending::Exited(0) => "exit status 0".to_string(),
        Ending::Exited(code) if *code > 128 => format!("killed by signal {}", code - 128),
        Ending::Exited(code) => format!("exit status {code}"),
        Ending::Killed => "killed at its deadline".to_string(),
        Ending::Refused(reason) => format!("not run: {reason}"),
    };
    format!(
        "{status}\n{}{}{}",
        bounds(finished, in_force),
        stream("stdout", &finished.stdout, shown),
        stream("stderr", &finished.stderr, shown)
    )
}

/// The bounds the command met, as far as the kernel tells: a cgroup counts
/// each refused fork and each kill at its memory bound, and a process
/// writing past the file-size bound is killed by SIGXFSZ. Where it tells
/// nothing (an rlimit's refusal is only a failed call inside the command),
/// a failed command's result states the bounds it ran under.
fn bounds(finished: &Finished, in_force: &InForce) -> String {
    let bounds = &in_force.bounds;
    let events = finished.events.unwrap_or_default();
    let mut out = String::new();
    let file_killed = finished.ending == Ending::Exited(128 + SIGXFSZ);
    if file_killed {
        out.push_str(&if in_force.shrink_only {
            "[bound met: your home is over its cap, so no file may grow; the process writing to one was killed (SIGXFSZ)]\n".to_string()
        } else {
            format!(
                "[bound met: a file reached the file-size bound of {} MiB (max_file_mib); the process writing past it was killed (SIGXFSZ)]\n",
                bounds.max_file_mib
            )
        });
    }
    if events.forks_refused > 0 {
        out.push_str(&format!(
            "[bound met: the process bound of {} processes and threads (max_processes); {} forks were refused]\n",
            bounds.max_processes, events.forks_refused
        ));
    }
    if events.oom_kills > 0 {
        out.push_str(&format!(
            "[bound met: the memory bound of {} MiB (memory_mib); the kernel killed {} of the command's processes]\n",
            bounds.memory_mib, events.oom_kills
        ));
    }
    // A bound the kernel named explains the failure; the others are not
    // listed beside it.
    let failed = matches!(finished.ending, Ending::Exited(code) if code != 0);
    if !failed || !out.is_empty() {
        return out;
    }
    let mut unseen = Vec::new();
    if in_force.mechanisms.processes == Via::Rlimit {
        unseen.push(format!(
            "at most {} processes and threads of your user at once (max_processes)",
            bounds.max_processes
        ));
    }
    if in_force.mechanisms.memory == Via::Rlimit {
        unseen.push(format!(
            "at most {} MiB of memory per process (memory_mib)",
            bounds.memory_mib
        ));
    }
    if !file_killed {
        unseen.push(if in_force.shrink_only {
            "no file may grow while your home is over its cap".to_string()
        } else {
            format!(
                "files of at most {} MiB (max_file_mib)",
                bounds.max_file_mib
            )
        });
    }
    if unseen.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "[the command failed; it ran under bounds the kernel does not report meeting: {}. A program that meets one fails as it says: \"Resource temporarily unavailable\" from a fork, \"Cannot allocate memory\", \"File too large\"]\n",
        unseen.join(", ")
    ));
    out
}

fn stream(name: &str, capture: &Capture, shown: usize) -> String {
    if capture.total == 0 {
        return format!("[{name}: empty]\n");
    }
    let shown = &capture.bytes[..capture.bytes.len().min(shown)];
    let text = String::from_utf8_lossy(shown);
    let more = capture.total - shown.len() as u64;
    let mut out = format!("[{name}]\n{text}");
    if !text.ends_with('\n') {
        out.push('\n');
    }
    if more > 0 {
        out.push_str(&format!(
            "[{name}: the first {} of {} bytes are shown; {more} more were not]\n",
            shown.len(),
            capture.total
        ));
    }
    out
}

/// The streams that ran past what the result shows, captured whole up to
/// the runner's bound, for the daemon to keep in the workspace (§3.4).
pub fn captures(
    finished: &Finished,
    shown: usize,
) -> Vec<collegium_proto::toolset::v1::StreamCapture> {
    [("stdout", &finished.stdout), ("stderr", &finished.stderr)]
        .into_iter()
        .filter(|(_, capture)| capture.total > shown as u64)
        .map(
            |(stream, capture)| collegium_proto::toolset::v1::StreamCapture {
                stream: stream.into(),
                content: capture.bytes.clone(),
                total: capture.total,
            },
        )
        .collect()
}

/// The command's first line, bounded, for status lines and replay.
pub fn summary(command: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    let cut: String = first.chars().take(80).collect();
    if cut.len() < command.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounds::Mechanisms;
    use crate::run::SHOWN;
    use collegium_control::tools::shell_bounds::ShellBounds;

    fn rlimits() -> InForce {
        InForce {
            bounds: ShellBounds::default(),
            mechanisms: Mechanisms::RLIMITS,
            shrink_only: false,
        }
    }

    fn ended(ending: Ending, events: Option<crate::cgroups::Events>) -> Finished {
        Finished {
            ending,
            stdout: Capture::default(),
            stderr: Capture::default(),
            events,
        }
    }

    #[test]
    fn s6_1_a_bound_the_kernel_reports_is_named() {
        let cgroup = InForce {
            mechanisms: Mechanisms {
                processes: Via::Cgroup,
                memory: Via::Cgroup,
            },
            ..rlimits()
        };
        let events = crate::cgroups::Events {
            forks_refused: 3,
            oom_kills: 1,
        };
        let killed = text(&ended(Ending::Killed, Some(events)), SHOWN, &cgroup);
        assert!(killed.starts_with("killed at its deadline\n[bound met: the process bound of 256 processes and threads (max_processes); 3 forks were refused]\n[bound met: the memory bound of 1024 MiB (memory_mib); the kernel killed 1 of the command's processes]\n"), "{killed}");
        let file = text(&ended(Ending::Exited(128 + SIGXFSZ), None), SHOWN, &cgroup);
        assert!(
            file.contains(
                "[bound met: a file reached the file-size bound of 1024 MiB (max_file_mib)"
            ),
            "{file}"
        );
        assert!(
            !file.contains("does not report"),
            "every bound is seen: {file}"
        );
        let quiet = text(
            &ended(Ending::Exited(0), Some(Default::default())),
            SHOWN,
            &cgroup,
        );
        assert!(!quiet.contains("bound"), "{quiet}");
    }

    #[test]
    fn s6_1_a_failed_command_under_rlimits_states_the_bounds_in_force() {
        let failed = text(&ended(Ending::Exited(1), None), SHOWN, &rlimits());
        assert!(failed.contains("[the command failed; it ran under bounds the kernel does not report meeting: at most 256 processes and threads of your user at once (max_processes), at most 1024 MiB of memory per process (memory_mib), files of at most 1024 MiB (max_file_mib)."), "{failed}");
        let fine = text(&ended(Ending::Exited(0), None), SHOWN, &rlimits());
        assert!(!fine.contains("bound"), "{fine}");
        let shrink = InForce {
            shrink_only: true,
            ..rlimits()
        };
        let killed = text(&ended(Ending::Exited(128 + SIGXFSZ), None), SHOWN, &shrink);
        assert!(
            killed.contains("[bound met: your home is over its cap, so no file may grow"),
            "{killed}"
        );
    }

    #[test]
    fn s3_4_a_long_stream_says_how_much_more_there_was() {
        let finished = Finished {
            ending: Ending::Exited(0),
            stdout: Capture {
                bytes: vec![b'x'; SHOWN + 10],
                total: 1_000_000,
            },
            stderr: Capture::default(),
            events: None,
        };
        let text = text(&finished, SHOWN, &rlimits());
        assert!(text.starts_with("exit status 0\n[stdout]\nxxx"));
        assert!(text.contains(&format!(
            "[stdout: the first {SHOWN} of 1000000 bytes are shown; {} more were not]",
            1_000_000 - SHOWN
        )));
        assert!(text.ends_with("[stderr: empty]\n"));
    }

    #[test]
    fn s3_4_the_agents_prefix_bounds_what_is_shown_and_says_so() {
        let finished = Finished {
            ending: Ending::Exited(0),
            stdout: Capture {
                bytes: b"0123456789".to_vec(),
                total: 10,
            },
            stderr: Capture::default(),
            events: None,
        };
        let text = text(&finished, 4, &rlimits());
        assert!(text.contains("[stdout]\n0123\n"), "{text}");
        assert!(
            text.contains("[stdout: the first 4 of 10 bytes are shown; 6 more were not]"),
            "{text}"
        );
        assert_eq!(captures(&finished, 4).len(), 1, "the whole stream is kept");
        assert!(captures(&finished, 10).is_empty());
    }
}
