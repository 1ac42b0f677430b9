//! Bringing the agents up (§3.1, §8.2): a seat per agent — its own session,
//! its model, its system prompt rendered once, the tools it may call this
//! boot — then the lanes, the feed, and one socket per bot account.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

use super::DaemonError;
use crate::chat::Rest;
use crate::chat::credentials::Credentials;
use crate::chat::directory::{Directory, Known};
use crate::chat::feed::{Feed, FeedBot};
use crate::chat::socket::{self, BotSocket};
use crate::config::LoadedConfig;
use crate::config::model::{Personality, Triggering};
use crate::context::prompt::{PromptFacts, system_prompt};
use crate::inference::{Provider, ProviderConfig, RetryPolicy, ToolSpec};
use crate::lanes::Lanes;
use crate::store::{AuthorKind, StoreHandle};
use crate::tools::arguments::provider_schema;
use crate::tools::{Host, Registry, ToolRef};
use crate::turns::services::{POST_LIMIT_REREAD, PostLimit, Seat, Services, SystemBot};
use crate::workers::dispatch::Worker;

/// What the running agents need to stop.
pub struct Running {
    stop: watch::Sender<bool>,
}

impl Running {
    pub fn stop(&self) {
        let _ = self.stop.send(true);
    }
}

pub struct Boot<'a> {
    pub loaded: &'a LoadedConfig,
    pub credentials: &'a Credentials,
    pub registry: &'a Registry,
    pub workers: BTreeMap<String, Arc<Worker>>,
    pub signer: collegium_worker_kit::grant::GrantSigner,
    pub store: StoreHandle,
    pub boot_id: String,
    /// The previous run, for the restart sweep and its notice (§7.3).
    pub previous: Option<crate::store::ProcessRun>,
    pub started: i64,
}

/// Starts the agents.
pub async fn start(boot: Boot<'_>) -> Result<Running, DaemonError> {
    let loaded = boot.loaded;
    let config = &loaded.config;
    let base = Rest::new(&config.mattermost.url).map_err(DaemonError::Http)?;
    let account = |username: &str| {
        boot.credentials
            .accounts
            .get(username)
            .ok_or_else(|| DaemonError::MattermostNotReady {
                problems: format!("there is no token for @{username}"),
                fix: format!(
                    "collegium-provision mattermost --config {}",
                    loaded.path.display()
                ),
            })
    };
    let system_name = config.mattermost.system_bot.username.clone();
    let system_account = account(&system_name)?;
    let system_rest = base.with_token(&system_account.token);
    let post_limit = PostLimit::new(system_rest.clone());
    post_limit.refresh().await;

    let timezone =
        chrono_tz::Tz::from_str(&config.deployment.operator_timezone).unwrap_or(chrono_tz::Tz::UTC);
    let mut seats = BTreeMap::new();
    let mut known = vec![(
        system_account.user_id.clone(),
        Known {
            username: system_name.clone(),
            kind: AuthorKind::SystemBot,
        },
    )];
    for agent in &loaded.agents {
        let held = account(&agent.username)?;
        let declared = config.agents.iter().find(|a| a.username == agent.username);
        let own_prompt = own_prompt(loaded, agent.username.as_str())?;
        let tools = offered(agent, boot.registry, &boot.workers);
        let specs = tool_specs(&tools, boot.registry);
        let has = |namespace: &str| tools.iter().any(|t| t.namespace == namespace);
        let prompt = system_prompt(&PromptFacts {
            agent,
            offered: &tools,
            own_prompt: &own_prompt,
            personality: declared
                .and_then(|a| a.personality)
                .unwrap_or(Personality::Collegial),
            limits: &config.limits,
            operator_timezone: &config.deployment.operator_timezone,
            workspaces_root: &config.deployment.workspaces_root,
            homes_root: &config.deployment.homes_root,
            shell_commands: &shell_commands(&boot.workers, &agent.username),
            holds_memory: has("memory"),
            holds_workspace: has("workspace"),
            holds_shell: has("shell"),
        });
        let model = config.models.get(&agent.model).ok_or_else(|| {
            DaemonError::ModelsRefused(format!(
                "no model `{}` for @{}",
                agent.model, agent.username
            ))
        })?;
        let api_key = match &model.api_key {
            Some(secret) => Some(secret.reveal().map_err(|source| DaemonError::Secret {
                key: format!("models.{}.api_key", agent.model),
                source,
            })?),
            None => None,
        };
        let provider = Provider::new(
            ProviderConfig::from_model(model, api_key),
            RetryPolicy::default(),
        )
        .map_err(DaemonError::Http)?;
        known.push((
            held.user_id.clone(),
            Known {
                username: agent.username.clone(),
                kind: AuthorKind::Agent,
            },
        ));
        seats.insert(
            agent.username.clone(),
            Seat {
                agent: agent.clone(),
                expertise: declared.map(|a| a.expertise.clone()).unwrap_or_default(),
                user_id: held.user_id.clone(),
                rest: base.with_token(&held.token),
                provider,
                system_prompt: prompt,
                tools: specs,
                held: tools,
            },
        );
    }
    let display_names = loaded
        .agents
        .iter()
        .map(|a| (a.username.clone(), a.display_name.clone()))
        .collect();
    let services = Arc::new(Services {
        store: boot.store.clone(),
        seats,
        system_bot: SystemBot {
            username: system_name.clone(),
            user_id: system_account.user_id.clone(),
            rest: system_rest.clone(),
        },
        limits: config.limits.clone(),
        timezone,
        timezone_name: config.deployment.operator_timezone.clone(),
        workspaces_root: config.deployment.workspaces_root.clone(),
        registry: boot.registry.clone(),
        workers: boot.workers,
        signer: boot.signer,
        post_limit: post_limit.clone(),
        boot_id: boot.boot_id,
        display_names,
        controls: crate::turns::control::Controls::default(),
        parked: Arc::new(crate::approvals::Parked::default()),
        decision_key: boot
            .credentials
            .command
            .as_ref()
            .map(|c| c.token.clone())
            .unwrap_or_default(),
        command_token: boot
            .credentials
            .command
            .as_ref()
            .map(|c| c.token.clone())
            .unwrap_or_default(),
        lanes: std::sync::OnceLock::new(),
        main_channel_id: std::sync::OnceLock::new(),
        callback_url: config
            .callbacks
            .public_url
            .trim_end_matches('/')
            .to_string(),
        respond_to_all: config
            .channels
            .iter()
            .filter(|c| c.triggering == Triggering::RespondToAll)
            .map(|c| c.name.clone())
            .collect(),
    });
    let swept = match crate::restart::sweep(&services, boot.previous.as_ref()).await {
        Ok(swept) => swept,
        Err(error) => {
            warn!(%error, "the restart sweep failed; abandoned turns stay open");
            crate::restart::Swept::default()
        }
    };
    let lanes = Lanes::spawn(services.clone());
    let _ = services.lanes.set(lanes.clone());
    for (agent, channel_id) in &swept.requeued {
        let _ = lanes
            .send(crate::lanes::LaneInput::Drain(crate::lanes::LaneKey {
                agent: agent.clone(),
                channel_id: channel_id.clone(),
            }))
            .await;
    }
    if let Ok(Some(main)) = system_rest
        .channel_by_name(&boot.credentials.team_id, &config.deployment.main_channel)
        .await
    {
        let _ = services.main_channel_id.set(main.id.clone());
        crate::restart::post_notice(
            &services,
            &main.id,
            boot.previous.as_ref(),
            boot.started,
            &swept,
        )
        .await;
    }
    let (stop, stopped) = watch::channel(false);
    crate::callbacks::serve(config.callbacks.bind, services.clone(), stopped.clone())
        .await
        .map_err(|e| DaemonError::Callbacks(e.to_string()))?;
    let directory = Arc::new(Directory::new(system_rest, known));
    let (events, inbox) = mpsc::channel(4096);
    let mut bots = BTreeMap::new();
    let url = socket::url_for(&config.mattermost.url);
    for (username, held) in &boot.credentials.accounts {
        let is_ours = username == &system_name || services.seats.contains_key(username);
        if !is_ours {
            continue;
        }
        bots.insert(
            username.clone(),
            FeedBot {
                user_id: held.user_id.clone(),
                rest: base.with_token(&held.token),
            },
        );
        tokio::spawn(socket::run(
            BotSocket {
                username: username.clone(),
                token: held.token.clone(),
                url: url.clone(),
            },
            events.clone(),
            stopped.clone(),
        ));
    }
    let feed = Feed {
        store: boot.store,
        directory,
        team_id: boot.credentials.team_id.clone(),
        bots,
        lanes,
    };
    tokio::spawn(feed.run(inbox));
    tokio::spawn(crate::stalls::watch(services.clone(), stopped.clone()));
    tokio::spawn(crate::loops::membership::watch(
        services.clone(),
        stopped.clone(),
    ));
    tokio::spawn(reread_post_limit(post_limit, stopped));
    info!(agents = services.seats.len(), "agents are listening");
    Ok(Running { stop })
}

async fn reread_post_limit(limit: PostLimit, mut stop: watch::Receiver<bool>) {
    let mut every = tokio::time::interval(POST_LIMIT_REREAD);
    every.tick().await;
    loop {
        tokio::select! {
            _ = every.tick() => limit.refresh().await,
            _ = stop.changed() => return,
        }
    }
}

/// The agent's prompt: inline, or its file beneath the resources root.
fn own_prompt(loaded: &LoadedConfig, username: &str) -> Result<String, DaemonError> {
    let Some(agent) = loaded.config.agents.iter().find(|a| a.username == username) else {
        return Ok(String::new());
    };
    if let Some(prompt) = &agent.prompt {
        return Ok(prompt.clone());
    }
    let Some(file) = &agent.prompt_file else {
        return Ok(String::new());
    };
    let path = loaded.config.deployment.resources_root.join(file);
    std::fs::read_to_string(&path).map_err(|source| DaemonError::Prompt {
        agent: username.to_string(),
        path,
        source,
    })
}

/// The commands the shell worker found for `agent`'s user at its start.
fn shell_commands(workers: &BTreeMap<String, Arc<Worker>>, agent: &str) -> Vec<String> {
    workers
        .get("shell")
        .and_then(|w| {
            w.described()
                .agent_commands
                .iter()
                .find(|c| c.agent == agent)
                .map(|c| c.available.clone())
        })
        .unwrap_or_default()
}

/// The tools an agent may call this boot: the core tools this build
/// serves, and its granted tools whose host is running (§3.4).
fn offered(
    agent: &crate::config::resolved::ResolvedAgent,
    registry: &Registry,
    workers: &BTreeMap<String, Arc<Worker>>,
) -> Vec<ToolRef> {
    let mut tools: Vec<ToolRef> = crate::turns::calls::SERVED_CORE
        .iter()
        .map(|(namespace, tool)| ToolRef::new(*namespace, *tool))
        .collect();
    let granted = agent.tools.iter().cloned().chain(
        agent
            .whole_namespaces
            .iter()
            .filter_map(|ns| registry.toolset(ns))
            .flat_map(|t| crate::config::namespace_grant(t, agent.settings.get(&t.namespace))),
    );
    for tool in granted {
        let served = match registry.toolset(&tool.namespace).map(|t| &t.host) {
            Some(Host::Worker(_) | Host::Plugin) => workers.contains_key(&tool.namespace),
            Some(Host::Daemon) => crate::turns::calls::SERVED_GRANTED
                .iter()
                .any(|(namespace, name)| tool.namespace == *namespace && tool.tool == *name),
            None => false,
        };
        if served && registry.tool(&tool).is_some() && !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    tools
}

/// The tools as the model sees them, size bounds left out (§7.2).
fn tool_specs(tools: &[ToolRef], registry: &Registry) -> Vec<ToolSpec> {
    tools
        .iter()
        .filter_map(|tool| {
            let declared = registry.tool(tool)?;
            let schema = declared
                .parameters
                .clone()
                .unwrap_or_else(|| serde_json::json!({"type": "object"}));
            Some(ToolSpec {
                name: tool.model_form(),
                description: declared.description.clone(),
                parameters: provider_schema(&schema),
            })
        })
        .collect()
}
