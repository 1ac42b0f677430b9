//! Bringing the agents up (§3.1, §8.2), phase by phase: the system bot and
//! the server's post limit, a seat per agent (`seats.rs`), the runtime
//! context every later stage shares, the restart's recovery (§7.3), then
//! listening — the callback server, one socket per bot, the feed and the
//! watches.

use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tracing::{info, warn};

use super::DaemonError;
use super::seats::{account, seats};
use crate::chat::Rest;
use crate::chat::credentials::Credentials;
use crate::chat::feed::Feed;
use crate::chat::socket::{self, BotSocket};
use crate::config::LoadedConfig;
use crate::config::model::Triggering;
use crate::lanes::{LaneInput, LaneKey, Lanes};
use crate::services::{Controls, POST_LIMIT_REREAD, PostLimit, Seat, Services, SystemBot};
use crate::store::StoreHandle;
use crate::tools::{Registry, ToolRef};
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
    /// The PDF reader, where an agent holds `web::fetch` (§3.4).
    pub pdf: Option<Arc<crate::workers::pdf::PdfWorker>>,
    /// The mailboxes, where an agent has one (§3.13).
    pub mail: Option<Arc<crate::workers::mail::MailWorker>>,
    /// Why each mailbox that could not be reached at boot could not, by
    /// agent: its channel is told, and polling goes on (§3.13).
    pub mail_unreachable: BTreeMap<String, String>,
    /// The tools each agent is offered, every grant served (`grants.rs`).
    pub offered: BTreeMap<String, Vec<ToolRef>>,
    pub signer: collegium_worker_kit::grant::GrantSigner,
    pub store: StoreHandle,
    pub boot_id: String,
    /// The previous run, for the restart sweep and its notice (§7.3).
    pub previous: Option<crate::store::ProcessRun>,
    pub started: i64,
    /// The trigger route's secret, read at boot; none closes the route
    /// (§6.4).
    pub trigger_secret: Option<collegium_worker_kit::redact::Redacted<String>>,
}

/// Starts the agents, serving callbacks on the listener bound before the
/// workers' handshakes.
pub async fn start(
    mut boot: Boot<'_>,
    callbacks: tokio::net::TcpListener,
) -> Result<Running, DaemonError> {
    let base = Rest::new(&boot.loaded.config.mattermost.url).map_err(DaemonError::Http)?;
    let system_bot = system_bot(&boot, &base)?;
    let post_limit = PostLimit::new(system_bot.rest.clone());
    post_limit.refresh().await;
    let seats = seats(&boot, &base)?;
    let previous = boot.previous.clone();
    let started = boot.started;
    let loaded = boot.loaded;
    let credentials = boot.credentials;
    let store = boot.store.clone();
    let mail_unreachable = std::mem::take(&mut boot.mail_unreachable);
    let services = Arc::new(context(boot, seats, system_bot, post_limit.clone()));
    // Every schedule's channel is a target for its agent, or boot refuses
    // naming it (§4.2).
    let schedules = crate::triggers::scheduler::declared(loaded);
    let schedule_targets = crate::triggers::scheduler::targets(&services, &schedules)
        .await
        .map_err(|e| DaemonError::Triggers(e.to_string()))?;
    // Every mailbox announces in a channel its agent is in, or boot refuses
    // naming it; its credentials were proven as the worker connected
    // (§3.13).
    let mailboxes = match &services.mail {
        Some(_) => crate::triggers::mail_poll::prove(
            &services,
            crate::triggers::mail_poll::mailboxes(loaded),
            &mail_unreachable,
        )
        .await
        .map_err(|e| DaemonError::Triggers(e.to_string()))?,
        None => Vec::new(),
    };
    // §7.3 step 3 before the sweep and the drains: the sweep recomputes
    // deferred hand-offs from the posts the store holds, and a drained
    // turn assembles its window from it (§8.2).
    let directory = super::backfill::directory(&services);
    let bots = super::backfill::bots(credentials, &services, &base);
    let unread = super::backfill::at_boot(&services, &bots, &directory, &credentials.team_id).await;
    let swept = match crate::restart::sweep(&services, previous.as_ref()).await {
        Ok(swept) => swept,
        Err(error) => {
            warn!(%error, "the restart sweep failed; abandoned turns stay open");
            crate::restart::Swept::default()
        }
    };
    let lanes = Lanes::spawn(services.clone());
    let held_drains = recover(
        &services,
        &lanes,
        loaded,
        credentials,
        previous.as_ref(),
        started,
        &swept,
        &unread,
    )
    .await;
    let running = listen(
        loaded,
        credentials,
        services.clone(),
        Feed {
            store,
            directory,
            team_id: credentials.team_id.clone(),
            bots,
            lanes: lanes.clone(),
            held_drains,
            posted: services.posted.clone(),
        },
        callbacks,
    )?;
    if let Some(source) = &services.mail {
        for proven in mailboxes {
            crate::triggers::mail_poll::spawn(
                services.clone(),
                source.clone(),
                proven,
                lanes.clone(),
                running.stop.subscribe(),
            );
        }
    }
    crate::triggers::scheduler::spawn(
        services,
        schedules,
        schedule_targets,
        lanes,
        running.stop.subscribe(),
    );
    tokio::spawn(reread_post_limit(post_limit, running.stop.subscribe()));
    Ok(running)
}

/// The system bot's session.
fn system_bot(boot: &Boot<'_>, base: &Rest) -> Result<SystemBot, DaemonError> {
    let username = boot.loaded.config.mattermost.system_bot.username.clone();
    let held = account(boot, &username)?;
    Ok(SystemBot {
        username,
        user_id: held.user_id.clone(),
        rest: base.with_token(held.token.expose()),
    })
}

/// The runtime context every later stage shares.
fn context(
    boot: Boot<'_>,
    seats: BTreeMap<String, Seat>,
    system_bot: SystemBot,
    post_limit: PostLimit,
) -> Services {
    let config = &boot.loaded.config;
    let command_token = boot
        .credentials
        .command
        .as_ref()
        .map(|c| c.token.clone())
        .unwrap_or_default();
    Services {
        store: boot.store,
        seats,
        system_bot,
        limits: config.limits.clone(),
        // The configuration check refused any other timezone.
        timezone: chrono_tz::Tz::from_str(&config.deployment.operator_timezone)
            .unwrap_or(chrono_tz::Tz::UTC),
        timezone_name: config.deployment.operator_timezone.clone(),
        workspaces_root: config.deployment.workspaces_root.clone(),
        registry: boot.registry.clone(),
        workers: boot.workers,
        pdf: boot.pdf,
        mail: boot.mail,
        signer: boot.signer,
        post_limit,
        boot_id: boot.boot_id,
        display_names: boot
            .loaded
            .agents
            .iter()
            .map(|a| (a.username.clone(), a.display_name.clone()))
            .collect(),
        schedules: crate::triggers::scheduler::declared(boot.loaded),
        controls: Controls::default(),
        parked: Arc::new(crate::approvals::Parked::default()),
        decision_key: command_token.clone(),
        command_token,
        main_channel_id: std::sync::OnceLock::new(),
        posted: Arc::default(),
        callback_url: config
            .callbacks
            .public_url
            .trim_end_matches('/')
            .to_string(),
        team_id: boot.credentials.team_id.clone(),
        trigger_secret: boot.trigger_secret,
        trigger_outstanding_max: config.callbacks.trigger_outstanding_max,
        respond_to_all: config
            .channels
            .iter()
            .filter(|c| c.triggering == Triggering::RespondToAll)
            .map(|c| c.name.clone())
            .collect(),
    }
}

/// At boot: every lane with a standing queue drains, and the main channel
/// hears how the previous run ended (§7.3). A lane whose agent's channels
/// the boot backfill could not read (`unread`) is held for the feed, which
/// drains it once that bot's socket has caught up; the held lanes, by bot.
#[allow(clippy::too_many_arguments)]
async fn recover(
    services: &Arc<Services>,
    lanes: &mpsc::Sender<LaneInput>,
    loaded: &LoadedConfig,
    credentials: &Credentials,
    previous: Option<&crate::store::ProcessRun>,
    started: i64,
    swept: &crate::restart::Swept,
    unread: &BTreeSet<String>,
) -> BTreeMap<String, Vec<LaneKey>> {
    let mut held: BTreeMap<String, Vec<LaneKey>> = BTreeMap::new();
    for (agent, channel_id) in crate::restart::lanes_to_drain(services, swept).await {
        let key = LaneKey { agent, channel_id };
        if unread.contains(&key.agent) {
            held.entry(key.agent.clone()).or_default().push(key);
            continue;
        }
        let _ = lanes.send(LaneInput::Drain(key)).await;
    }
    if let Ok(Some(main)) = services
        .system_bot
        .rest
        .channel_by_name(&credentials.team_id, &loaded.config.deployment.main_channel)
        .await
    {
        let _ = services.main_channel_id.set(main.id.clone());
        crate::restart::post_notice(services, &main.id, previous, started, swept).await;
    }
    held
}

/// The inputs: the callback server, one socket per bot into the feed, and
/// the stall and membership watches.
fn listen(
    loaded: &LoadedConfig,
    credentials: &Credentials,
    services: Arc<Services>,
    feed: Feed,
    callbacks: tokio::net::TcpListener,
) -> Result<Running, DaemonError> {
    let config = &loaded.config;
    let (stop, stopped) = watch::channel(false);
    let routes = crate::callbacks::Routes {
        services: services.clone(),
        lanes: feed.lanes.clone(),
    };
    crate::callbacks::serve(callbacks, routes, stopped.clone());
    let (events, inbox) = mpsc::channel(4096);
    let url = socket::url_for(&config.mattermost.url);
    for username in feed.bots.keys() {
        let Some(held) = credentials.accounts.get(username) else {
            continue;
        };
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
    tokio::spawn(feed.run(inbox));
    tokio::spawn(crate::stalls::watch(services.clone(), stopped.clone()));
    tokio::spawn(crate::loops::membership::watch(services.clone(), stopped));
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
