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

use collegium_proto::toolset::v1::{self as wire, DescribeResponse};
use collegium_worker_kit::grant::GrantSigner;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use crate::config::LoadedConfig;
use crate::tools::{Gate, Host, ToolDeclaration, ToolsetDeclaration, ToolsetKind};

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
}

/// A plugin process the daemon started, connected and checked. Dropping it
/// kills the process.
pub struct RunningToolset {
    pub worker: Worker,
    pub declaration: ToolsetDeclaration,
    child: Child,
}

impl RunningToolset {
    /// Asks the process to stop and waits a moment for it; kills it after.
    pub async fn stop(mut self) {
        if let Some(pid) = self.child.id() {
            let _ = Command::new("kill")
                .args(["-TERM", &pid.to_string()])
                .status()
                .await;
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

/// Starts every granted plugin, connects to it with the boot's key, and
/// checks its description and the grants that name its tools.
pub async fn start(
    loaded: &LoadedConfig,
    signer: &GrantSigner,
) -> Result<Vec<RunningToolset>, PluginError> {
    let deployment = &loaded.config.deployment;
    let mut running = Vec::new();
    for namespace in granted_plugins(loaded) {
        let start_error = |reason: String| PluginError::Start {
            namespace: namespace.clone(),
            reason,
        };
        let executable = deployment.plugins_root.join(&namespace).join(EXECUTABLE);
        let socket = deployment.runtime_dir.join(format!("{namespace}.sock"));
        let audit_dir = deployment.state_dir.join("audit");
        private_dir(&deployment.runtime_dir).map_err(&start_error)?;
        private_dir(&audit_dir).map_err(&start_error)?;
        let audit = audit_dir.join(format!("{namespace}.audit.jsonl"));
        let me = SandboxExpectation::of_this_process().map_err(|e| start_error(e.to_string()))?;
        let child = spawn(&executable, &socket, &audit, me.uid)
            .await
            .map_err(&start_error)?;
        let spec = WorkerSpec {
            socket,
            served_by: Some(me.uid),
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
            sandbox: me,
        };
        let (worker, declaration) = Worker::connect_declaring(&spec, signer, declared).await?;
        check_grants(loaded, &declaration)?;
        tracing::info!(
            plugin = %namespace,
            tools = declaration.tools.len(),
            "plugin ready"
        );
        running.push(RunningToolset {
            worker,
            declaration,
            child,
        });
    }
    Ok(running)
}

/// The plugin's declaration, from its description; a tool that does not
/// state its gate has none, and is refused by the handshake check.
fn declared(namespace: &str, described: &DescribeResponse) -> ToolsetDeclaration {
    ToolsetDeclaration {
        namespace: namespace.to_string(),
        kind: ToolsetKind::Plugin,
        host: Host::Plugin,
        tools: described
            .tools
            .iter()
            .map(|tool| ToolDeclaration {
                name: tool.name.clone(),
                description: tool.description.clone(),
                gate: match wire::Gate::try_from(tool.gate) {
                    Ok(wire::Gate::Approval) => Gate::Approval,
                    Ok(wire::Gate::Ask) => Gate::Ask,
                    _ => Gate::None,
                },
                retryable: tool.retryable,
                budget_exempt: false,
                concurrent: tool.concurrent,
                supersedable: tool.supersedable,
                requires_settings: tool.requires_settings.clone(),
                parameters: serde_json::from_str(&tool.parameters_schema_json).ok(),
            })
            .collect(),
        settings_schema: serde_json::from_str(&described.settings_schema_json)
            .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
        skills: Vec::new(),
    }
}

/// Every grant of a single plugin tool names a tool the plugin serves.
fn check_grants(
    loaded: &LoadedConfig,
    declaration: &ToolsetDeclaration,
) -> Result<(), PluginError> {
    let mut problems = Vec::new();
    for (index, agent) in loaded.agents.iter().enumerate() {
        for tool in agent
            .tools
            .iter()
            .filter(|t| t.namespace == declaration.namespace)
        {
            if declaration.tool(&tool.tool).is_none() {
                problems.push(format!(
                    "agents[{index}] ({}): granted `{}::{}`, which the plugin `{}` does not serve; it serves {}",
                    agent.username,
                    tool.namespace,
                    tool.tool,
                    declaration.namespace,
                    declaration
                        .tools
                        .iter()
                        .map(|t| format!("`{}`", t.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Grant(format!(
            "boot refused: a grant names a tool no plugin serves:\n  - {}",
            problems.join("\n  - ")
        )))
    }
}

/// Starts `executable` and waits for its `ready` line.
async fn spawn(executable: &Path, socket: &Path, audit: &Path, uid: u32) -> Result<Child, String> {
    let mut child = Command::new(executable)
        .arg("--socket")
        .arg(socket)
        .arg("--audit")
        .arg(audit)
        .args(["--allow-uid", &uid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", executable.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    match tokio::time::timeout(READY_WITHIN, lines.next_line()).await {
        Ok(Ok(Some(line))) if line.trim() == "ready" => Ok(child),
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

fn private_dir(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))
}
