//! The plugins the configuration grants (ARCHITECTURE §6, spec §3.14),
//! started by the daemon as its children or, with a user of their own
//! beside a daemon that is not root, run by their own units and connected
//! to. Each is a directory under the plugins root whose name is its
//! namespace, holding an executable `serve` that serves `Toolset` on the
//! socket the daemon names and prints `ready`.
//! Its tools are declared by its handshake, checked at boot: a grant of a
//! tool it does not serve, a tool that does not state its gate, or a weaker
//! sandbox than expected refuses boot, naming the plugin and the field.
//!
//! - `refusals`: the layout and description checks (§3.14).
//! - `root`: who may write the plugins' code (§6.1).
//! - `env`: the minimal environment a child plugin starts with.
//! - `restart`: a crashed plugin restarted, held to its boot description.
//! - `own_unit`: where a plugin runs, and a unit-run plugin connected to.
//! - `child`: a plugin started as the daemon's child, and started again.
//! - `boot_checks`: the grants, settings and code a plugin is held to.

use std::collections::BTreeSet;
use std::time::Duration;

use collegium_worker_kit::grant::GrantSigner;
use tokio::process::Child;

pub mod boot_checks;
pub mod check;
pub mod child;
pub mod env;
pub mod own_unit;
pub mod refusals;
pub mod restart;
pub mod root;
pub mod served_unit;

pub use boot_checks::ungranted;
pub use child::{Launch, StorageBinding};

use super::declarations;
use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use crate::config::LoadedConfig;
use crate::plugin_storage::serve::DaemonEnd;
use crate::tools::{Host, Registry, ToolsetDeclaration, ToolsetKind};
use boot_checks::{check_grants, check_root, check_settings, warn_of_ungranted};
use child::{READY_WITHIN, launch, spawn};

/// The executable a plugin directory holds.
pub const EXECUTABLE: &str = "serve";

/// How long a plugin may take to answer `Describe` once ready (§3.14).
pub const DESCRIBE_WITHIN: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin `{namespace}`: {reason}")]
    Start { namespace: String, reason: String },
    #[error(
        "plugin `{namespace}` is refused (§3.14):\n  - {}",
        refusals.join("\n  - ")
    )]
    Refused {
        namespace: String,
        refusals: Vec<String>,
    },
    #[error(
        "the plugins' code is writable by someone other than root (§6.1):\n  - {}",
        .0.join("\n  - ")
    )]
    Writable(Vec<String>),
    #[error(
        "a plugin directory takes a framework namespace (§3.14):\n  - {}",
        .0.join("\n  - ")
    )]
    Reserved(Vec<String>),
    #[error(transparent)]
    Worker(#[from] WorkerError),
    #[error("{0}")]
    Grant(String),
    #[error(
        "plugin `{namespace}`: what its agents are configured with does not fit what it declares (§3.4):\n  - {}",
        problems.join("\n  - ")
    )]
    Settings {
        namespace: String,
        problems: Vec<String>,
    },
}

/// A plugin the daemon connected to and checked (§3.14). A child it started
/// is watched and restarted when it ends, and stopping it stops the
/// process; a daemon that ends without stopping it takes it along
/// (`die_with_daemon`). A unit-run plugin is its unit's to restart and stop.
pub struct RunningToolset {
    pub worker: std::sync::Arc<Worker>,
    pub declaration: ToolsetDeclaration,
    /// None for a plugin its own unit runs: systemd restarts that one, and
    /// its next call holds it to its boot description all the same.
    supervisor: Option<restart::Supervisor>,
}

impl RunningToolset {
    /// Asks a child's process to stop and waits a moment for it; kills it
    /// after. A unit-run plugin is its unit's to stop.
    pub async fn stop(self) {
        if let Some(supervisor) = self.supervisor {
            supervisor.stop().await;
        }
    }
}

/// The namespaces granted to some agent that no framework toolset declares.
pub fn granted_plugins(loaded: &LoadedConfig) -> BTreeSet<String> {
    loaded
        .agents
        .iter()
        .flat_map(|agent| {
            agent
                .namespaces
                .iter()
                .cloned()
                .chain(agent.tools.iter().map(|t| t.namespace.clone()))
        })
        .filter(|namespace| loaded.registry.toolset(namespace).is_none())
        .collect()
}

/// The plugins running for this boot, and the declaration registry with
/// their toolsets beside the framework's: grants, name resolution and schema
/// validation read this one registry, whoever serves the tool (§3.4).
pub struct Toolsets {
    pub running: Vec<RunningToolset>,
    pub registry: Registry,
    /// Plugins a check left to the daemon's boot: their own units run them.
    pub left_to_boot: Vec<LeftToBoot>,
    /// The storage listener unit-run plugins connect to, while any runs.
    storage_listener: Option<crate::plugin_storage::serve::StorageListener>,
}

impl Toolsets {
    /// Stops every child plugin and the storage listener.
    pub async fn stop(self) {
        if let Some(listener) = self.storage_listener {
            listener.stop();
        }
        for toolset in self.running {
            toolset.stop().await;
        }
    }
}

/// A plugin `collegium config check` did not start: its own unit runs it,
/// and handing it the check's key would take it from the running daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftToBoot {
    pub namespace: String,
    pub user: String,
}

/// Why the plugins are started: for a daemon's boot, or for a check that
/// must leave a running deployment's plugins alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Boot,
    Check,
}

/// Starts every granted plugin, connects to it with the boot's key, and
/// checks its description and the grants that name its tools.
pub async fn start(
    loaded: &LoadedConfig,
    signer: &GrantSigner,
    store: &crate::store::StoreHandle,
    purpose: Purpose,
) -> Result<Toolsets, PluginError> {
    let deployment = &loaded.config.deployment;
    let mut running = Vec::new();
    let mut left_to_boot = Vec::new();
    let mut unit_run = own_unit::UnitRun::default();
    let mut registry = loaded.registry.clone();
    let plugins: Vec<String> = granted_plugins(loaded).into_iter().collect();
    check_root(loaded, &plugins)?;
    let reserved = refusals::reserved_dirs(&deployment.plugins_root);
    if !reserved.is_empty() {
        return Err(PluginError::Reserved(reserved));
    }
    for namespace in plugins {
        match start_one(loaded, signer, store, purpose, &namespace, &mut registry).await {
            Ok(Reached::Running(toolset, bound)) => {
                if let Some((uid, collections)) = bound {
                    unit_run.bind(uid, collections);
                }
                running.push(toolset);
            }
            Ok(Reached::LeftToBoot(left)) => left_to_boot.push(left),
            // The plugins already started are stopped, not left to a
            // daemon that will not run them.
            Err(error) => {
                for toolset in running {
                    toolset.stop().await;
                }
                return Err(error);
            }
        }
    }
    // §3.14: a unit-run plugin's storage connection is bound by its uid.
    let socket = deployment
        .runtime_dir
        .join(crate::plugin_storage::serve::SOCKET_NAME);
    let storage_listener = match unit_run.listen(&socket, store) {
        Ok(listener) => listener,
        Err(e) => {
            for toolset in running {
                toolset.stop().await;
            }
            return Err(PluginError::Start {
                namespace: "(unit-run plugins)".into(),
                reason: e.to_string(),
            });
        }
    };
    Ok(Toolsets {
        running,
        registry,
        left_to_boot,
        storage_listener,
    })
}

/// What starting one plugin came to.
enum Reached {
    /// Started and checked; a unit-run plugin's uid and collections, for
    /// the storage listener to bind.
    Running(
        RunningToolset,
        Option<(u32, crate::plugin_storage::Collections)>,
    ),
    /// Left by a check to the daemon's boot.
    LeftToBoot(LeftToBoot),
}

/// Starts or connects to the plugin `namespace`, checks it, and joins its
/// toolset to `registry`.
async fn start_one(
    loaded: &LoadedConfig,
    signer: &GrantSigner,
    store: &crate::store::StoreHandle,
    purpose: Purpose,
    namespace: &str,
    registry: &mut Registry,
) -> Result<Reached, PluginError> {
    let namespace = namespace.to_owned();
    let deployment = &loaded.config.deployment;
    let start_error = |reason: String| PluginError::Start {
        namespace: namespace.clone(),
        reason,
    };
    let refused = |refusals: Vec<String>| PluginError::Refused {
        namespace: namespace.clone(),
        refusals,
    };
    // The layout before anything runs (§3.14): the directory, its
    // executable, and every skill it ships, assigned or not.
    let executable = refusals::layout(&deployment.plugins_root, &namespace)
        .map_err(|refusal| refused(vec![refusal]))?;
    let skill_refusals = refusals::skills(&deployment.plugins_root, &namespace);
    if !skill_refusals.is_empty() {
        return Err(refused(skill_refusals));
    }
    let daemon = SandboxExpectation::of_this_process().map_err(|e| start_error(e.to_string()))?;
    let user = loaded
        .config
        .plugins
        .get(&namespace)
        .and_then(|p| p.user.as_deref());
    let placement = own_unit::placement(user, &daemon).map_err(&start_error)?;
    // Where `host::reach` has the shell worker try it as each agent,
    // and where collegium-plugin@.service serves it.
    let socket = super::framework::socket(loaded, &namespace);
    let started = match &placement {
        own_unit::Placement::Child(run_as) => {
            let launch =
                launch(loaded, &namespace, executable, &daemon, run_as).map_err(&start_error)?;
            let (child, storage) = spawn(&launch).await.map_err(&start_error)?;
            Started::Child(Box::new((launch, child, storage)))
        }
        own_unit::Placement::OwnUnit(user) if purpose == Purpose::Check => {
            return Ok(Reached::LeftToBoot(LeftToBoot {
                namespace: namespace.clone(),
                user: user.name.clone(),
            }));
        }
        own_unit::Placement::OwnUnit(user) => {
            own_unit::await_socket(&namespace, user, &socket, READY_WITHIN)
                .await
                .map_err(&start_error)?;
            Started::OwnUnit(user.uid.as_raw())
        }
    };
    let sandbox = match placement.user() {
        // A plugin under a user of its own holds no capability: one started
        // from root loses them in the uid switch, a unit's has an empty
        // bounding set; either must say so.
        Some(user) => SandboxExpectation {
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            allowed_capabilities: 0,
            landlock_floor: None,
            command_cgroups: false,
            command_namespaces: &[],
            command_bounds: &[],
        },
        None => daemon,
    };
    let spec = WorkerSpec {
        socket,
        served_by: Some(sandbox.uid),
        // The plugin's description is its declaration (§3.14): what is
        // compared here is its sandbox, and its tools' own consistency.
        declaration: ToolsetDeclaration {
            namespace: namespace.clone(),
            kind: ToolsetKind::Plugin,
            host: Host::Plugin,
            tools: Vec::new(),
            settings_schema: serde_json::json!({"type": "object"}),
            skills: Vec::new(),
        },
        sandbox,
    };
    // The description's own refusals are found as it is read, and said
    // before the handshake's: they name what the plugin must change.
    let mut described_refusals = Vec::new();
    let connected = tokio::time::timeout(
        DESCRIBE_WITHIN,
        Worker::connect_declaring(&spec, signer, |ns, described| {
            described_refusals = refusals::described(described);
            declarations::plugin(ns, described)
        }),
    )
    .await
    .map_err(|_| {
        refused(vec![format!(
            "it gave no `Describe` answer within {} s of serving {}; answer `Describe` as soon as the socket is served",
            DESCRIBE_WITHIN.as_secs(),
            spec.socket.display()
        )])
    })?;
    if !described_refusals.is_empty() {
        return Err(refused(described_refusals));
    }
    let (worker, declaration) = connected?;
    // §3.14: its collections compile or boot is refused; then its
    // storage connection is served, bound to its namespace, and a
    // restarted child's fresh one is served for the same collections.
    let collections = crate::plugin_storage::collections::compile(
        &namespace,
        &worker.described().storage_collections,
    )
    .map_err(|e| start_error(e.to_string()))?;
    let held = match started {
        Started::Child(_) => restart::Held::new(),
        Started::OwnUnit(_) => restart::Held::unit_run(),
    };
    let mut bound = None;
    let supervisor = match started {
        Started::Child(started) => {
            let (launch, child, storage) = *started;
            let binding = StorageBinding {
                collections,
                store: store.clone(),
            };
            binding
                .serve(storage)
                .map_err(|e| start_error(format!("cannot serve its storage: {e}")))?;
            let launch = Launch {
                storage: Some(binding),
                ..launch
            };
            Some((child, launch))
        }
        Started::OwnUnit(uid) => {
            bound = Some((uid, collections));
            None
        }
    };
    registry
        .add(declaration.clone())
        .map_err(|e| start_error(e.to_string()))?;
    check_grants(loaded, registry, &namespace)?;
    check_settings(loaded, &declaration)?;
    warn_of_ungranted(loaded, &declaration);
    tracing::info!(
        plugin = %namespace,
        tools = declaration.tools.len(),
        "plugin ready"
    );
    let worker = std::sync::Arc::new(worker.hold_as_plugin(held.clone()));
    let supervisor = supervisor
        .map(|(child, launch)| restart::Supervisor::start(namespace.clone(), child, launch, held));
    Ok(Reached::Running(
        RunningToolset {
            worker,
            declaration,
            supervisor,
        },
        bound,
    ))
}

/// A plugin this boot reached: a child started here, with its storage
/// connection still to serve, or one its own unit runs as `uid`.
enum Started {
    /// Boxed: a launch and a child are large beside a uid.
    Child(Box<(Launch, Child, DaemonEnd)>),
    OwnUnit(u32),
}
