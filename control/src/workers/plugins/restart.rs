//! A crashed plugin is restarted from the same executable and must describe
//! itself exactly as at boot, else its tools answer as unavailable until the
//! daemon restarts: there is no hot reload (§3.14, §9). A call whose plugin
//! died under it is a tool that threw (§7.1), whatever the tool declares.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use collegium_proto::toolset::v1::DescribeResponse;
use tokio::process::Child;
use tokio::sync::{oneshot, watch};

use super::Launch;
use crate::workers::dispatch::{CallOutcome, WorkerError};
use crate::workers::handshake::{Gap, HandshakeRefused};

/// How long a call whose answer was lost waits to learn whether the
/// plugin's process died: the exit arrives within moments of the socket
/// closing.
const DEATH_NOTICED_WITHIN: Duration = Duration::from_secs(1);

/// Restarts within this window that count towards [`RESTARTS_ALLOWED`].
const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// How many times a plugin is restarted within [`RESTART_WINDOW`] before
/// its tools are unavailable: a plugin that dies as soon as it is ready
/// would otherwise be restarted for ever.
const RESTARTS_ALLOWED: usize = 5;

/// What the daemon holds a plugin to after boot, shared by its `Worker`
/// (which answers calls) and its supervisor (which restarts it).
#[derive(Clone)]
pub struct Held {
    inner: Arc<Inner>,
}

struct Inner {
    /// Why its tools are unavailable until the daemon restarts (§9).
    unavailable: OnceLock<String>,
    /// Whether the daemon watches its process: false for a plugin its own
    /// unit runs, whose deaths the daemon never sees.
    supervised: bool,
    /// How many times its process has ended since boot.
    deaths: watch::Sender<u64>,
}

impl Default for Held {
    fn default() -> Self {
        Self::new()
    }
}

impl Held {
    /// A plugin the daemon started and watches.
    pub fn new() -> Self {
        Self::with(true)
    }

    /// A plugin its own unit runs: systemd sees its deaths, not the daemon.
    pub fn unit_run() -> Self {
        Self::with(false)
    }

    fn with(supervised: bool) -> Self {
        Self {
            inner: Arc::new(Inner {
                unavailable: OnceLock::new(),
                supervised,
                deaths: watch::Sender::new(0),
            }),
        }
    }

    /// The refusal a call of an unavailable plugin reads, in the
    /// framework's words; none while it serves.
    pub fn unavailable(&self) -> Option<String> {
        self.inner.unavailable.get().cloned()
    }

    /// Makes every tool of `namespace` unavailable until the daemon
    /// restarts, for `why` (said once, in the log and to each call).
    pub fn make_unavailable(&self, namespace: &str, why: &str) {
        let text = format!(
            "the plugin `{namespace}` is unavailable until the daemon restarts: {why}. Plugins are loaded once, at boot (§9); tell a person, since the operator must restart the daemon"
        );
        if self.inner.unavailable.set(text).is_ok() {
            tracing::error!(plugin = %namespace, reason = %why, "a plugin's tools are unavailable until the daemon restarts");
        }
    }

    /// A receiver that sees the next death, taken before a call is sent;
    /// none where the daemon does not watch the process.
    pub fn deaths(&self) -> Option<watch::Receiver<u64>> {
        self.inner.supervised.then(|| self.inner.deaths.subscribe())
    }

    fn note_death(&self) {
        self.inner.deaths.send_modify(|n| *n += 1);
    }

    /// Holds a restarted plugin's description to the one it gave at boot:
    /// any difference makes its tools unavailable (§3.14, §9).
    pub fn described_again(
        &self,
        namespace: &str,
        at_boot: &DescribeResponse,
        now: &DescribeResponse,
    ) -> Result<(), WorkerError> {
        let gaps = differences(at_boot, now);
        if gaps.is_empty() {
            tracing::info!(plugin = %namespace, "a restarted plugin described itself as at boot");
            return Ok(());
        }
        let fields: Vec<String> = gaps.iter().map(|g| g.field.clone()).collect();
        self.make_unavailable(
            namespace,
            &format!(
                "it was restarted after its process ended and describes itself differently from boot ({})",
                fields.join(", ")
            ),
        );
        Err(HandshakeRefused {
            worker: namespace.to_string(),
            gaps,
        }
        .into())
    }
}

/// Where a restarted plugin's description differs from its boot one, field
/// by field and tool by tool.
pub fn differences(at_boot: &DescribeResponse, now: &DescribeResponse) -> Vec<Gap> {
    let mut gaps = Vec::new();
    let mut differs = |field: String, then: String, now: String| {
        if then != now {
            gaps.push(Gap {
                field,
                problem: format!("at boot {then}, now {now}"),
            });
        }
    };
    let whole = |v: &dyn std::fmt::Debug| format!("{v:?}");
    differs(
        "protocol_version".into(),
        at_boot.protocol_version.to_string(),
        now.protocol_version.to_string(),
    );
    differs(
        "protocol range".into(),
        format!(
            "{}..={}",
            at_boot.min_protocol_version, at_boot.max_protocol_version
        ),
        format!(
            "{}..={}",
            now.min_protocol_version, now.max_protocol_version
        ),
    );
    differs(
        "build_version".into(),
        at_boot.build_version.clone(),
        now.build_version.clone(),
    );
    differs(
        "namespace".into(),
        at_boot.namespace.clone(),
        now.namespace.clone(),
    );
    differs(
        "settings_schema_json".into(),
        at_boot.settings_schema_json.clone(),
        now.settings_schema_json.clone(),
    );
    differs(
        "sandbox".into(),
        whole(&at_boot.sandbox),
        whole(&now.sandbox),
    );
    differs(
        "storage_collections".into(),
        whole(&at_boot.storage_collections),
        whole(&now.storage_collections),
    );
    differs("skills".into(), whole(&at_boot.skills), whole(&now.skills));
    let names =
        |d: &DescribeResponse| -> Vec<String> { d.tools.iter().map(|t| t.name.clone()).collect() };
    let mut all: Vec<String> = Vec::new();
    for name in names(at_boot).into_iter().chain(names(now)) {
        if !all.contains(&name) {
            all.push(name);
        }
    }
    for name in all {
        let find = |d: &DescribeResponse| d.tools.iter().find(|t| t.name == name).cloned();
        let (then, current) = (find(at_boot), find(now));
        let field = format!("tools.{name}");
        match (then, current) {
            (Some(then), Some(current)) => differs(field, whole(&then), whole(&current)),
            (Some(_), None) => differs(field, "served".into(), "missing".into()),
            (None, Some(_)) => differs(field, "absent".into(), "served".into()),
            (None, None) => {}
        }
    }
    gaps
}

/// A plugin call whose answer was lost — an error status, a stream that
/// broke or ended without a result — is a tool that threw (§7.1), whether
/// its process died under it (it is restarted for the next call) or not.
/// A plugin its own unit runs (no `deaths` to watch) is said as such.
pub async fn threw(deaths: Option<watch::Receiver<u64>>, reason: String) -> CallOutcome {
    let Some(mut deaths) = deaths else {
        return CallOutcome::Threw(format!(
            "{reason}; the plugin runs from its own unit, which restarts it if its process ended"
        ));
    };
    let died = deaths.has_changed().unwrap_or(false)
        || matches!(
            tokio::time::timeout(DEATH_NOTICED_WITHIN, deaths.changed()).await,
            Ok(Ok(()))
        );
    CallOutcome::Threw(if died {
        format!(
            "the plugin's process ended during the call ({reason}); it is restarted for the next call"
        )
    } else {
        reason
    })
}

/// Watches a plugin's process and starts it again from the same executable
/// when it ends, until stopped.
pub struct Supervisor {
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

impl Supervisor {
    /// Watches `child`, started as `launch` says, for the plugin held by
    /// `held`. Runs on the runtime's worker threads, which live as long as
    /// the daemon's runtime, so a restarted child's parent-death signal
    /// (set for the thread that forks) fires only when the daemon ends.
    pub fn start(namespace: String, child: Child, launch: Launch, held: Held) -> Self {
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(watch_over(namespace, child, launch, held, stopped));
        Self {
            stop: Some(stop),
            task,
        }
    }

    /// Stops the plugin: SIGTERM, a moment's wait, then SIGKILL.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if tokio::time::timeout(Duration::from_secs(10), &mut self.task)
            .await
            .is_err()
        {
            // The task sees a stop at once, but a process that ignores
            // SIGTERM is given 5 s: aborting past that drops the task's
            // child, which is killed on drop.
            self.task.abort();
        }
    }
}

async fn watch_over(
    namespace: String,
    mut child: Child,
    launch: Launch,
    held: Held,
    mut stopped: oneshot::Receiver<()>,
) {
    let mut restarts: Vec<Instant> = Vec::new();
    loop {
        tokio::select! {
            status = child.wait() => {
                held.note_death();
                let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                restarts.retain(|at| at.elapsed() < RESTART_WINDOW);
                if restarts.len() >= RESTARTS_ALLOWED {
                    held.make_unavailable(&namespace, &format!(
                        "its process ended ({status}) for the {} time within {} s",
                        restarts.len() + 1,
                        RESTART_WINDOW.as_secs()
                    ));
                    return;
                }
                tracing::warn!(plugin = %namespace, %status, "a plugin's process ended; starting it again from the same executable");
                restarts.push(Instant::now());
                // A stop while the new process has not yet said `ready`
                // drops the start, and the half-started child with it
                // (killed on drop): nothing is left serving a socket
                // nobody answers for.
                let started = tokio::select! {
                    started = super::spawn(&launch) => started,
                    _ = &mut stopped => return,
                };
                match started {
                    Ok((started, storage)) => {
                        child = started;
                        // The fresh connection serves the boot's collections.
                        if let Some(binding) = &launch.storage
                            && let Err(e) = binding.serve(storage)
                        {
                            tracing::error!(plugin = %namespace, error = %e, "a restarted plugin's storage connection could not be served");
                        }
                        tracing::info!(plugin = %namespace, "a plugin was started again; its next call hands it the boot's key and holds it to its boot description");
                    }
                    Err(reason) => {
                        held.make_unavailable(&namespace, &format!(
                            "its process ended ({status}) and could not be started again: {reason}"
                        ));
                        return;
                    }
                }
            }
            _ = &mut stopped => {
                terminate(&mut child).await;
                return;
            }
        }
    }
}

/// Asks the process to stop and waits a moment for it; kills it after.
async fn terminate(child: &mut Child) {
    if let Some(pid) = child.id().and_then(|pid| i32::try_from(pid).ok()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if tokio::time::timeout(Duration::from_secs(5), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use collegium_proto::toolset::v1::ToolDeclaration;

    fn described(tools: &[(&str, &str)]) -> DescribeResponse {
        DescribeResponse {
            protocol_version: 1,
            namespace: "bookmark".into(),
            build_version: "0.1.0".into(),
            tools: tools
                .iter()
                .map(|(name, description)| ToolDeclaration {
                    name: (*name).into(),
                    description: (*description).into(),
                    ..ToolDeclaration::default()
                })
                .collect(),
            ..DescribeResponse::default()
        }
    }

    #[test]
    fn s9_a_plugin_restarted_as_it_booted_has_no_differences() {
        let boot = described(&[("save", "Saves."), ("list", "Lists.")]);
        assert!(differences(&boot, &boot.clone()).is_empty());
    }

    #[test]
    fn s9_a_restarted_plugin_that_describes_itself_otherwise_is_named_field_by_field() {
        let boot = described(&[("save", "Saves."), ("list", "Lists.")]);
        let mut now = described(&[("save", "Saves a bookmark."), ("remove", "Removes.")]);
        now.settings_schema_json = "{\"type\":\"object\"}".into();
        let fields: Vec<String> = differences(&boot, &now)
            .into_iter()
            .map(|g| g.field)
            .collect();
        assert_eq!(
            fields,
            vec![
                "settings_schema_json",
                "tools.save",
                "tools.list",
                "tools.remove"
            ]
        );
    }

    #[test]
    fn s9_a_differing_restart_makes_the_plugin_unavailable_for_good() {
        let held = Held::new();
        let boot = described(&[("save", "Saves.")]);
        let now = described(&[("save", "Saves, differently.")]);
        assert!(held.described_again("bookmark", &boot, &boot).is_ok());
        assert!(held.unavailable().is_none());
        let refused = held.described_again("bookmark", &boot, &now);
        assert!(refused.is_err());
        let text = held.unavailable().expect("unavailable");
        assert!(
            text.starts_with("the plugin `bookmark` is unavailable until the daemon restarts: it was restarted after its process ended and describes itself differently from boot (tools.save)"),
            "{text}"
        );
        // A later description as at boot does not bring it back (§9).
        assert!(held.described_again("bookmark", &boot, &boot).is_ok());
        assert!(held.unavailable().is_some());
    }

    /// Whether process `pid` is gone or a zombie waiting to be reaped.
    fn ended(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
            })
            .unwrap_or(true)
    }

    /// A stop that arrives while a restarted plugin has not yet printed
    /// `ready` ends the start at once, and the half-started process dies
    /// with it rather than serve a socket nobody answers for; the plugin is
    /// not made unavailable, since nothing failed.
    #[tokio::test(flavor = "multi_thread")]
    async fn s9_a_stop_while_a_restart_awaits_ready_kills_the_restarted_process() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let serve = dir.path().join("serve");
        // Ready the first time; started again, it never says so.
        std::fs::write(
            &serve,
            "#!/bin/sh\nif [ -e \"$0.started\" ]; then echo $$ > \"$0.second\"; exec sleep 600; fi\n: > \"$0.started\"\necho ready\nexec sleep 600\n",
        )
        .expect("write");
        std::fs::set_permissions(&serve, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let launch = Launch {
            executable: serve.clone(),
            socket: dir.path().join("toolset.sock"),
            audit: dir.path().join("audit.jsonl"),
            daemon_uid: nix::unistd::getuid().as_raw(),
            run_as: None,
            storage: None,
        };
        let (child, _storage) = super::super::spawn(&launch).await.expect("first start");
        let first = child.id().expect("a pid");
        let held = Held::new();
        let supervisor = Supervisor::start("fixture".into(), child, launch, held.clone());
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(first).expect("pid")),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill -9");
        let marker = dir.path().join("serve.second");
        let deadline = Instant::now() + Duration::from_secs(10);
        let second: u32 = loop {
            if let Some(pid) = std::fs::read_to_string(&marker)
                .ok()
                .and_then(|text| text.trim().parse().ok())
            {
                break pid;
            }
            assert!(
                Instant::now() < deadline,
                "the plugin was not started again"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert!(!ended(second), "the restarted process awaits its ready");
        let stopping = Instant::now();
        supervisor.stop().await;
        assert!(
            stopping.elapsed() < Duration::from_secs(5),
            "the stop was seen at once, not after the start's deadline: {:?}",
            stopping.elapsed()
        );
        let deadline = Instant::now() + Duration::from_secs(5);
        while !ended(second) {
            assert!(
                Instant::now() < deadline,
                "the half-started plugin {second} outlived the stop"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert!(held.unavailable().is_none(), "a stop is no failure");
    }

    #[tokio::test]
    async fn s7_1_a_plugin_call_lost_is_a_tool_that_threw_naming_a_death() {
        let held = Held::new();
        let deaths = held.deaths();
        assert!(deaths.is_some(), "a started plugin's deaths are watched");
        held.note_death();
        match threw(deaths, "the worker's answer was lost".into()).await {
            CallOutcome::Threw(text) => assert!(
                text.starts_with(
                    "the plugin's process ended during the call (the worker's answer was lost)"
                ),
                "{text}"
            ),
            other => panic!("{other:?}"),
        }
        // An error while the process lives is a tool that threw too,
        // in its own words.
        let alive = held.deaths();
        assert_eq!(
            threw(alive, "the worker's answer was lost: boom".into()).await,
            CallOutcome::Threw("the worker's answer was lost: boom".into())
        );
    }
}
