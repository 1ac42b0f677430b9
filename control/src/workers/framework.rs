//! The framework's own workers (ARCHITECTURE §4): processes the operator
//! starts (systemd units, each under its own user), which the daemon only
//! connects to. Each is held to the sandbox its class needs; a worker an
//! agent's grants need that is missing or weaker refuses boot, naming it.
//! The shell, browser, PDF and mail workers are built so far.

use std::collections::BTreeMap;
use std::sync::Arc;

use collegium_worker_kit::grant::GrantSigner;

use super::capabilities::{CAP_KILL, CAP_SETGID, CAP_SETUID};
use super::dispatch::{Worker, WorkerError, WorkerSpec};
use super::handshake::SandboxExpectation;
use super::reach::ReachExpectation;
use crate::config::LoadedConfig;
use crate::tools::served::is_built;
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
    #[error(
        "{error}. An agent holds {tool}: start collegium-worker-browser (as {user}) before the daemon"
    )]
    Browser {
        error: Box<WorkerError>,
        tool: ToolRef,
        user: &'static str,
    },
    #[error(
        "{0}. An agent holds web::fetch, whose PDFs the PDF worker reads: start collegium-worker-pdf (as collegium-pdf) before the daemon"
    )]
    Pdf(Box<super::pdf::PdfWorkerError>),
    #[error(
        "an agent holds web::fetch, whose PDFs the PDF worker reads as the OS user collegium-pdf, which does not exist on this host; run collegium-provision host --config FILE as root"
    )]
    PdfUser,
    #[error("the browser worker does not enforce this deployment's address policy (§3.4): {0}")]
    Scope(String),
    #[error(
        "an agent holds {tool}, served by the browser worker as the OS user {user}, which does not exist on this host; run collegium-provision host --config FILE as root"
    )]
    WorkerUser { tool: ToolRef, user: &'static str },
    #[error(
        "agent {agent} holds {tool}, served by the mail worker as the OS user {user}, which does not exist on this host; run collegium-provision host --config FILE as root"
    )]
    MailUser {
        agent: String,
        tool: ToolRef,
        user: &'static str,
    },
    #[error(
        "{error}. Agent {agent} holds {tool}: start collegium-worker-mail (as root, which drops to {user}, or as {user}) before the daemon"
    )]
    Mail {
        error: Box<WorkerError>,
        agent: String,
        tool: ToolRef,
        user: &'static str,
    },
    #[error("{error}. Agent {agent} has a mailbox: start collegium-worker-mail before the daemon")]
    Mailbox {
        error: Box<super::mail::MailWorkerError>,
        agent: String,
    },
    /// The mailbox's server refused its credentials: waiting cannot fix it
    /// (§3.13).
    #[error("agent {agent}: the mailbox's credentials were refused, so boot is refused: {detail}")]
    MailboxRefused { agent: String, detail: String },
}

/// Connects to every framework worker some agent's grants need, after
/// checking the host is laid out for it. Keyed by the namespace served.
pub async fn connect(
    loaded: &LoadedConfig,
    registry: &Registry,
    signer: &GrantSigner,
) -> Result<BTreeMap<String, Arc<Worker>>, FrameworkError> {
    let mut workers = BTreeMap::new();
    if let Some(shell) = connect_shell(loaded, registry, signer).await? {
        workers.insert("shell".to_string(), Arc::new(shell));
    }
    if let Some(browser) = connect_browser(loaded, registry, signer).await? {
        workers.insert("web".to_string(), Arc::new(browser));
    }
    if let Some(mail) = connect_mail(loaded, registry, signer).await? {
        workers.insert("mail".to_string(), Arc::new(mail));
    }
    Ok(workers)
}

/// The first agent holding a mail tool this build serves, and the tool.
fn mail_holder(loaded: &LoadedConfig, registry: &Registry) -> Option<(String, ToolRef)> {
    let declaration = registry.toolset("mail")?;
    declaration
        .tools
        .iter()
        .map(|t| ToolRef::new("mail", &t.name))
        .filter(|t| is_built(registry, t))
        .find_map(|t| {
            loaded
                .agents
                .iter()
                .find(|a| a.holds(&t))
                .map(|a| (a.username.clone(), t))
        })
}

/// The mail worker's user, where it exists on this host.
fn mail_account(agent: &str, tool: &ToolRef) -> Result<nix::unistd::User, FrameworkError> {
    let user = crate::host::worker_user("mail").unwrap_or("collegium-mail");
    match nix::unistd::User::from_name(user) {
        Ok(Some(account)) => Ok(account),
        _ => Err(FrameworkError::MailUser {
            agent: agent.to_string(),
            tool: tool.clone(),
            user,
        }),
    }
}

/// The mail worker's `Toolset`, where some agent holds a mail tool
/// (§3.13). It runs as its own user (root only long enough to read the
/// password files) and is held to it: no capability in any set, and
/// no-new-privileges.
pub async fn connect_mail(
    loaded: &LoadedConfig,
    registry: &Registry,
    signer: &GrantSigner,
) -> Result<Option<Worker>, FrameworkError> {
    let Some((agent, tool)) = mail_holder(loaded, registry) else {
        return Ok(None);
    };
    let Some(declaration) = registry.toolset("mail") else {
        return Ok(None);
    };
    let account = mail_account(&agent, &tool)?;
    let user = crate::host::worker_user("mail").unwrap_or("collegium-mail");
    let spec = WorkerSpec {
        socket: socket(loaded, "mail"),
        served_by: Some(account.uid.as_raw()),
        declaration: declaration.clone(),
        sandbox: SandboxExpectation::own_user(&account),
    };
    let worker = Worker::connect(&spec, signer)
        .await
        .map_err(|error| FrameworkError::Mail {
            error: Box::new(error),
            agent,
            tool,
            user,
        })?;
    tracing::info!(worker = "mail", "framework worker ready");
    Ok(Some(worker))
}

/// One mailbox as the boot check found it (§3.13).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailboxState {
    pub agent: String,
    /// `Ok` or `Unreachable`: a refused mailbox refuses boot instead.
    pub check: super::mail::Check,
}

/// The mail worker's `Mailbox` service and the boot check of every
/// agent's mailbox, where some agent has one. A mailbox whose server
/// refused its credentials refuses boot, naming the agent, the mailbox and
/// the server; one that could not be reached does not: it is returned, for
/// the announcement channel to be told while polling goes on.
pub async fn connect_mailboxes(
    loaded: &LoadedConfig,
    registry: &Registry,
) -> Result<Option<(super::mail::MailWorker, Vec<MailboxState>)>, FrameworkError> {
    let Some((agent, tool)) = mail_holder(loaded, registry) else {
        return Ok(None);
    };
    let account = mail_account(&agent, &tool)?;
    let client = super::mail::MailWorker::connect(&socket(loaded, "mail"), account.uid.as_raw())
        .await
        .map_err(|error| FrameworkError::Mailbox {
            error: Box::new(error),
            agent: agent.clone(),
        })?;
    let mut states = Vec::new();
    for agent in loaded.agents.iter().filter(|a| {
        a.settings
            .get("mail")
            .and_then(|m| m.get("mailbox"))
            .is_some()
    }) {
        let check =
            client
                .check(&agent.username)
                .await
                .map_err(|error| FrameworkError::Mailbox {
                    error: Box::new(error),
                    agent: agent.username.clone(),
                })?;
        match check {
            super::mail::Check::Refused(detail) => {
                return Err(FrameworkError::MailboxRefused {
                    agent: agent.username.clone(),
                    detail,
                });
            }
            check => states.push(MailboxState {
                agent: agent.username.clone(),
                check,
            }),
        }
    }
    Ok(Some((client, states)))
}

async fn connect_shell(
    loaded: &LoadedConfig,
    registry: &Registry,
    signer: &GrantSigner,
) -> Result<Option<Worker>, FrameworkError> {
    let shell = ToolRef::new("shell", "run");
    let needs_shell = loaded.agents.iter().any(|a| a.holds(&shell));
    let Some(declaration) = registry.toolset("shell") else {
        return Ok(None);
    };
    if !needs_shell || !matches!(declaration.host, Host::Worker(_)) {
        return Ok(None);
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
    Ok(Some(worker))
}

/// The browser worker, where some agent holds a web tool this build serves
/// (§3.4). It runs as its own unprivileged user and is held to it: no
/// capability in any set, and no-new-privileges.
async fn connect_browser(
    loaded: &LoadedConfig,
    registry: &Registry,
    signer: &GrantSigner,
) -> Result<Option<Worker>, FrameworkError> {
    let Some(declaration) = registry.toolset("web") else {
        return Ok(None);
    };
    let Some(tool) = declaration
        .tools
        .iter()
        .map(|t| ToolRef::new("web", &t.name))
        .find(|t| is_built(registry, t) && loaded.agents.iter().any(|a| a.holds(t)))
    else {
        return Ok(None);
    };
    let user = crate::host::worker_user("browser").unwrap_or("collegium-browser");
    let Ok(Some(account)) = nix::unistd::User::from_name(user) else {
        return Err(FrameworkError::WorkerUser { tool, user });
    };
    let spec = WorkerSpec {
        socket: socket(loaded, "web"),
        served_by: Some(account.uid.as_raw()),
        declaration: declaration.clone(),
        sandbox: SandboxExpectation::own_user(&account),
    };
    let worker = Worker::connect(&spec, signer)
        .await
        .map_err(|error| FrameworkError::Browser {
            error: Box::new(error),
            tool,
            user,
        })?;
    let scope = worker.described().web_scope.clone().unwrap_or_default();
    let gaps = scope_gaps(loaded, &scope);
    if !gaps.is_empty() {
        return Err(FrameworkError::Scope(gaps.join("; ")));
    }
    // Both settings are logged at boot: a deployment that opened its network
    // or closed hosts has said so in its log as well as its file (§3.4).
    tracing::info!(
        worker = "browser",
        own_network_browsable = scope.own_network_browsable,
        closed_hosts = %scope.closed_hosts.join(", "),
        "framework worker ready"
    );
    Ok(Some(worker.hold_web_scope()))
}

/// The PDF reader, where some agent holds `web::fetch` (§3.4): a fetched
/// PDF is read there, never in this process. It runs as its own user,
/// holding no capability, with no-new-privileges.
pub async fn connect_pdf(
    loaded: &LoadedConfig,
    registry: &Registry,
) -> Result<Option<super::pdf::PdfWorker>, FrameworkError> {
    let fetch = ToolRef::new("web", "fetch");
    if !is_built(registry, &fetch) || !loaded.agents.iter().any(|a| a.holds(&fetch)) {
        return Ok(None);
    }
    let user = crate::host::worker_user("pdf").unwrap_or("collegium-pdf");
    let Ok(Some(account)) = nix::unistd::User::from_name(user) else {
        return Err(FrameworkError::PdfUser);
    };
    let socket = pdf_socket(loaded);
    let worker = super::pdf::PdfWorker::connect(&socket, account.uid.as_raw())
        .await
        .map_err(|e| FrameworkError::Pdf(Box::new(e)))?;
    let limits = worker.limits();
    tracing::info!(
        worker = "pdf",
        memory_cap_mib = limits.memory_cap_bytes >> 20,
        concurrency = limits.concurrency,
        body_cap_mib = limits.body_cap_bytes >> 20,
        memory_cgroup = limits.memory_cgroup,
        "framework worker ready"
    );
    Ok(Some(worker))
}

/// The PDF worker's socket, under the runtime directory.
pub fn pdf_socket(loaded: &LoadedConfig) -> std::path::PathBuf {
    loaded
        .config
        .deployment
        .runtime_dir
        .join("pdf")
        .join("reader.sock")
}

/// Browser sessions live at once where the configuration names no number
/// (§3.4).
pub const DEFAULT_LIVE_SESSIONS: u32 = 4;

/// Where the browser worker's address policy differs from the
/// configuration's `[web]`: the worker is given its policy on its command
/// line and never reads the configuration (§3.4; `docs/web.md`).
fn scope_gaps(
    loaded: &LoadedConfig,
    reported: &collegium_proto::toolset::v1::WebScope,
) -> Vec<String> {
    let web = loaded.config.web.clone().unwrap_or_default();
    let mut gaps = Vec::new();
    if reported.own_network_browsable != web.own_network_browsable {
        gaps.push(format!(
            "web_scope.own_network_browsable: the worker was started with {}, the configuration says {} (start it with{} --own-network-browsable)",
            reported.own_network_browsable,
            web.own_network_browsable,
            if web.own_network_browsable { "" } else { "out" }
        ));
    }
    let live = web.live_sessions.unwrap_or(DEFAULT_LIVE_SESSIONS);
    if reported.live_sessions != live {
        gaps.push(format!(
            "web_scope.live_sessions: the worker allows {}, the configuration {live} (start it with --live-sessions {live})",
            reported.live_sessions
        ));
    }
    if !reported.browser_sandbox {
        gaps.push(
            "web_scope.browser_sandbox: the browser runs without its own sandbox; run the worker as its own non-root user on a host that allows unprivileged user namespaces".into(),
        );
    }
    let configured: std::collections::BTreeSet<String> = web
        .closed_hosts
        .iter()
        .filter_map(|h| crate::config::closed_host(h).ok())
        .collect();
    let enforced: std::collections::BTreeSet<String> =
        reported.closed_hosts.iter().cloned().collect();
    if configured != enforced {
        gaps.push(format!(
            "web_scope.closed_hosts: the worker closes [{}], the configuration [{}] (start it with --closed-host for each)",
            enforced.into_iter().collect::<Vec<_>>().join(", "),
            configured.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    gaps
}
