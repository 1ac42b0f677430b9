//! The shape of the configuration file (ARCHITECTURE §7). Every table refuses
//! unknown keys, so a typo is an error rather than a silently ignored option.
//! The doc comments here are what `collegium config schema` prints as each
//! key's description.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::secret::Secret;
use super::settings::Settings;

/// A whole Collegium configuration file.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub deployment: Deployment,
    /// Deployment-wide limits; each agent may override the per-turn ones.
    #[serde(default)]
    pub limits: Limits,
    /// The HTTP server Mattermost calls back (decisions, commands, triggers).
    #[serde(default)]
    pub callbacks: Callbacks,
    pub mattermost: Mattermost,
    /// Models by the name agents refer to them with.
    #[serde(default)]
    pub models: BTreeMap<String, Model>,
    /// The channels this deployment uses. Membership is not declared here: it
    /// is held in Mattermost and set by the people who run it (§3.9).
    #[serde(default)]
    pub channels: Vec<Channel>,
    #[serde(default)]
    pub agents: Vec<Agent>,
    /// The web toolset's deployment-wide policy (§3.4). Absent, the
    /// defaults apply.
    #[serde(default)]
    pub web: Option<Web>,
    /// Deployment defaults per toolset, by namespace; each agent's own settings
    /// are merged over these shallowly, then parsed against the toolset's schema
    /// (§3.4).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub settings: Settings,
    /// How the daemon runs each operator plugin, by namespace (§3.14).
    #[serde(default)]
    pub plugins: BTreeMap<String, Plugin>,
}

/// How the daemon runs one plugin.
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plugin {
    /// The OS user the plugin runs as (ARCHITECTURE §4, §6: each toolset
    /// process under its own user). A daemon running as root starts the
    /// plugin as this user; a daemon that is not root connects to the
    /// plugin its unit `collegium-plugin@NAME.service` runs as this user.
    /// Unset, or the daemon's own user, the plugin runs as the daemon's
    /// child under the daemon's user.
    pub user: Option<String>,
}

/// Where the deployment lives and how it reads time.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// The operator's IANA timezone (for example `Europe/Berlin`): dates in the
    /// prompt and times on status posts are in it (§3.8, §8.1).
    pub operator_timezone: String,
    /// The channel (by name) where boot notices and halts are posted (§7.3).
    pub main_channel: String,
    /// Where the store and token files live. Relative paths in this file are
    /// resolved against the file's own directory.
    #[serde(default = "defaults::state_dir")]
    pub state_dir: PathBuf,
    /// Where worker sockets live.
    #[serde(default = "defaults::runtime_dir")]
    pub runtime_dir: PathBuf,
    /// Where workers and plugins keep their audit logs, one directory each,
    /// owned by the user the worker runs as (ARCHITECTURE §4).
    #[serde(default = "defaults::audit_dir")]
    pub audit_dir: PathBuf,
    /// Agent prompt files and deployment skills (`skills/NAME/SKILL.md`) live
    /// beneath this directory (§3.1, §3.5).
    #[serde(default = "defaults::resources_root")]
    pub resources_root: PathBuf,
    /// The app root: the framework's binaries and files, with the plugins
    /// root beneath it by default. No agent's OS user may traverse it
    /// (§6.1): the boot tries it as each and refuses where one can (mode
    /// 0750, group `collegium-app`).
    #[serde(default = "defaults::app_root")]
    pub app_root: PathBuf,
    /// Operator plugins, one directory per namespace (§3.14). No agent's OS
    /// user may traverse it (§6.1), checked at boot as the app root is.
    #[serde(default = "defaults::plugins_root")]
    pub plugins_root: PathBuf,
    /// The root of the agents' workspaces, one directory per agent (A2): the
    /// daemon writes them, each agent's OS user only reads its own. Outside
    /// the state directory, which agents may not enter.
    #[serde(default = "defaults::workspaces_root")]
    pub workspaces_root: PathBuf,
    /// The root of the homes of agents that hold `shell::run`, one directory
    /// per agent, owned by its OS user (§6.1).
    #[serde(default = "defaults::homes_root")]
    pub homes_root: PathBuf,
    /// The OS user the daemon runs as. The provisioner, run as root, gives it
    /// the files it writes into the state directory (the bot tokens); unset,
    /// they belong to whoever runs the provisioner.
    pub daemon_user: Option<String>,
    /// Let the daemon run as root (uid 0). It needs no privilege, so boot
    /// refuses root unless this says so (issue 21 item 5): tests and demos
    /// that run everything as root set it, a deployment runs the daemon as
    /// its own user (`collegium`).
    #[serde(default)]
    pub allow_root: bool,
}

/// Deployment-wide limits (§3.8, §4.4, §5.3, §7.2, §7.4, §7.6).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Action attempts per turn before the agent asks to extend (§5.3).
    #[schemars(range(min = 1))]
    pub action_budget: u32,
    /// Tokens a turn's starting window may hold (§3.8). Unset: a fixed share of
    /// the turn ceiling.
    pub context_budget_tokens: Option<u32>,
    /// Tokens a turn's context may accumulate (§3.8).
    #[schemars(range(min = 1))]
    pub turn_ceiling_tokens: u32,
    /// Wall-clock limit on one completion, in seconds (§7.2).
    #[schemars(range(min = 1))]
    pub completion_time_limit_secs: u32,
    /// How long a provider may send nothing before the completion is cut and
    /// retried, in seconds (§7.2).
    #[schemars(range(min = 1))]
    pub idle_timeout_secs: u32,
    /// The resetting delay before a turn starts, in milliseconds (§4.4).
    pub debounce_window_ms: u32,
    /// The longest the debounce may run however often it resets (§4.4).
    pub debounce_ceiling_ms: u32,
    /// How many fragments a running turn absorbs before the rest queue (§4.4).
    pub fold_limit: u32,
    /// How far work may be handed down from a person (§7.4).
    #[schemars(range(min = 1))]
    pub depth_limit: u32,
    /// How many turns one root may produce (§7.4).
    #[schemars(range(min = 1))]
    pub chain_limit: u32,
    /// Turns per trailing hour, framework-wide, before everything halts (§7.4).
    #[schemars(range(min = 1))]
    pub hourly_turn_ceiling: u32,
    /// How long posts may stand queued with no turn running before the system
    /// bot says so, in seconds (§7.6).
    #[schemars(range(min = 1))]
    pub stall_queue_secs: u32,
    /// How long one turn may hold its channel, not counting time parked on a
    /// person, before the system bot says so, in seconds (§7.6).
    #[schemars(range(min = 1))]
    pub stall_turn_secs: u32,
    /// How long a tool call may run before it is cut off, in seconds. A call
    /// that is not retryable and passes it ends its turn as a side effect
    /// that cannot be confirmed (§7.1).
    #[schemars(range(min = 1))]
    pub tool_call_deadline_secs: u32,
    /// How long a `/collegium` subcommand may take to answer before it
    /// answers at once that it is working and finishes through the
    /// command's `response_url`, in milliseconds. Mattermost waits only its
    /// outgoing-request timeout (30 s by default) for an answer (§8.4).
    #[schemars(range(min = 1, max = 25_000))]
    pub command_answer_ms: u32,
}

impl Default for Limits {
    fn default() -> Self {
        // The default agent is a conversational one, so the budget stays low
        // (§5.3); the rest are set far from what ordinary work reaches.
        Self {
            action_budget: 10,
            context_budget_tokens: None,
            turn_ceiling_tokens: 64_000,
            completion_time_limit_secs: 600,
            idle_timeout_secs: 90,
            debounce_window_ms: 2_500,
            debounce_ceiling_ms: 15_000,
            fold_limit: 3,
            depth_limit: 4,
            chain_limit: 12,
            hourly_turn_ceiling: 120,
            stall_queue_secs: 900,
            stall_turn_secs: 1_200,
            tool_call_deadline_secs: 120,
            command_answer_ms: 3_000,
        }
    }
}

/// The callback HTTP server (§6.4).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Callbacks {
    /// Address to listen on: loopback or a private address, never a public one
    /// (§6.4).
    #[schemars(with = "String")]
    pub bind: SocketAddr,
    /// The URL Mattermost uses to reach this server.
    pub public_url: String,
    /// The secret a trigger sender presents on the trigger route. Absent, the
    /// route is closed (§6.4).
    pub trigger_secret: Option<Secret>,
    /// The most webhook triggers one agent may have outstanding (recorded,
    /// not yet marked done); the route refuses more with 429 until the agent
    /// marks one done. Each outstanding trigger is a turn to come, and
    /// turns count toward the hourly ceiling (§7.4): the sender's secret
    /// announces work, and this bounds how much (§6.4).
    pub trigger_outstanding_max: u32,
}

impl Default for Callbacks {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 8071)),
            public_url: "http://127.0.0.1:8071".to_string(),
            trigger_secret: None,
            trigger_outstanding_max: 20,
        }
    }
}

/// The Mattermost server and team (§3.1).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mattermost {
    /// The server's base URL, for example `https://chat.example.com`.
    pub url: String,
    /// The team's name (its URL handle).
    pub team: String,
    /// The team's display name; unset, the team name.
    pub team_display_name: Option<String>,
    /// The system bot's account (§3.2).
    #[serde(default)]
    pub system_bot: SystemBot,
    /// Credentials the provisioner uses. Only `collegium-provision` reads them;
    /// the daemon never does (§3.1).
    pub admin: Option<AdminCredentials>,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SystemBot {
    pub username: String,
    pub display_name: String,
}

impl Default for SystemBot {
    fn default() -> Self {
        Self {
            username: "collegium".to_string(),
            display_name: "Collegium".to_string(),
        }
    }
}

/// A Mattermost administrator: a username with its password, or a personal
/// access token.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AdminCredentials {
    pub username: Option<String>,
    pub password: Option<Secret>,
    pub token: Option<Secret>,
}

/// The wire a model is reached over (§3.8, §3.12).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    OpenaiCompatible,
    Openrouter,
    Anthropic,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenaiCompatible => "openai-compatible",
            Self::Openrouter => "openrouter",
            Self::Anthropic => "anthropic",
        }
    }
}

/// One model an agent may be assigned (§3.1).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub provider: ProviderKind,
    /// The provider's own name for the model.
    pub model: String,
    /// The API's base URL; unset, the provider's public one.
    pub base_url: Option<String>,
    pub api_key: Option<Secret>,
    /// The model's context window in tokens. Required: a model cannot be offered
    /// without a recorded window (§3.8).
    pub context_window: Option<u32>,
    /// The most output tokens one completion may ask for.
    pub max_output_tokens: Option<u32>,
    /// Reasoning effort, in the provider's own vocabulary (§3.12).
    pub reasoning_effort: Option<String>,
    /// Upstreams to prefer, in order, so prompt caches are reused (§3.8).
    #[serde(default)]
    pub preferred_upstreams: Vec<String>,
}

/// Whether a channel is open to the team or by invitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelType {
    #[default]
    Public,
    Private,
}

/// How posts in a channel start turns (§3.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Triggering {
    #[default]
    MentionRequired,
    RespondToAll,
}

/// A channel the deployment uses (§3.9, §3.10).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Channel {
    /// The channel's name (its URL handle).
    pub name: String,
    /// Unset: the name with its first letter capitalised.
    pub display_name: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: ChannelType,
    #[serde(default)]
    pub triggering: Triggering,
}

/// A stance the framework ships, added to the behavioural baseline (§3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Personality {
    Collegial,
    Concise,
    Meticulous,
    Warm,
}

impl Personality {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Collegial => "collegial",
            Self::Concise => "concise",
            Self::Meticulous => "meticulous",
            Self::Warm => "warm",
        }
    }
}

/// One agent: a Mattermost bot account with its own prompt, model, grants,
/// skills and memory (§3.1).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    /// The bot account's username; the agent is addressed as `@username`.
    pub username: String,
    /// Unset: the username with its first letter capitalised (§3.1).
    pub display_name: Option<String>,
    /// What the agent is for, as its colleagues see it in their roster (§3.11).
    #[serde(default)]
    pub expertise: String,
    pub personality: Option<Personality>,
    /// The agent's prompt, inline.
    pub prompt: Option<String>,
    /// The agent's prompt as a markdown file beneath the resources root (§3.1).
    pub prompt_file: Option<PathBuf>,
    /// The name of a model under `[models]`.
    pub model: String,
    /// Namespaces (`web`) or single tools (`web::fetch`) the agent holds (§3.4).
    #[serde(default)]
    pub grants: Vec<String>,
    /// Skills in the agent's manifest: `name` or `namespace::name` (§3.5).
    #[serde(default)]
    pub skills: Vec<String>,
    /// The agent's own settings per toolset, merged over `[settings]` (§3.4).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, serde_json::Value>")]
    pub settings: Settings,
    pub action_budget: Option<u32>,
    pub context_budget_tokens: Option<u32>,
    pub turn_ceiling_tokens: Option<u32>,
    pub completion_time_limit_secs: Option<u32>,
    /// Declared schedules; an agent cannot add one (§4.2, §9).
    #[serde(default)]
    pub schedules: Vec<Schedule>,
}

/// A recurring trigger the system bot announces (§4.2).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    pub name: String,
    /// A five-field cron expression (`0 9 * * 1-5`).
    pub recurrence: String,
    /// IANA timezone the recurrence is read in; unset, the operator's.
    pub timezone: Option<String>,
    /// The channel (by name) the announcement is posted in.
    pub channel: String,
    /// The operator's instruction, posted by the system bot when it fires.
    pub text: String,
}

/// The web toolset's deployment-wide policy (§3.4).
#[derive(Debug, Clone, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Web {
    /// Lift the private-address refusal for every agent and request; logged at
    /// boot.
    pub own_network_browsable: bool,
    /// Hosts closed to every agent, each with every subdomain beneath it.
    pub closed_hosts: Vec<String>,
    /// Browser sessions that may be live at once (4 when not given).
    #[schemars(range(min = 1))]
    pub live_sessions: Option<u32>,
}

mod defaults {
    use std::path::PathBuf;

    pub fn state_dir() -> PathBuf {
        PathBuf::from("/var/lib/collegium")
    }
    pub fn runtime_dir() -> PathBuf {
        PathBuf::from("/run/collegium")
    }
    pub fn audit_dir() -> PathBuf {
        PathBuf::from("/var/log/collegium")
    }
    pub fn resources_root() -> PathBuf {
        PathBuf::from("/etc/collegium/resources")
    }
    pub fn app_root() -> PathBuf {
        PathBuf::from("/usr/lib/collegium")
    }
    pub fn plugins_root() -> PathBuf {
        PathBuf::from("/usr/lib/collegium/plugins")
    }
    pub fn workspaces_root() -> PathBuf {
        PathBuf::from("/var/lib/collegium-workspaces")
    }
    pub fn homes_root() -> PathBuf {
        PathBuf::from("/var/lib/collegium-homes")
    }
}
