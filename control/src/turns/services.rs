//! What a turn works with: the store, each agent's seat (its own Mattermost
//! session, its model, its rendered system prompt and the tools it is
//! offered), the system bot, the workers that serve tools, and the server's
//! post size limit as last read.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use collegium_worker_kit::grant::GrantSigner;
use tracing::{info, warn};

use crate::chat::Rest;
use crate::config::model::Limits;
use crate::config::resolved::ResolvedAgent;
use crate::inference::{Provider, ToolSpec};
use crate::store::StoreHandle;
use crate::tools::{Registry, ToolRef};
use crate::workers::dispatch::Worker;

/// One agent at runtime.
pub struct Seat {
    pub agent: ResolvedAgent,
    pub expertise: String,
    pub user_id: String,
    /// The agent's own session: it posts, reacts and reads as itself.
    pub rest: Rest,
    pub provider: Provider,
    pub system_prompt: String,
    /// What the model is offered, in the order offered.
    pub tools: Vec<ToolSpec>,
    /// Every tool the agent may call this boot: granted tools whose host is
    /// running, and the core tools this daemon serves (§3.4).
    pub held: Vec<ToolRef>,
}

/// The system bot at runtime.
pub struct SystemBot {
    pub username: String,
    pub user_id: String,
    pub rest: Rest,
}

pub struct Services {
    pub store: StoreHandle,
    pub seats: BTreeMap<String, Seat>,
    pub system_bot: SystemBot,
    pub limits: Limits,
    pub timezone: chrono_tz::Tz,
    pub timezone_name: String,
    /// Where each agent's workspace is, one directory per agent (A2).
    pub workspaces_root: std::path::PathBuf,
    pub registry: Registry,
    /// Workers by namespace.
    pub workers: BTreeMap<String, Arc<Worker>>,
    pub signer: GrantSigner,
    pub post_limit: PostLimit,
    pub boot_id: String,
    /// Every agent's display name by username (§3.1).
    pub display_names: BTreeMap<String, String>,
    /// Channel handles configured with respond-to-all triggering (§3.10).
    pub respond_to_all: Vec<String>,
    /// The turns running now, for `/collegium stop` and `kill` (§7.5).
    pub controls: super::control::Controls,
    /// Turns parked on a person's decision (§3.7).
    pub parked: Arc<crate::approvals::Parked>,
    /// Mattermost's secret, which signs each approval's buttons (§6.4).
    pub decision_key: String,
    /// The `/collegium` command's token, which every command request carries.
    pub command_token: String,
    /// The callback server's public base URL.
    pub callback_url: String,
    /// The lanes' inbox, set once they run: `/collegium resume` drains.
    pub lanes: std::sync::OnceLock<tokio::sync::mpsc::Sender<crate::lanes::LaneInput>>,
    /// The main channel's id, where halts and boot notices go (§7.3, §7.4).
    pub main_channel_id: std::sync::OnceLock<String>,
}

impl Services {
    pub fn seat(&self, agent: &str) -> Option<&Seat> {
        self.seats.get(agent)
    }
}

/// The server's post size limit, in characters, read at runtime and re-read
/// (§6.2): a limit cached forever would miss a server that changed it.
#[derive(Clone)]
pub struct PostLimit {
    chars: Arc<AtomicUsize>,
    rest: Rest,
}

/// What the limit is taken to be until the server says (contract §A.11).
pub const DEFAULT_POST_LIMIT: usize = 16_383;

/// How often the limit is read again.
pub const POST_LIMIT_REREAD: Duration = Duration::from_secs(600);

impl PostLimit {
    pub fn new(rest: Rest) -> Self {
        Self {
            chars: Arc::new(AtomicUsize::new(DEFAULT_POST_LIMIT)),
            rest,
        }
    }

    pub fn get(&self) -> usize {
        self.chars.load(Ordering::Relaxed)
    }

    /// Reads the limit from the server; keeps the last one when it cannot.
    pub async fn refresh(&self) {
        match self.rest.max_post_size().await {
            Ok(Some(limit)) => {
                let before = self.chars.swap(limit, Ordering::Relaxed);
                if before != limit {
                    info!(limit, "the server's post size limit");
                }
            }
            Ok(None) => warn!("the server's client configuration names no MaxPostSize"),
            Err(error) => warn!(%error, "could not read the server's post size limit"),
        }
    }
}
