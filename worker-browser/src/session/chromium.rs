//! One Chromium process per session: started with the flags that send all
//! of its traffic through the egress proxy (§3.4 scope), a fresh profile,
//! its own sandbox on unless this process is root, in a process group of its
//! own so that ending it leaves no renderer behind. Its DevTools is a pipe,
//! never a port (`devtools`).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use chromiumoxide::Browser;
use chromiumoxide::handler::HandlerConfig;
use command_fds::{CommandFdExt, FdMapping};
use futures::StreamExt;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::config::SessionsConfig;
use super::devtools::{self, Bridge};

/// How long Chromium may take to answer its first DevTools command.
const LAUNCH_WAIT: Duration = Duration::from_secs(20);
/// How long one CDP command may take before it counts as a hung browser.
const COMMAND_WAIT: Duration = Duration::from_secs(15);
/// How long ending a browser waits for its processes to be gone.
const EXIT_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "the browser worker is running as root, where Chromium will not start with its sandbox; the worker runs as its own unprivileged user"
    )]
    RootWithSandbox,
    #[error("Chromium ({path}) did not start: {source}")]
    Spawn {
        path: String,
        source: std::io::Error,
    },
    #[error("Chromium's profile directory could not be made: {0}")]
    Profile(std::io::Error),
    #[error("Chromium's DevTools pipe could not be made: {0}")]
    Pipe(std::io::Error),
    #[error("Chromium did not answer on its DevTools pipe within {0:?}")]
    NoDevTools(Duration),
    #[error("Chromium's DevTools did not answer: {0}")]
    Connect(chromiumoxide::error::CdpError),
}

/// Whether Chromium runs with its own sandbox: on unless this process is root.
pub fn sandboxed() -> bool {
    !nix::unistd::geteuid().is_root()
}

/// The process group of a running Chromium, kept apart from the session so
/// a turn's end can stop it while an action still holds the session.
#[derive(Debug, Clone)]
pub struct Group {
    pid: i32,
}

impl Group {
    pub fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Kills every process of the group and waits, boundedly, until none is
    /// left running.
    pub async fn kill(&self) {
        let _ = killpg(Pid::from_raw(self.pid), Signal::SIGKILL);
        let deadline = tokio::time::Instant::now() + EXIT_WAIT;
        while tokio::time::Instant::now() < deadline && !group_members(self.pid).is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The live (not zombie) processes of process group `pgid`, from /proc.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // The command name is parenthesised and may hold spaces: the
            // fields that follow start after the last ')'.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            // state, ppid, pgrp
            fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
        })
        .collect()
}

pub struct Chromium {
    pub browser: Browser,
    pub group: Group,
    /// Becomes true once the DevTools connection is gone: the browser exited,
    /// crashed or was killed.
    pub gone: watch::Receiver<bool>,
    child: Child,
    handler: JoinHandle<()>,
    _bridge: Bridge,
    _profile: tempfile::TempDir,
}

impl Chromium {
    pub async fn launch(config: &SessionsConfig) -> Result<Self, LaunchError> {
        let root = !sandboxed();
        if root && !config.root_without_sandbox {
            return Err(LaunchError::RootWithSandbox);
        }
        let profile = tempfile::Builder::new()
            .prefix("collegium-chromium-")
            .tempdir()
            .map_err(LaunchError::Profile)?;
        no_udp_preferences(profile.path()).map_err(LaunchError::Profile)?;
        let (ours, theirs) = devtools::pipes().map_err(LaunchError::Pipe)?;
        let mut command = Command::new(&config.chromium);
        command
            .args(arguments(profile.path(), config, root))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: theirs.reads,
                    child_fd: 3,
                },
                FdMapping {
                    parent_fd: theirs.writes,
                    child_fd: 4,
                },
            ])
            // Two mappings to two distinct child fds cannot collide.
            .map_err(|e| LaunchError::Pipe(std::io::Error::other(e)))?;
        let spawned = command.spawn();
        // The command holds Chromium's ends of the pipes; closed here, so
        // that Chromium's exit reads as the end of its pipe.
        drop(command);
        let mut child = spawned.map_err(|source| LaunchError::Spawn {
            path: config.chromium.display().to_string(),
            source,
        })?;
        // The group's id is the child's pid (process_group(0)).
        let pid = child.id().and_then(|p| i32::try_from(p).ok()).unwrap_or(0);
        let group = Group { pid };
        // Chromium keeps writing to stderr; a pipe nobody reads would stall it.
        if let Some(stderr) = child.stderr.take() {
            let mut lines = BufReader::new(stderr).lines();
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    tracing::trace!(target: "chromium", "{line}");
                }
            });
        }
        let bridge = match Bridge::open(ours).await {
            Ok(bridge) => bridge,
            Err(error) => {
                group.kill().await;
                return Err(LaunchError::Pipe(error));
            }
        };
        let handler_config = HandlerConfig {
            // A certificate that fails is the site's failure to report, never
            // one to click through (§3.4 certificates).
            ignore_https_errors: false,
            request_timeout: COMMAND_WAIT,
            viewport: None,
            ..HandlerConfig::default()
        };
        let (browser, mut handler) =
            match Browser::connect_with_config(bridge.url.clone(), handler_config).await {
                Ok(pair) => pair,
                Err(error) => {
                    group.kill().await;
                    return Err(LaunchError::Connect(error));
                }
            };
        let (gone_tx, gone) = watch::channel(false);
        let handler = tokio::spawn(async move {
            while let Some(event) = handler.next().await {
                if let Err(error) = event {
                    tracing::debug!("CDP: {error}");
                }
            }
            let _ = gone_tx.send(true);
        });
        // The bridge admits chromiumoxide without Chromium: its first answer
        // is what shows that Chromium is up.
        let answered = tokio::time::timeout(LAUNCH_WAIT, browser.version()).await;
        if !matches!(answered, Ok(Ok(_))) {
            group.kill().await;
            handler.abort();
            return Err(match answered {
                Ok(Err(error)) => LaunchError::Connect(error),
                _ => LaunchError::NoDevTools(LAUNCH_WAIT),
            });
        }
        Ok(Self {
            browser,
            group,
            gone,
            child,
            handler,
            _bridge: bridge,
            _profile: profile,
        })
    }

    /// Whether the browser has gone: its connection closed or its process exited.
    pub fn is_gone(&mut self) -> bool {
        *self.gone.borrow() || !matches!(self.child.try_wait(), Ok(None))
    }

    /// Stops the browser and every process it started; the profile goes
    /// with `self`.
    pub async fn stop(mut self) {
        self.group.kill().await;
        let _ = self.child.wait().await;
        self.handler.abort();
    }
}

/// The profile's WebRTC preferences: no UDP but what a proxy carries, and
/// so none (§3.4 scope). Written before Chromium first reads its profile;
/// the turn's incognito context inherits them.
fn no_udp_preferences(profile: &Path) -> std::io::Result<()> {
    let default = profile.join("Default");
    std::fs::create_dir_all(&default)?;
    let preferences = serde_json::json!({
        "webrtc": {
            "ip_handling_policy": "disable_non_proxied_udp",
            "multiple_routes_enabled": false,
            "nonproxied_udp_enabled": false,
        }
    });
    std::fs::write(default.join("Preferences"), preferences.to_string())
}

fn arguments(profile: &Path, config: &SessionsConfig, root: bool) -> Vec<String> {
    let mut args: Vec<String> = [
        "--headless",
        // DevTools on fds 3 and 4, and no port (`devtools`).
        "--remote-debugging-pipe",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-extensions",
        "--disable-breakpad",
        "--disable-domain-reliability",
        "--metrics-recording-only",
        // Chromium's own calls home (network time, optimization hints,
        // casting, translation, phishing models) would go through the proxy
        // as the deployment's traffic; none is the agent's.
        "--disable-features=OptimizationHints,OptimizationHintsFetching,OptimizationGuideModelDownloading,NetworkTimeServiceQuerying,MediaRouter,Translate",
        "--disable-client-side-phishing-detection",
        "--disable-component-extensions-with-background-pages",
        "--no-pings",
        "--disable-quic",
        // No UDP that does not go through the proxy (which carries none):
        // WebRTC cannot reach an address the policy would refuse (§3.4).
        // The switch's older name, --force-webrtc-ip-handling-policy, is
        // ignored by Chromium 156, whose STUN then reached a honeypot in the
        // SSRF lab; the profile's preference (`no_udp_preferences`) holds
        // the same policy should this name go too.
        "--webrtc-ip-handling-policy=disable_non_proxied_udp",
        "--disable-dev-shm-usage",
        "--mute-audio",
        "--hide-scrollbars",
        "--window-size=1280,1000",
        "--password-store=basic",
        "--use-mock-keychain",
    ]
    .iter()
    .map(|s| (*s).to_string())
    .collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    if let Some(proxy) = config.proxy {
        args.push(format!("--proxy-server=http://{proxy}"));
        // Chromium sends loopback straight past a proxy unless told not
        // to; the proxy judges loopback like any other address (§3.4).
        args.push("--proxy-bypass-list=<-loopback>".into());
    }
    if root {
        args.push("--no-sandbox".into());
    }
    args.push("about:blank".into());
    args
}
