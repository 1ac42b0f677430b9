//! The framework's own workers (ARCHITECTURE §4): processes the operator
//! starts (systemd units, each under its own user), which the daemon only
//! connects to. Each is held to the sandbox its class needs; a worker an
//! agent's grants need that is missing or weaker refuses boot, naming it.
//! The shell worker is the one built so far.

use std::collections::BTreeMap;
use std::sync::Arc;

use collegium_worker_kit::grant::GrantSigner;

use super::capabilities::{CAP_KILL, CAP_SETGID, CAP_SETUID};
use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use super::reach::ReachExpectation;
use crate::config::LoadedConfig;
use crate::tools::{Host, Registry, ToolRef};

/// The socket a framework worker serves, under the runtime directory.
pub fn socket(loaded: &LoadedConfig, namespace: &str) -> std::path::PathBuf {
    loaded
        .config
        .deployment
        .runtime_dir
        .join(namespace)
        .join("toolset.sock")
}

#[derive(Debug, thiserror::Error)]
pub enum FrameworkError {
    #[error(
        "the host is not ready for the shell (§6.1):\n  - {}\nRun collegium-provision host --config FILE as root.",
        .0.join("\n  - ")
    )]
    Host(Vec<String>),
    #[error(transparent)]
    Layout(#[from] crate::host::LayoutError),
    #[error(
        "{0}. An agent holds shell::run: start collegium-worker-shell (as root) before the daemon"
    )]
    Worker(#[from] WorkerError),
    #[error("an agent's user can reach what only the framework may (§6.4): {0}")]
    Reach(super::handshake::HandshakeRefused),
}

/// Connects to every framework worker some agent's grants need, after
/// checking the host is laid out for it.
pub async fn connect(
    loaded: &LoadedConfig,
    registry: &Registry,
    signer: &GrantSigner,
) -> Result<BTreeMap<String, Arc<Worker>>, FrameworkError> {
    let mut workers = BTreeMap::new();
    let shell = ToolRef::new("shell", "run");
    let needs_shell = loaded.agents.iter().any(|a| a.holds(&shell));
    let Some(declaration) = registry.toolset("shell") else {
        return Ok(workers);
    };
    if !needs_shell || !matches!(declaration.host, Host::Worker(_)) {
        return Ok(workers);
    }
    let layout = crate::host::layout(loaded, "collegium")?;
    let problems = crate::host::problems(&layout);
    if !problems.is_empty() {
        return Err(FrameworkError::Host(problems));
    }
    // Root with only what running a command as another user takes, no new
    // privileges, Landlock confining what it runs, and a cgroup per command
    // so nothing a command starts outlives it; its own PID, mount and IPC
    // namespaces, so it sees nothing of other agents' commands.
    let spec = WorkerSpec {
        socket: socket(loaded, "shell"),
        served_by: Some(0),
        declaration: declaration.clone(),
        sandbox: SandboxExpectation {
            uid: 0,
            gid: 0,
            allowed_capabilities: CAP_SETUID | CAP_SETGID | CAP_KILL,
            landlock_floor: Some(1),
            command_cgroups: true,
            command_namespaces: &["pid", "mount", "ipc"],
            command_bounds: super::handshake::SHELL_BOUNDS,
        },
    };
    // The callback listener is bound before this handshake, and every
    // plugin is serving: the worker's probe finds each endpoint live (§6.4).
    let reach = ReachExpectation {
        agents: layout
            .agents
            .iter()
            .filter_map(|p| Some((p.agent.clone(), p.os_user.clone()?)))
            .collect(),
        endpoints: crate::host::reach::endpoints(loaded),
        table: crate::host::reach::table_name(&loaded.config.deployment.state_dir),
    };
    let worker = Worker::connect(&spec, signer)
        .await?
        .hold_reach(reach)
        .map_err(FrameworkError::Reach)?;
    // Which mechanism bounds each command depends on what the host
    // delegates (§6.1); the operator reads it here.
    let bounds = worker
        .described()
        .sandbox
        .as_ref()
        .map(|s| s.bounds.join(", "))
        .unwrap_or_default();
    tracing::info!(worker = "shell", %bounds, "framework worker ready");
    workers.insert("shell".to_string(), Arc::new(worker));
    Ok(workers)
}
