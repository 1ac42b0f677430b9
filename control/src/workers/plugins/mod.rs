//! Toolset processes the daemon starts itself: the plugins the configuration
//! grants (ARCHITECTURE §6, spec §3.14). Each is a directory under the
//! plugins root whose name is its namespace, holding an executable `serve`
//! that serves `Toolset` on the socket the daemon names and prints `ready`.
//! Its tools are declared by its handshake, checked at boot: a grant of a
//! tool it does not serve, a tool that does not state its gate, or a weaker
//! sandbox than expected refuses boot, naming the plugin and the field.
//!
//! - `refusals`: the layout and description checks (§3.14).
//! - `root`: who may write the plugins' code (§6.1).
//! - `env`: the minimal environment a child plugin starts with.
//! - `restart`: a crashed plugin restarted, held to its boot description.
//! - `own_unit`: where a plugin runs, and a unit-run plugin connected to.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use collegium_worker_kit::grant::GrantSigner;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub mod check;
pub mod env;
pub mod own_unit;
pub mod refusals;
pub mod restart;
pub mod root;
pub mod served_unit;

use super::declarations;
use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use crate::config::LoadedConfig;
use crate::plugin_storage::serve::DaemonEnd;
use crate::tools::{Host, Registry, ToolsetDeclaration, ToolsetKind};

/// The executable a plugin directory holds.
pub const EXECUTABLE: &str = "serve";

/// How long a plugin may take to print `ready`.
const READY_WITHIN: Duration = Duration::from_secs(10);

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

/// A plugin process the daemon started, connected and checked, watched
/// and restarted when it ends (§3.14). Stopping it stops the process; a
/// daemon that ends without stopping it takes it along (`die_with_daemon`).
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

/// How a plugin's process is started, kept to start it again the same way.
#[derive(Debug, Clone)]
pub struct Launch {
    pub executable: std::path::PathBuf,
    pub socket: std::path::PathBuf,
    pub audit: std::path::PathBuf,
    pub daemon_uid: u32,
    pub run_as: Option<nix::unistd::User>,
    /// What its storage connection serves, known once it has described
    /// itself at boot; every restart's fresh connection serves the same.
    pub storage: Option<StorageBinding>,
}

/// A plugin's collections and the store its `Storage` connection writes.
#[derive(Clone)]
pub struct StorageBinding {
    pub collections: crate::plugin_storage::collections::Collections,
    pub store: crate::store::StoreHandle,
}

impl std::fmt::Debug for StorageBinding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageBinding")
            .field("collections", &self.collections)
            .finish_non_exhaustive()
    }
}

impl StorageBinding {
    /// Serves `Storage` on a child's connection, bound to the namespace.
    pub fn serve(&self, end: DaemonEnd) -> std::io::Result<()> {
        end.serve(self.collections.clone(), self.store.clone())
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
    storage_listener: Option<tokio::task::JoinHandle<()>>,
}

impl Toolsets {
    /// Stops every child plugin and the storage listener.
    pub async fn stop(self) {
        if let Some(listener) = self.storage_listener {
            listener.abort();
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
        // A process started as another user from root keeps no
        // capability (the uid switch clears them), and must say so.
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
            "it printed `ready` and gave no `Describe` answer within {} s; answer `Describe` on {} as soon as it prints `ready`",
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
    let held = restart::Held::new();
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

/// How a child plugin is started, kept to start it again the same way.
/// Each gets a socket directory and an audit directory of its own, owned by
/// the user it runs as; their parents only let it pass.
fn launch(
    loaded: &LoadedConfig,
    namespace: &str,
    executable: std::path::PathBuf,
    daemon: &SandboxExpectation,
    run_as: &Option<nix::unistd::User>,
) -> Result<Launch, String> {
    let deployment = &loaded.config.deployment;
    let socket_dir = deployment.runtime_dir.join(namespace);
    let audit_dir = deployment.audit_dir.join(namespace);
    for (parent, dir) in [
        (&deployment.runtime_dir, &socket_dir),
        (&deployment.audit_dir, &audit_dir),
    ] {
        owned_dir(parent, dir, run_as.as_ref())?;
    }
    Ok(Launch {
        executable,
        socket: super::framework::socket(loaded, namespace),
        audit: audit_dir.join(format!("{namespace}.audit.jsonl")),
        daemon_uid: daemon.uid,
        run_as: run_as.clone(),
        storage: None,
    })
}

/// A plugin tool no agent holds is legitimate, and exactly what a forgotten
/// grant leaves: it is warned of, never refused (§3.14).
fn warn_of_ungranted(loaded: &LoadedConfig, declaration: &ToolsetDeclaration) {
    for tool in ungranted(loaded, declaration) {
        tracing::warn!(
            plugin = %declaration.namespace,
            tool = %tool,
            "no agent is granted this plugin tool"
        );
    }
}

/// The tools of `declaration` no agent is granted, by their tool segment.
pub fn ungranted(loaded: &LoadedConfig, declaration: &ToolsetDeclaration) -> Vec<String> {
    let namespace = &declaration.namespace;
    declaration
        .tools
        .iter()
        .filter(|tool| {
            !loaded.agents.iter().any(|agent| {
                agent.whole_namespaces.contains(namespace)
                    || agent
                        .tools
                        .iter()
                        .any(|t| t.namespace == *namespace && t.tool == tool.name)
            })
        })
        .map(|tool| tool.name.clone())
        .collect()
}

/// Nobody but root may write the plugins' code: not the daemon's user, and
/// not an agent's (§6.1).
fn check_root(loaded: &LoadedConfig, plugins: &[String]) -> Result<(), PluginError> {
    if plugins.is_empty() {
        return Ok(());
    }
    let agents: Vec<String> = loaded.agents.iter().map(|a| a.username.clone()).collect();
    let mut writers = vec![root::daemon()];
    writers.extend(root::agents(&agents));
    let refusals = root::writable(&loaded.config.deployment.plugins_root, plugins, &writers);
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Writable(refusals))
    }
}

/// Every grant of a single tool of `namespace` names a tool the registry
/// now holds, and every skill of `namespace` assigned is one it declares.
fn check_grants(
    loaded: &LoadedConfig,
    registry: &Registry,
    namespace: &str,
) -> Result<(), PluginError> {
    let served = registry
        .toolset(namespace)
        .map(|t| {
            t.tools
                .iter()
                .map(|tool| format!("`{}`", tool.name))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let mut problems = Vec::new();
    for (index, agent) in loaded.agents.iter().enumerate() {
        for tool in agent.tools.iter().filter(|t| t.namespace == namespace) {
            if registry.tool(tool).is_none() {
                problems.push(format!(
                    "agents[{index}] ({}): granted `{}::{}`, which the plugin `{namespace}` does not serve; it serves {served}",
                    agent.username, tool.namespace, tool.tool,
                ));
            }
        }
    }
    // §3.5: a skill's tools in this namespace, held at configuration time
    // by a whole-namespace grant before the plugin had described them, must
    // be tools it serves.
    for (index, agent) in loaded.agents.iter().enumerate() {
        for skill in &agent.skills {
            for tool in skill.tools.iter().filter(|t| t.namespace == namespace) {
                if registry.tool(tool).is_none() {
                    problems.push(format!(
                        "agents[{index}] ({}): the skill `{}` calls `{}::{}`, which the plugin `{namespace}` does not serve; it serves {served}",
                        agent.username, skill.name, tool.namespace, tool.tool,
                    ));
                }
            }
        }
    }
    // §3.5: a plugin's skill is assigned as its tools are granted, and only
    // one its description declares is one it ships.
    let declared = registry
        .toolset(namespace)
        .map(|t| t.skills.as_slice())
        .unwrap_or_default();
    for (index, agent) in loaded.agents.iter().enumerate() {
        for refusal in crate::skills::locate::undeclared(&agent.skills, namespace, declared) {
            problems.push(format!("agents[{index}] ({}): {refusal}", agent.username));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Grant(format!(
            "a grant names a tool or skill no plugin serves:\n  - {}",
            problems.join("\n  - ")
        )))
    }
}

/// Every granted agent's effective settings fit the schema the plugin
/// declared, and every tool of it granted by ref has the settings it works
/// under (§3.4): the checks `config check` makes of a framework toolset.
fn check_settings(
    loaded: &LoadedConfig,
    declaration: &ToolsetDeclaration,
) -> Result<(), PluginError> {
    let problems: Vec<String> = crate::config::declared_at_boot(&loaded.config, declaration)
        .into_iter()
        .map(|(agent, problem)| format!("@{agent}: {problem}"))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Settings {
            namespace: declaration.namespace.clone(),
            problems,
        })
    }
}

/// Starts `executable`, as `run_as` when given, and waits for its `ready`
/// line. The child dies with the daemon (`die_with_daemon`): the signal
/// follows the thread that forked, and this runs in the future the daemon's
/// main thread blocks on, never on a blocking-pool thread that ends when
/// idle.
async fn spawn(launch: &Launch) -> Result<(Child, DaemonEnd), String> {
    let Launch {
        executable,
        socket,
        audit,
        daemon_uid,
        run_as,
        storage: _,
    } = launch;
    let mut command = Command::new(executable);
    command
        .arg("--socket")
        .arg(socket)
        .arg("--audit")
        .arg(audit)
        .args(["--allow-uid", &daemon_uid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    // Nothing of the daemon's environment: no token, key or secret, and
    // not its notify socket, whose readiness is not a plugin's to speak for
    // (issue 21).
    env::apply(&mut command, run_as.as_ref());
    if let Some(user) = run_as {
        become_user(&mut command, user)?;
    }
    die_with_daemon(&mut command);
    // §3.14: the child's storage connection, fd 3 (plugin_storage::serve).
    let storage =
        crate::plugin_storage::serve::hand_to_child(&mut command).map_err(|e| e.to_string())?;
    let spawned = command.spawn();
    let storage = storage.spawned();
    let mut child = spawned.map_err(|e| {
        format!(
            "cannot start {}: {e}{}",
            executable.display(),
            env::unsupported_hint(&e)
        )
    })?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    match tokio::time::timeout(READY_WITHIN, lines.next_line()).await {
        Ok(Ok(Some(line))) if line.trim() == "ready" => Ok((child, storage)),
        Ok(Ok(Some(line))) => Err(format!("printed {line:?} where `ready` was expected")),
        Ok(Ok(None)) => {
            let status = child.wait().await.map_err(|e| e.to_string())?;
            Err(format!("exited ({status}) before it was ready"))
        }
        Ok(Err(e)) => Err(format!("cannot read its output: {e}")),
        Err(_) => Err(format!(
            "did not print `ready` within {} s",
            READY_WITHIN.as_secs()
        )),
    }
}

/// Starts the child as `user` with the groups the host gives that user.
/// std's own switch drops every supplementary group, and the plugin users'
/// group (`collegium-provision host`) is what lets the plugin pass
/// `plugins_root` to its own code, so the switch is made here: the groups
/// are read before the fork, and the child only makes the three calls.
#[allow(unsafe_code)]
fn become_user(command: &mut Command, user: &nix::unistd::User) -> Result<(), String> {
    use nix::unistd::{getgrouplist, setgroups, setresgid, setresuid};
    let name = std::ffi::CString::new(user.name.as_str())
        .map_err(|_| format!("the user name {:?} holds a NUL byte", user.name))?;
    let groups = getgrouplist(&name, user.gid)
        .map_err(|e| format!("cannot read the groups of {}: {e}", user.name))?;
    let (uid, gid) = (user.uid, user.gid);
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound; it makes three system calls on
    // values made before the fork, and allocates nothing and takes no lock.
    // It is registered before `die_with_daemon`'s, which must follow the
    // switch (closures run in the order they were added).
    unsafe {
        command.pre_exec(move || {
            setgroups(&groups)?;
            setresgid(gid, gid, gid)?;
            setresuid(uid, uid, uid)?;
            Ok(())
        });
    }
    Ok(())
}

/// Makes the child die with the daemon however the daemon ends. A stop
/// stops it (`RunningToolset::stop`), but a daemon killed outright runs no
/// code of its own, and an orphaned plugin would go on serving a socket
/// nobody answers for: the kernel sends it SIGKILL instead.
#[allow(unsafe_code)]
fn die_with_daemon(command: &mut Command) {
    let daemon = nix::unistd::getpid();
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound; it makes two system calls
    // (prctl and getppid), allocates nothing and takes no lock. It runs
    // after `become_user`'s switch, which clears the parent-death signal
    // (prctl(2)), so it is set for the credentials the plugin execs with.
    unsafe {
        command.pre_exec(move || {
            nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
            // A daemon that died before the signal was set would never send
            // it: the child is already someone else's.
            if nix::unistd::getppid() != daemon {
                return Err(nix::errno::Errno::ESRCH.into());
            }
            Ok(())
        });
    }
}

/// Creates `dir` (mode 0700, owned by `owner` when given) inside `parent`,
/// which others may pass through but not list (0711).
fn owned_dir(parent: &Path, dir: &Path, owner: Option<&nix::unistd::User>) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let fail = |path: &Path, e: std::io::Error| format!("cannot prepare {}: {e}", path.display());
    if !parent.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o711)
            .create(parent)
            .map_err(|e| fail(parent, e))?;
    }
    if owner.is_some() {
        std::fs::set_permissions(parent, std::fs::Permissions::from_mode(0o711))
            .map_err(|e| fail(parent, e))?;
    }
    crate::ownership::private_dir(dir).map_err(|e| fail(dir, e))?;
    if let Some(user) = owner {
        crate::ownership::give(dir, user).map_err(|e| fail(dir, e))?;
    }
    Ok(())
}
