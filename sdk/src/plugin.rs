//! The plugin as a whole (§3.14): its namespace, the settings agents are
//! configured by, the collections it owns, its tools and its skills — the
//! description the daemon checks at boot — and the process that serves it
//! from the arguments the daemon passes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use collegium_proto::toolset::v1::{
    DescribeResponse, Gate, SkillDeclaration, StorageCollection, ToolDeclaration,
};
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::{AuditLog, digest};
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::service::PluginService;
use crate::storage::{self, Collection, Storage};
use crate::tool::Tool;

/// A plugin's settings type: what `[agents.settings.NAMESPACE]` holds,
/// validated by the daemon against its generated schema at boot (§3.4).
pub trait Settings: DeserializeOwned + JsonSchema + Send + Sync + 'static {}
impl<T: DeserializeOwned + JsonSchema + Send + Sync + 'static> Settings for T {}

/// The settings of a plugin that takes none: an agent configured with any
/// is refused at boot.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoSettings {}

/// The socket's mode. Its directory is what keeps others away (the
/// daemon's private one for a child, the unit's `RuntimeDirectory=` open to
/// the daemon's group for a unit-run plugin), and every connection is
/// admitted by its peer's uid (`--allow-uid`); a mode narrower than the
/// directory would shut out the daemon of a unit-run plugin, which is in
/// neither the plugin's user nor its group (as each worker's socket is).
const SOCKET_MODE: u32 = 0o666;

#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    #[error("plugin `{namespace}` declares itself wrongly:\n  - {}", problems.join("\n  - "))]
    Declaration {
        namespace: String,
        problems: Vec<String>,
    },
    #[error("plugin `{namespace}`: {reason}")]
    Start { namespace: String, reason: String },
}

/// What the daemon passes a plugin's `serve` (the plugin wire convention).
#[derive(Debug, Parser)]
#[command(about = "A Collegium plugin, served to the daemon")]
pub struct ServeArgs {
    /// The socket to serve `Toolset` on.
    #[arg(long)]
    pub socket: PathBuf,
    /// The audit log.
    #[arg(long)]
    pub audit: PathBuf,
    /// A uid allowed to connect (the daemon's); repeatable.
    #[arg(long = "allow-uid", required = true)]
    pub allow_uids: Vec<u32>,
    /// The daemon's storage socket, for a plugin its own unit runs; a child
    /// plugin inherits its connection as fd 3 instead.
    #[arg(long)]
    pub storage_socket: Option<PathBuf>,
}

/// A plugin being declared. `S` is its settings type.
pub struct Plugin<S = NoSettings> {
    namespace: String,
    build_version: String,
    tools: Vec<Tool<S>>,
    collections: Vec<StorageCollection>,
    skills: Vec<SkillDeclaration>,
    problems: Vec<String>,
}

impl<S: Settings> Plugin<S> {
    /// The plugin `namespace`: its directory's name under the plugins root.
    pub fn new(namespace: impl Into<String>) -> Self {
        Self {
            namespace: namespace.into(),
            build_version: env!("CARGO_PKG_VERSION").into(),
            tools: Vec::new(),
            collections: Vec::new(),
            skills: Vec::new(),
            problems: Vec::new(),
        }
    }

    /// The plugin's own version string, as `Describe` reports it.
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.build_version = version.into();
        self
    }

    /// Declares the collection of `T` (its schema generated from the type).
    #[must_use]
    pub fn collection<T: Collection>(mut self) -> Self {
        self.collections.push(StorageCollection {
            name: T::NAME.into(),
            schema_json: crate::schema::of::<T>().to_string(),
        });
        self
    }

    /// Adds a tool; its gate is already stated (see [`ToolBuilder`](crate::ToolBuilder)).
    #[must_use]
    pub fn tool(mut self, tool: Tool<S>) -> Self {
        self.tools.push(tool);
        self
    }

    /// Declares the skill `skills/NAME/SKILL.md` the plugin's directory
    /// ships, from that file's text (`include_str!`).
    #[must_use]
    pub fn skill(mut self, name: &str, skill_md: &str) -> Self {
        match crate::skill::declare(name, skill_md) {
            Ok(declared) => self.skills.push(declared),
            Err(error) => self.problems.push(error.to_string()),
        }
        self
    }

    /// What `Describe` answers but for the sandbox and the protocol version,
    /// or every problem of the declaration.
    pub fn description(&self) -> Result<DescribeResponse, PluginError> {
        let mut problems = self.problems.clone();
        if !is_segment(&self.namespace) {
            problems.push(format!(
                "the namespace `{}` is not lowercase letters, digits, `-` and `_`",
                self.namespace
            ));
        }
        let mut seen = BTreeSet::new();
        for tool in &self.tools {
            if !is_segment(&tool.name) {
                problems.push(format!("the tool name `{}` is malformed", tool.name));
            }
            if !seen.insert(tool.name.as_str()) {
                problems.push(format!("the tool `{}` is declared twice", tool.name));
            }
        }
        let mut collections = BTreeSet::new();
        for collection in &self.collections {
            if !collections.insert(collection.name.as_str()) {
                problems.push(format!(
                    "the collection `{}` is declared twice",
                    collection.name
                ));
            }
        }
        if !problems.is_empty() {
            return Err(PluginError::Declaration {
                namespace: self.namespace.clone(),
                problems,
            });
        }
        Ok(DescribeResponse {
            protocol_version: collegium_proto::PROTOCOL_VERSION,
            build_version: self.build_version.clone(),
            namespace: self.namespace.clone(),
            tools: self.tools.iter().map(declaration).collect(),
            settings_schema_json: crate::schema::of::<S>().to_string(),
            storage_collections: self.collections.clone(),
            skills: self.skills.clone(),
            // §3.14: the range boot checks the daemon's version against.
            min_protocol_version: *crate::protocol::SUPPORTED.start(),
            max_protocol_version: *crate::protocol::SUPPORTED.end(),
            ..DescribeResponse::default()
        })
    }

    /// The `Toolset` service, writing its audit log at `audit` and reaching
    /// its records through `storage`: what [`Plugin::serve`] serves, for a
    /// test or a benchmark that drives it in process.
    pub fn service(self, audit: &Path, storage: Storage) -> Result<PluginService<S>, PluginError> {
        let described = self.description()?;
        let start = |reason: String| PluginError::Start {
            namespace: self.namespace.clone(),
            reason,
        };
        let served = self.tools.iter().map(|t| t.name.clone()).collect();
        let gated = self
            .tools
            .iter()
            .filter(|t| t.render.is_some())
            .map(|t| t.name.clone())
            .collect();
        let log = AuditLog::open(audit, &self.namespace).map_err(|e| start(e.to_string()))?;
        let admission = Admission::new(
            &self.namespace,
            GrantVerifier::new(&self.namespace, served, gated),
            log,
        );
        let tools: BTreeMap<String, Tool<S>> = self
            .tools
            .into_iter()
            .map(|t| (t.name.clone(), t))
            .collect();
        Ok(PluginService::new(
            self.namespace.clone(),
            tools,
            described,
            admission,
            storage,
        ))
    }

    /// Serves the plugin from the process's arguments until SIGTERM or
    /// SIGINT: the plugin's whole `main`. Prints `ready` once the socket
    /// accepts connections; any failure before is printed on stderr, naming
    /// the plugin, with a failing exit code.
    pub fn serve(self) -> ExitCode {
        let namespace = self.namespace.clone();
        match self.serve_with(ServeArgs::parse()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("{error}");
                tracing::error!(plugin = %namespace, %error, "the plugin stopped");
                ExitCode::FAILURE
            }
        }
    }

    /// [`Plugin::serve`] with the arguments given.
    pub fn serve_with(self, args: ServeArgs) -> Result<(), PluginError> {
        let namespace = self.namespace.clone();
        let start = |reason: String| PluginError::Start {
            namespace: namespace.clone(),
            reason,
        };
        // Before the runtime starts its threads: the flag is per thread and
        // only threads made after it inherit it; the daemon refuses a plugin
        // without it (§6.1).
        collegium_worker_kit::sandbox::forbid_new_privileges().map_err(|e| start(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| start(e.to_string()))?;
        runtime.block_on(self.serve_until_stopped(args))
    }

    async fn serve_until_stopped(self, args: ServeArgs) -> Result<(), PluginError> {
        use tokio::signal::unix::{SignalKind, signal};
        let namespace = self.namespace.clone();
        let start = |reason: String| PluginError::Start {
            namespace: namespace.clone(),
            reason,
        };
        let _sink = collegium_worker_kit::logging::init(&format!("collegium-plugin-{namespace}"));
        let allowed: BTreeSet<u32> = args.allow_uids.iter().copied().collect();
        let storage = connect_storage(args.storage_socket.as_deref(), &allowed)
            .await
            .map_err(|e| start(e.to_string()))?;
        let service = self.service(&args.audit, storage)?;
        let mut terminate = signal(SignalKind::terminate()).map_err(|e| start(e.to_string()))?;
        let mut interrupt = signal(SignalKind::interrupt()).map_err(|e| start(e.to_string()))?;
        let policy = PeerPolicy {
            allowed_uids: allowed,
        };
        let serving = serve(&args.socket, SOCKET_MODE, policy, service)
            .await
            .map_err(|e| start(e.to_string()))?;
        {
            use std::io::Write;
            let mut stdout = std::io::stdout();
            writeln!(stdout, "ready")
                .and_then(|()| stdout.flush())
                .map_err(|e| start(format!("cannot say ready: {e}")))?;
        }
        tokio::select! {
            _ = terminate.recv() => {}
            _ = interrupt.recv() => {}
        }
        serving.shutdown().await.map_err(|e| start(e.to_string()))
    }
}

/// The storage connection the daemon handed over: fd 3 for a child plugin,
/// the storage socket for a unit-run one, none where it handed neither (a
/// daemon that serves no storage, or a plugin started by hand).
async fn connect_storage(
    socket: Option<&Path>,
    daemon_uids: &BTreeSet<u32>,
) -> Result<Storage, storage::ConnectError> {
    if let Some(socket) = socket {
        return Ok(Storage::new(storage::from_socket(
            socket,
            daemon_uids.clone(),
        )));
    }
    match std::env::var(storage::STORAGE_FD_ENV) {
        Ok(value) => {
            let fd = storage::connect::inherited(&value)?;
            Ok(Storage::new(storage::from_fd(fd).await?))
        }
        Err(_) => Ok(Storage::unavailable()),
    }
}

fn declaration<S>(tool: &Tool<S>) -> ToolDeclaration {
    let schema = tool.parameters.to_string();
    ToolDeclaration {
        name: tool.name.clone(),
        description: tool.description.clone(),
        parameters_schema_sha256: digest(schema.as_bytes()),
        parameters_schema_json: schema,
        gate: if tool.render.is_some() {
            Gate::Approval
        } else {
            Gate::None
        } as i32,
        retryable: tool.flags.retryable,
        concurrent: tool.flags.concurrent,
        supersedable: tool.flags.supersedable,
        requires_settings: tool.flags.requires_settings.clone(),
        // Claims a plugin cannot make (§3.4, §3.14): the SDK never makes them.
        budget_exempt: false,
        core: false,
    }
}

/// A namespace or tool segment as the daemon reads one.
fn is_segment(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && !s.contains("__")
}
