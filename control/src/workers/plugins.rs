//! Toolset processes the daemon starts itself: the plugins the configuration
//! grants (ARCHITECTURE §6, spec §3.14). Each is a directory under the
//! plugins root whose name is its namespace, holding an executable `serve`
//! that serves `Toolset` on the socket the daemon names and prints `ready`.
//! Its tools are declared by its handshake, checked at boot: a grant of a
//! tool it does not serve, a tool that does not state its gate, or a weaker
//! sandbox than expected refuses boot, naming the plugin and the field.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use collegium_worker_kit::grant::GrantSigner;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::declarations;
use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use crate::config::LoadedConfig;
use crate::tools::{Host, Registry, ToolsetDeclaration, ToolsetKind};

/// The executable a plugin directory holds.
pub const EXECUTABLE: &str = "serve";

/// How long a plugin may take to print `ready`.
const READY_WITHIN: Duration = Duration::from_secs(10);

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin `{namespace}`: {reason}")]
    Start { namespace: String, reason: String },
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

/// A plugin process the daemon started, connected and checked. Dropping it
/// kills the process.
pub struct RunningToolset {
    pub worker: std::sync::Arc<Worker>,
    pub declaration: ToolsetDeclaration,
    child: Child,
}

impl RunningToolset {
    /// Asks the process to stop and waits a moment for it; kills it after.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id().and_then(|pid| i32::try_from(pid).ok()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
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
}

/// Starts every granted plugin, connects to it with the boot's key, and
/// checks its description and the grants that name its tools.
pub async fn start(
    loaded: &LoadedConfig,
    signer: &GrantSigner,
    store: &crate::store::StoreHandle,
) -> Result<Toolsets, PluginError> {
    let deployment = &loaded.config.deployment;
    let mut running = Vec::new();
    let mut registry = loaded.registry.clone();
    for namespace in granted_plugins(loaded) {
        let start_error = |reason: String| PluginError::Start {
            namespace: namespace.clone(),
            reason,
        };
        let daemon =
            SandboxExpectation::of_this_process().map_err(|e| start_error(e.to_string()))?;
        let user = loaded
            .config
            .plugins
            .get(&namespace)
            .and_then(|p| p.user.as_deref());
        let run_as = run_as(user, &daemon).map_err(&start_error)?;
        // Each toolset gets a socket directory and an audit directory of its
        // own, owned by the user it runs as; their parents only let it pass.
        let socket_dir = deployment.runtime_dir.join(&namespace);
        let audit_dir = deployment.audit_dir.join(&namespace);
        for (parent, dir) in [
            (&deployment.runtime_dir, &socket_dir),
            (&deployment.audit_dir, &audit_dir),
        ] {
            owned_dir(parent, dir, run_as.as_ref()).map_err(&start_error)?;
        }
        // Where `host::reach` has the shell worker try it as each agent.
        let socket = super::framework::socket(loaded, &namespace);
        let audit = audit_dir.join(format!("{namespace}.audit.jsonl"));
        let executable = deployment.plugins_root.join(&namespace).join(EXECUTABLE);
        let (child, storage) = spawn(&executable, &socket, &audit, daemon.uid, run_as.as_ref())
            .await
            .map_err(&start_error)?;
        let sandbox = match &run_as {
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
        let (worker, declaration) =
            Worker::connect_declaring(&spec, signer, declarations::plugin).await?;
        settings_schema(&worker.described().settings_schema_json).map_err(&start_error)?;
        // §3.14: its collections compile or boot is refused; then its
        // storage connection is served, bound to its namespace.
        let collections = crate::plugin_storage::collections::compile(
            &namespace,
            &worker.described().storage_collections,
        )
        .map_err(|e| start_error(e.to_string()))?;
        storage
            .serve(collections, store.clone())
            .map_err(|e| start_error(format!("cannot serve its storage: {e}")))?;
        registry
            .add(declaration.clone())
            .map_err(|e| start_error(e.to_string()))?;
        check_grants(loaded, &registry, &namespace)?;
        check_settings(loaded, &declaration)?;
        warn_of_ungranted(loaded, &declaration);
        tracing::info!(
            plugin = %namespace,
            tools = declaration.tools.len(),
            "plugin ready"
        );
        running.push(RunningToolset {
            worker: std::sync::Arc::new(worker),
            declaration,
            child,
        });
    }
    Ok(Toolsets { running, registry })
}

/// A plugin tool no agent holds is legitimate, and exactly what a forgotten
/// grant leaves: it is warned of, never refused (§3.14).
fn warn_of_ungranted(loaded: &LoadedConfig, declaration: &ToolsetDeclaration) {
    let namespace = &declaration.namespace;
    for tool in &declaration.tools {
        let held = loaded.agents.iter().any(|agent| {
            agent.whole_namespaces.contains(namespace)
                || agent
                    .tools
                    .iter()
                    .any(|t| t.namespace == *namespace && t.tool == tool.name)
        });
        if !held {
            tracing::warn!(
                plugin = %namespace,
                tool = %tool.name,
                "no agent is granted this plugin tool"
            );
        }
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

/// A settings schema a plugin declares is one: nothing malformed is left
/// out silently (§3.14). An empty one declares no settings.
fn settings_schema(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Ok(());
    }
    let schema: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("its settings schema is not JSON: {e}"))?;
    jsonschema::validator_for(&schema)
        .map(drop)
        .map_err(|e| format!("its settings schema is not a JSON Schema: {e}"))
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
async fn spawn(
    executable: &Path,
    socket: &Path,
    audit: &Path,
    daemon_uid: u32,
    run_as: Option<&nix::unistd::User>,
) -> Result<(Child, crate::plugin_storage::serve::DaemonEnd), String> {
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
        // The daemon's own readiness and watchdog are not a plugin's to
        // speak for: its notify socket is not inherited (issue 21).
        .env_remove("NOTIFY_SOCKET")
        .env_remove("WATCHDOG_USEC")
        .env_remove("WATCHDOG_PID")
        .kill_on_drop(true);
    if let Some(user) = run_as {
        become_user(&mut command, user)?;
    }
    die_with_daemon(&mut command);
    // §3.14: the child's storage connection, fd 3 (plugin_storage::serve).
    let storage =
        crate::plugin_storage::serve::hand_to_child(&mut command).map_err(|e| e.to_string())?;
    let spawned = command.spawn();
    let storage = storage.spawned();
    let mut child = spawned.map_err(|e| format!("cannot start {}: {e}", executable.display()))?;
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

/// The OS user a plugin runs as: none for the daemon's own user. Another
/// user takes root to start a process as; a daemon that is not root and is
/// not that user refuses rather than run the plugin as someone else.
fn run_as(
    user: Option<&str>,
    daemon: &SandboxExpectation,
) -> Result<Option<nix::unistd::User>, String> {
    let Some(name) = user else {
        return Ok(None);
    };
    let user = nix::unistd::User::from_name(name)
        .map_err(|e| format!("cannot look up the OS user {name}: {e}"))?
        .ok_or_else(|| format!("plugins.*.user names {name}, and there is no such OS user"))?;
    if user.uid.as_raw() == daemon.uid {
        return Ok(None);
    }
    if daemon.uid != 0 {
        return Err(format!(
            "it is to run as {name}, and only a daemon running as root can start it so"
        ));
    }
    Ok(Some(user))
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
