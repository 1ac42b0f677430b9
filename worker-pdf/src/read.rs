//! The worker's side of one read (§3.4): a child per PDF, its resident
//! memory polled against the cap, killed (its whole process group) at the
//! cap or the read's deadline, its pages forwarded as they arrive, and the
//! ending told as the spec has it: how far and why, never a scan for a read
//! stopped short.

use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::cgroup::{ChildCgroup, MemoryCgroups};
use crate::child::ChildLimits;
use crate::frame::{self, Frame, Incoming};
use crate::limits::Limits;
use crate::outcome::{Event, Failure, Stop};

/// How much of a child's stderr is kept: enough for a panic's message.
const STDERR_KEPT: usize = 8 * 1024;

/// Reads PDFs in children of `exe` (this worker's own executable).
#[derive(Debug)]
pub struct Reader {
    pub exe: PathBuf,
    pub limits: Limits,
    pub cgroups: Option<MemoryCgroups>,
}

/// What the audit log records of a read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub pages_read: u32,
    /// The last event: an end or a failure. `None` when the caller went
    /// away before it was sent.
    pub last: Option<Event>,
}

/// How the child's part ended, before it is told as an event.
#[derive(Debug)]
enum Ending {
    Complete,
    /// The worker stopped it at a limit.
    Limit(Stop),
    Unparseable(String),
    /// It closed its output without saying it was done.
    Exited,
    /// The caller went away.
    Abandoned,
}

/// Pages as the caller sees them: those without text held back until the
/// first page with text, so a read that finds none says so once (a scan, or
/// the limit that stopped it) rather than as a run of empty pages.
struct Pages<'a> {
    events: &'a mpsc::Sender<Event>,
    /// A caller that stops taking pages holds the read no longer than this.
    deadline: Instant,
    held: Vec<u32>,
    sent: u32,
    chars: u64,
    ceiling: u64,
    total: Option<u32>,
}

impl Pages<'_> {
    fn seen_text(&self) -> bool {
        self.sent > 0
    }

    /// Forwards a page, or says which limit it would pass.
    async fn page(&mut self, number: u32, text: String) -> Result<(), Ending> {
        if !self.seen_text() && text.trim().is_empty() {
            self.held.push(number);
            return Ok(());
        }
        let chars = text.chars().count() as u64;
        if self.chars + chars > self.ceiling {
            return Err(Ending::Limit(Stop::TextCeiling));
        }
        self.chars += chars;
        for held in std::mem::take(&mut self.held) {
            self.send(Event::Page {
                number: held,
                text: String::new(),
            })
            .await?;
        }
        self.send(Event::Page { number, text }).await
    }

    async fn send(&mut self, event: Event) -> Result<(), Ending> {
        match tokio::time::timeout_at(self.deadline, self.events.send(event)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(Ending::Abandoned),
            Err(_) => return Err(Ending::Limit(Stop::Deadline)),
        }
        self.sent += 1;
        Ok(())
    }

    fn pages_read(&self) -> u32 {
        self.sent + u32::try_from(self.held.len()).unwrap_or(u32::MAX)
    }
}

impl Reader {
    /// Reads `pdf` until `deadline`, stopping once the next page would take
    /// the text past `ceiling` characters; sends each page, then one end or
    /// one failure, on `events`.
    pub async fn read(
        &self,
        pdf: Vec<u8>,
        deadline: Instant,
        ceiling: u64,
        events: &mpsc::Sender<Event>,
    ) -> Summary {
        let mut pages = Pages {
            events,
            deadline,
            held: Vec::new(),
            sent: 0,
            chars: 0,
            ceiling,
            total: None,
        };
        let last = match self.run(pdf, deadline, &mut pages).await {
            Ok(ending) => self.tell(ending, &pages),
            Err(detail) => Some(Event::Failure(Failure::Unparseable { detail })),
        };
        if let Some(event) = &last {
            // A caller that takes no more events is not waited on past the
            // read's deadline.
            let sent = tokio::time::timeout_at(
                deadline + Duration::from_secs(1),
                events.send(event.clone()),
            )
            .await;
            if !matches!(sent, Ok(Ok(()))) {
                return Summary {
                    pages_read: pages.sent,
                    last: None,
                };
            }
        }
        Summary {
            pages_read: pages.sent,
            last,
        }
    }

    fn tell(
        &self,
        ending: (Ending, Option<ExitStatus>, String, bool),
        pages: &Pages,
    ) -> Option<Event> {
        let (ending, status, stderr, oom_killed) = ending;
        let ending = match ending {
            Ending::Exited => judge_exit(status, &stderr, oom_killed),
            other => other,
        };
        let limit_bound = |limit: Stop| match limit {
            Stop::TextCeiling => pages.ceiling,
            _ => self.limits.memory_cap_bytes,
        };
        let stopped = match ending {
            Ending::Abandoned => return None,
            Ending::Complete if pages.seen_text() => Stop::Complete,
            Ending::Complete => {
                return Some(Event::Failure(Failure::Scan {
                    total: pages.total.unwrap_or_else(|| pages.pages_read()),
                }));
            }
            Ending::Limit(limit) if pages.seen_text() => limit,
            Ending::Limit(limit) => {
                return Some(Event::Failure(Failure::LimitBeforeText {
                    limit,
                    pages_read: pages.pages_read(),
                    total: pages.total,
                    bound: limit_bound(limit),
                }));
            }
            Ending::Unparseable(_) if pages.seen_text() => Stop::ParserFailed,
            Ending::Unparseable(detail) => {
                return Some(Event::Failure(Failure::Unparseable { detail }));
            }
            // Judged above.
            Ending::Exited => Stop::ParserFailed,
        };
        Some(Event::End {
            pages_read: pages.sent,
            total: pages.total,
            stopped,
        })
    }

    /// Runs the child to its ending; `Err` where it could not be started.
    async fn run(
        &self,
        pdf: Vec<u8>,
        deadline: Instant,
        pages: &mut Pages<'_>,
    ) -> Result<(Ending, Option<ExitStatus>, String, bool), String> {
        let left = deadline.saturating_duration_since(Instant::now());
        let limits = ChildLimits {
            address_space_bytes: self.limits.address_space_bytes,
            // The deadline kills first; CPU time is the backstop should
            // the worker itself stall.
            cpu_seconds: left.as_secs() + 2,
            max_inflated_bytes: self.limits.memory_cap_bytes,
            body_cap_bytes: self.limits.body_cap_bytes,
        };
        let mut child = Command::new(&self.exe)
            .args(limits.args())
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("the worker could not start a reader: {e}"))?;
        let pid = child
            .id()
            .ok_or("the reader ended before it could be watched")?;
        let group = Pid::from_raw(i32::try_from(pid).map_err(|_| "a pid past i32")?);
        let cgroup: Option<ChildCgroup> = match &self.cgroups {
            Some(cgroups) => match cgroups.join(pid, self.limits.memory_cap_bytes) {
                Ok(cgroup) => Some(cgroup),
                Err(e) => {
                    let _ = killpg(group, Signal::SIGKILL);
                    return Err(format!("the reader's memory cgroup: {e}"));
                }
            },
            None => None,
        };
        let (Some(mut stdin), Some(mut stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the reader's pipes were not opened".into());
        };
        // The bytes go in while the pages come out: a child that stops
        // reading (it died) ends the write, which is then of no interest.
        let feed = tokio::spawn(async move {
            let _ = stdin.write_all(&pdf).await;
        });
        let errors = tokio::spawn(async move {
            let mut kept = Vec::new();
            let _ = (&mut stderr)
                .take(STDERR_KEPT as u64)
                .read_to_end(&mut kept)
                .await;
            // The rest is drained so the child never blocks on it.
            let _ = tokio::io::copy(&mut stderr, &mut tokio::io::sink()).await;
            String::from_utf8_lossy(&kept).into_owned()
        });
        let max_page_bytes = pages.ceiling.saturating_mul(4);
        let (frames_tx, mut frames) = mpsc::channel(4);
        let frames_task = tokio::spawn(async move {
            loop {
                let incoming = frame::read(&mut stdout, max_page_bytes).await;
                let last = !matches!(
                    incoming,
                    Ok(Incoming::Frame(Frame::Page { .. } | Frame::Total(_)))
                );
                if frames_tx.send(incoming).await.is_err() || last {
                    return;
                }
            }
        });
        let mut poll = tokio::time::interval(self.limits.poll_interval);
        poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let ending = loop {
            tokio::select! {
                biased;
                () = tokio::time::sleep_until(deadline) => break Ending::Limit(Stop::Deadline),
                _ = poll.tick() => {
                    if resident_bytes(pid).is_some_and(|rss| rss > self.limits.memory_cap_bytes) {
                        break Ending::Limit(Stop::MemoryCap);
                    }
                }
                incoming = frames.recv() => match incoming {
                    Some(Ok(Incoming::Frame(Frame::Total(n)))) => pages.total = Some(n),
                    Some(Ok(Incoming::Frame(Frame::Page { number, text }))) => {
                        if let Err(ending) = pages.page(number, text).await {
                            break ending;
                        }
                    }
                    Some(Ok(Incoming::LongPage { .. })) => break Ending::Limit(Stop::TextCeiling),
                    Some(Ok(Incoming::Frame(Frame::OverLimit))) => break Ending::Limit(Stop::MemoryCap),
                    Some(Ok(Incoming::Frame(Frame::Done))) => break Ending::Complete,
                    Some(Ok(Incoming::Frame(Frame::Unparseable(why)))) => break Ending::Unparseable(why),
                    Some(Ok(Incoming::End)) | None => break Ending::Exited,
                    Some(Err(e)) => break Ending::Unparseable(e.to_string()),
                },
            }
        };
        // Whatever ended the read, nothing of the child's outlives it.
        let _ = killpg(group, Signal::SIGKILL);
        let status = child.wait().await.ok();
        frames_task.abort();
        feed.abort();
        let stderr = tokio::time::timeout(Duration::from_secs(1), errors)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        let oom_killed = cgroup.as_ref().is_some_and(ChildCgroup::oom_killed);
        drop(cgroup);
        Ok((ending, status, stderr, oom_killed))
    }
}

/// What a child that ended on its own ended of: the memory it could not
/// get, CPU time, or the parser failing.
fn judge_exit(status: Option<ExitStatus>, stderr: &str, oom_killed: bool) -> Ending {
    use std::os::unix::process::ExitStatusExt;
    let signal = status.and_then(|s| s.signal());
    // Rust's allocation-failure handler says this before it aborts: an
    // allocation past RLIMIT_AS is the memory cap met between two polls.
    if oom_killed || stderr.contains("memory allocation of") {
        return Ending::Limit(Stop::MemoryCap);
    }
    // A SIGKILL the worker did not send is the kernel's OOM killer, to
    // which the child offered itself first.
    if signal == Some(Signal::SIGKILL as i32) {
        return Ending::Limit(Stop::MemoryCap);
    }
    if signal == Some(Signal::SIGXCPU as i32) {
        return Ending::Limit(Stop::Deadline);
    }
    let said = stderr
        .lines()
        .find(|l| l.contains("panicked") || l.contains("overflowed its stack"))
        .map(str::trim);
    let detail = match (said, signal, status) {
        (Some(line), _, _) if line.contains("overflowed its stack") => {
            "the parser recursed too deep (nesting past what a parse may hold)".to_string()
        }
        (Some(_), _, _) => "the parser failed on it (it panicked)".to_string(),
        (None, Some(signal), _) => format!("the parser was ended by signal {signal}"),
        (None, None, Some(status)) => format!("the parser stopped early ({status})"),
        (None, None, None) => "the parser stopped early".to_string(),
    };
    Ending::Unparseable(detail)
}

/// A process's resident memory, from `/proc/PID/status`.
pub fn resident_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find_map(|line| {
        let kb = line.strip_prefix("VmRSS:")?.trim().strip_suffix("kB")?;
        kb.trim().parse::<u64>().ok().map(|kb| kb * 1024)
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    use super::*;

    fn killed_by(signal: Signal) -> Option<ExitStatus> {
        Some(ExitStatus::from_raw(signal as i32))
    }

    /// A parser panic: the child's hook says so on stderr and aborts
    /// (§3.4: a PDF the parser panics on is a typed failure).
    #[test]
    fn s3_4_a_child_that_panicked_is_unparseable_saying_so() {
        let stderr = "collegium-worker-pdf read-child: parser panicked: panicked at src/parser.rs:1:1:\nindex out of bounds\n";
        match judge_exit(killed_by(Signal::SIGABRT), stderr, false) {
            Ending::Unparseable(detail) => {
                assert_eq!(detail, "the parser failed on it (it panicked)");
            }
            other => panic!("{other:?}"),
        }
    }

    /// The kernel's kill at the cgroup's `memory.max` is the memory cap,
    /// whatever signal the child died of.
    #[test]
    fn s3_4_a_child_killed_at_memory_max_met_the_memory_cap() {
        assert!(matches!(
            judge_exit(killed_by(Signal::SIGKILL), "", true),
            Ending::Limit(Stop::MemoryCap)
        ));
        assert!(matches!(
            judge_exit(
                killed_by(Signal::SIGABRT),
                "memory allocation of 4294967296 bytes failed\n",
                false
            ),
            Ending::Limit(Stop::MemoryCap)
        ));
    }

    #[test]
    fn s3_4_a_child_ended_otherwise_is_unparseable_naming_how() {
        assert!(matches!(
            judge_exit(killed_by(Signal::SIGXCPU), "", false),
            Ending::Limit(Stop::Deadline)
        ));
        match judge_exit(killed_by(Signal::SIGSEGV), "", false) {
            Ending::Unparseable(detail) => assert_eq!(detail, "the parser was ended by signal 11"),
            other => panic!("{other:?}"),
        }
    }
}
