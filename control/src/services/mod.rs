//! The daemon's runtime context (§3.1, §8.2): what every stage after the
//! store works with — the store handle, each agent's seat, the system bot,
//! the workers that serve tools, the registry, the running turns and the
//! parked ones, and the server's post size limit as last read. It is built
//! once at boot (`daemon/runtime.rs`) and sits above its users (`callbacks`,
//! `lanes`, `loops`, `restart`, `stalls`, `turns`), none of which it imports,
//! so data flows one way (ARCHITECTURE §2).

mod controls;
mod post_limit;
mod seat;

use collegium_worker_kit::redact::Redacted;
use std::collections::BTreeMap;
use std::sync::Arc;

use collegium_worker_kit::grant::GrantSigner;

use crate::config::model::Limits;
use crate::store::StoreHandle;
use crate::tools::Registry;
use crate::workers::dispatch::Worker;

pub use controls::{Controls, Halt, ParkedTurn, RunningTurn, Steer, SteerRefused, TurnSignals};
pub use post_limit::{DEFAULT_POST_LIMIT, POST_LIMIT_REREAD, PostLimit};
pub use seat::{Seat, SystemBot};

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
    /// The PDF reader, where an agent holds `web::fetch` (§3.4).
    pub pdf: Option<Arc<crate::workers::pdf::PdfWorker>>,
    /// The mailboxes, where an agent has one (§3.13).
    pub mail: Option<Arc<crate::workers::mail::MailWorker>>,
    pub signer: GrantSigner,
    pub post_limit: PostLimit,
    pub boot_id: String,
    /// Every agent's display name by username (§3.1).
    pub display_names: BTreeMap<String, String>,
    /// Channel handles configured with respond-to-all triggering (§3.10).
    pub respond_to_all: Vec<String>,
    /// The turns running now, for `/collegium stop` and `kill` (§7.5).
    pub controls: Controls,
    /// Turns parked on a person's decision (§3.7).
    pub parked: Arc<crate::approvals::Parked>,
    /// Mattermost's secret, which signs each approval's buttons (§6.4).
    pub decision_key: Redacted<String>,
    /// The `/collegium` command's token, which every command request carries.
    pub command_token: Redacted<String>,
    /// The callback server's public base URL.
    pub callback_url: String,
    /// The team every configured channel belongs to (§3.1).
    pub team_id: String,
    /// What a trigger sender presents on the trigger route; none closes the
    /// route (§6.4).
    pub trigger_secret: Option<Redacted<String>>,
    /// The most webhook triggers one agent may have outstanding (§6.4).
    pub trigger_outstanding_max: u32,
    /// Every declared schedule, read at boot (§4.2), for
    /// `/collegium inspect` (§8.4).
    pub schedules: Vec<crate::triggers::scheduler::Declared>,
    /// The main channel's id, where halts and boot notices go (§7.3, §7.4).
    pub main_channel_id: std::sync::OnceLock<String>,
    /// Replies recorded from Mattermost's answer, waiting for the socket
    /// copy the feed hands on (§5.2).
    pub posted: Arc<crate::chat::posted::Posted>,
}

/// An agent as notices and lines name it: its display name, or its username
/// where it has none (§3.2).
pub fn display_name<'a>(names: &'a BTreeMap<String, String>, username: &'a str) -> &'a str {
    names.get(username).map_or(username, String::as_str)
}

impl Services {
    /// An agent by its display name (§3.2).
    pub fn display_name<'a>(&'a self, username: &'a str) -> &'a str {
        display_name(&self.display_names, username)
    }

    pub fn seat(&self, agent: &str) -> Option<&Seat> {
        self.seats.get(agent)
    }
}
