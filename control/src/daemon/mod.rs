//! The daemon's lifecycle: check the configuration, open the store, record
//! this run, stamp liveness while running, and record a clean stop on SIGTERM
//! (§7.3). Between the boot checks and the stop, the agents listen: one
//! socket per bot, the lanes, and the turns they start (`runtime`).

mod backfill;
mod grants;
mod logging;
mod mattermost;
mod models;
mod notify;
mod privilege;
mod runtime;
mod seats;

use std::path::Path;
use std::time::Duration;

use tracing::{info, warn};

use collegium_worker_kit::grant::GrantSigner;

use crate::config::{self, LoadError};
use crate::store::{Store, StoreError, StoreHandle};
use crate::workers::plugins;

pub use logging::init as init_logging;

/// How often a running daemon stamps the store, so a crash leaves a last known
/// alive time no older than this (§7.3).
pub const LIVENESS_INTERVAL: Duration = Duration::from_secs(15);

/// How long the `test-hooks` build's SIGUSR1 wedges the store thread.
#[cfg(feature = "test-hooks")]
const TEST_WEDGE: Duration = Duration::from_secs(8);

/// The store's file name inside the state directory.
pub const STORE_FILE: &str = "collegium.db";

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("the configuration is refused:\n{}", .0.report().trim_end())]
    Config(#[from] LoadError),
    #[error("cannot create the state directory {path}: {source}")]
    StateDir {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error(transparent)]
    RunningAsRoot(#[from] privilege::RunningAsRoot),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    #[error("cannot read the secret at {key}: {source}")]
    Secret {
        key: String,
        source: crate::config::secret::SecretError,
    },
    #[error("cannot build an HTTP client: {0}")]
    Http(reqwest::Error),
    #[error("boot refused: a model refused its credential (§7.3):\n{0}")]
    ModelsRefused(String),
    #[error(
        "boot refused: Mattermost is not provisioned for this configuration:\n  - {problems}\nRun `{fix}` to converge it."
    )]
    MattermostNotReady { problems: String, fix: String },
    #[error("boot refused: {0}")]
    MattermostUnreachable(String),
    #[error("boot refused:\n  - {0}")]
    RespondToAllShared(String),
    #[error("boot refused: {0}")]
    Plugin(#[from] crate::workers::plugins::PluginError),
    #[error("boot refused: {0}")]
    FrameworkWorker(#[from] crate::workers::framework::FrameworkError),
    #[error("boot refused: {0}")]
    Callbacks(String),
    #[error("boot refused: {0}")]
    Triggers(String),
    #[error("boot refused: {0}")]
    Unserved(#[from] grants::Unserved),
    #[error("boot refused: cannot read the prompt of @{agent} at {path}: {source}")]
    Prompt {
        agent: String,
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Raises the soft limit on open descriptors to the hard limit: the
/// daemon's store, its Mattermost socket and its model connections must not
/// run out because the callback port is busy (§6.4), whose connections are
/// capped far below it (`callbacks::connections::LIMITS`).
fn raise_descriptor_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    // An unlimited hard limit still stops the soft one at the kernel's
    // per-process ceiling, `fs.nr_open`.
    let Some(ceiling) = limit.maximum.or_else(nr_open) else {
        return;
    };
    if limit.current == Some(ceiling) {
        return;
    }
    let raised = rustix::process::Rlimit {
        current: Some(ceiling),
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => info!(
            descriptors = ceiling,
            "descriptor limit raised to the hard limit"
        ),
        Err(error) => warn!(%error, "the descriptor limit could not be raised"),
    }
}

/// The kernel's ceiling on one process's descriptors.
fn nr_open() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// Runs the daemon until SIGTERM or SIGINT.
pub fn run(config_path: &Path) -> Result<(), DaemonError> {
    init_logging();
    raise_descriptor_limit();
    let loaded = config::load(config_path)?;
    info!(
        config = %config_path.display(),
        agents = loaded.agents.len(),
        "configuration checked"
    );
    // Before the store or Mattermost is touched: a root daemon would make
    // the store root's, and a later unprivileged start could not open it.
    privilege::check_self(loaded.config.deployment.allow_root)?;
    let state_dir = &loaded.config.deployment.state_dir;
    create_private_dir(state_dir)?;
    let store_path = state_dir.join(STORE_FILE);
    let store = Store::open(&store_path)?;
    info!(
        store = %store_path.display(),
        schema_version = store.schema_version()?,
        "store open"
    );
    // The store thread starts now, not after the handshakes, so the
    // watchdog's probe has it to answer from the first ping on (issue 21).
    let store = StoreHandle::spawn(store).map_err(DaemonError::Runtime)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("collegium")
        .build()
        .map_err(DaemonError::Runtime)?;
    runtime.block_on(async {
        // Installed before anything else, so a stop that arrives while the
        // daemon is still verifying its models is a clean stop, not a kill.
        let mut signals = Signals::install().map_err(DaemonError::Runtime)?;
        let _watchdog = notify::watchdog(store.clone());
        #[cfg(feature = "test-hooks")]
        let _wedge = notify::wedge_hook(store.clone(), TEST_WEDGE).map_err(DaemonError::Runtime)?;
        // The checks only read (the models, Mattermost) and can take tens
        // of seconds: a stop meanwhile ends the boot at once rather than
        // after it, with nothing started and no run recorded. From the
        // plugins on, the boot runs to its end and then stops.
        let credentials = tokio::select! {
            checked = boot_checks(&loaded) => checked?,
            signal = signals.next() => {
                notify::stopping();
                info!(signal, "stopped during the boot's checks; no run was recorded");
                return Ok(());
            }
        };
        notify::phase(notify::Phase::ConnectingWorkers);
        let boot_id = uuid::Uuid::now_v7().to_string();
        // This boot's grant-signing key: every worker gets its public half at
        // the handshake, and it dies with the process (ARCHITECTURE §4).
        let signer = GrantSigner::generate(&boot_id);
        let toolsets = plugins::start(&loaded, &signer, &store, plugins::Purpose::Boot).await?;
        info!(
            toolsets = toolsets.registry.toolsets().count(),
            plugins = toolsets.running.len(),
            "declaration registry complete"
        );
        let mut workers: std::collections::BTreeMap<_, _> = toolsets
            .running
            .iter()
            .map(|t| (t.declaration.namespace.clone(), t.worker.clone()))
            .collect();
        // Bound before the shell worker's handshake, whose probe tries it as
        // each agent's user and must find it listening (§6.4).
        let callbacks = crate::callbacks::bind(loaded.config.callbacks.bind)
            .await
            .map_err(|e| DaemonError::Callbacks(e.to_string()))?;
        workers.extend(
            crate::workers::framework::connect(&loaded, &toolsets.registry, &signer).await?,
        );
        let pdf = crate::workers::framework::connect_pdf(&loaded, &toolsets.registry)
            .await?
            .map(std::sync::Arc::new);
        // Every mailbox is proved at boot: refused credentials refuse it
        // (§3.13); an unreachable server is said and polling goes on.
        let mailboxes =
            crate::workers::framework::connect_mailboxes(&loaded, &toolsets.registry).await?;
        let mut mail_unreachable = std::collections::BTreeMap::new();
        for state in mailboxes.iter().flat_map(|(_, states)| states) {
            if let crate::workers::mail::Check::Unreachable(detail) = &state.check {
                tracing::warn!(agent = %state.agent, %detail, "a mailbox could not be reached at boot");
                mail_unreachable.insert(state.agent.clone(), detail.clone());
            }
        }
        let mail = mailboxes.map(|(worker, _)| std::sync::Arc::new(worker));
        // Every grant is served before this boot counts as a run (A4).
        let offered = grants::offered(&loaded, &toolsets.registry, &workers)?;
        notify::phase(notify::Phase::Recovering);
        let (previous, started) = record_start(&store, &boot_id).await?;
        let trigger_secret = loaded
            .config
            .callbacks
            .trigger_secret
            .as_ref()
            .map(|secret| secret.reveal())
            .transpose()
            .map_err(|e| DaemonError::Callbacks(format!("callbacks.trigger_secret: {e}")))?;
        let agents = runtime::start(
            runtime::Boot {
                loaded: &loaded,
                credentials: &credentials,
                registry: &toolsets.registry,
                workers,
                pdf,
                mail,
                mail_unreachable,
                offered,
                signer,
                store: store.clone(),
                boot_id: boot_id.clone(),
                previous,
                started,
                trigger_secret,
            },
            callbacks,
        )
        .await;
        let served = match agents {
            Ok(agents) => {
                // The sweep ran and the boot notice was posted (§7.3).
                notify::ready();
                let served = serve(store, signals, boot_id).await;
                agents.stop();
                served
            }
            Err(error) => Err(error),
        };
        toolsets.stop().await;
        served
    })
}

/// What the boot checks before it starts anything: the models answer
/// (§7.3) and Mattermost is provisioned; the credentials it holds.
async fn boot_checks(
    loaded: &config::LoadedConfig,
) -> Result<crate::chat::credentials::Credentials, DaemonError> {
    notify::phase(notify::Phase::VerifyingModels);
    notify::extend_start(models::VERIFY_DEADLINE * 2);
    models::verify_models(loaded).await?;
    notify::phase(notify::Phase::CheckingMattermost);
    mattermost::check(loaded).await
}

/// The two signals that stop the daemon cleanly.
struct Signals {
    terminate: tokio::signal::unix::Signal,
    interrupt: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    /// The next stop signal, by name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.interrupt.recv() => "SIGINT",
        }
    }
}

/// Records this run, and says how the previous one ended (§7.3).
async fn record_start(
    store: &StoreHandle,
    boot_id: &str,
) -> Result<(Option<crate::store::ProcessRun>, i64), DaemonError> {
    let version = env!("CARGO_PKG_VERSION");
    let started = now_millis();
    {
        let boot_id = boot_id.to_string();
        store
            .call(move |s| s.begin_run(&boot_id, version, started))
            .await?;
    }
    let previous = {
        let boot_id = boot_id.to_string();
        store.call(move |s| s.previous_run(&boot_id)).await?
    };
    match &previous {
        Some(run) => match run.stopped_at {
            Some(stopped) => info!(
                previous_boot = %run.boot_id,
                down_ms = started - stopped,
                "previous run stopped cleanly"
            ),
            None => warn!(
                previous_boot = %run.boot_id,
                down_ms_since_last_alive = started - run.last_alive_at,
                "previous run did not stop cleanly; it was last known alive before this"
            ),
        },
        None => info!("first run against this store"),
    }
    info!(boot_id = %boot_id, version, "collegium is running");
    Ok((previous, started))
}

/// Stamps liveness until a stop signal, then records the clean stop.
async fn serve(
    store: StoreHandle,
    mut signals: Signals,
    boot_id: String,
) -> Result<(), DaemonError> {
    let mut liveness = tokio::time::interval(LIVENESS_INTERVAL);
    liveness.tick().await;
    let signal = loop {
        tokio::select! {
            signal = signals.next() => break signal,
            _ = liveness.tick() => {
                let boot_id = boot_id.clone();
                let now = now_millis();
                let store = store.clone();
                // Stamped beside the loop, not in it: a slow or wedged store
                // must not keep a stop signal from being heard and said
                // (`STOPPING=1`, issue 21).
                tokio::spawn(async move {
                    if let Err(error) = store.call(move |s| s.stamp_liveness(&boot_id, now)).await {
                        warn!(%error, "could not stamp liveness");
                    }
                });
            }
        }
    };
    notify::stopping();
    let stopped = now_millis();
    store
        .call(move |s| s.record_clean_stop(&boot_id, stopped))
        .await?;
    info!(signal, "stopped cleanly");
    Ok(())
}

fn create_private_dir(path: &Path) -> Result<(), DaemonError> {
    // The store must be unreadable by agent users (A2): the directory is the
    // daemon's alone.
    crate::ownership::private_dir(path).map_err(|source| DaemonError::StateDir {
        path: path.to_path_buf(),
        source,
    })
}

fn now_millis() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
