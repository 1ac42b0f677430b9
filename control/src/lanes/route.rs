//! Where a post goes: activation decides whom it addresses (§3.3, §3.10,
//! §4.5); the addressed agent's lane starts a turn, debounces, folds or
//! queues it (§4.4, §5.2); a refused post gets the system bot's correction.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::time::Instant;
use tracing::{info, warn};

use super::{Lane, LaneInput, LaneKey, Lanes};
use crate::activation::{self, Activation, Named};
use crate::chat::directory::framework_post;
use crate::queue::{self, Queued};
use crate::store::{AuthorKind, Member, ObservedPost, ObservedVia, TurnCause};
use crate::turns::fold::FoldGate;
use crate::turns::runner::{self, TurnStart};

/// The reaction a queued post gets (§5.2).
pub const QUEUED_EMOJI: &str = "eyes";

/// What started a turn whose first post is `post`: a trigger's
/// announcement, or a post a reconnect's catch-up recovered, says so, since a turn is recorded with its cause
/// (§8.2) and a recovered post is one the live feed missed (§8.3).
pub(super) fn cause_of(post: &ObservedPost) -> TurnCause {
    // The system bot mentions an agent only to announce a trigger (§4.2).
    if post.author_kind == AuthorKind::SystemBot {
        TurnCause::Trigger
    } else if post.observed_via == ObservedVia::Reconnect {
        TurnCause::Reconnect
    } else {
        TurnCause::Post
    }
}

impl Lanes {
    pub(super) async fn post(&mut self, post: ObservedPost, via: ObservedVia) {
        if post.author_kind == AuthorKind::OtherBot {
            return;
        }
        let channel_id = post.channel_id.clone();
        let facts = self
            .services
            .store
            .call(move |s| Ok((s.channel(&channel_id)?, s.members(&channel_id)?)))
            .await;
        let (channel, members) = match facts {
            Ok((Some(channel), members)) => (channel, members),
            Ok((None, _)) => return,
            Err(error) => {
                warn!(%error, "could not read the channel for a post");
                return;
            }
        };
        let served = |agent: &str| self.services.seats.contains_key(agent);
        let post_id = post.id.clone();
        match activation::of_post(
            &post,
            &channel,
            &members,
            &served,
            &self.services.respond_to_all,
        ) {
            Activation::Addressed(agent) => {
                info!(post = %post.id, agent = %agent, via = via.as_str(), "post addresses an agent");
                self.addressed(&agent, post, false).await;
            }
            Activation::Refused { agents, correct } => {
                if correct {
                    self.correct(&post, &agents).await;
                }
            }
            Activation::Nothing => {
                if post.author_kind == AuthorKind::Person {
                    self.fragment(post, &members);
                }
            }
        }
        self.announcement_arrived(&channel.id, &post_id);
    }

    /// A post addressed to `agent`. `released` is true for a colleague's post
    /// its writing turn held until it stopped acting.
    pub(super) async fn addressed(&mut self, agent: &str, post: ObservedPost, released: bool) {
        // An agent's post waits for its own turn to stop acting (§5.2).
        if post.author_kind == AuthorKind::Agent && !released {
            let writer = LaneKey {
                agent: post.author_name.clone(),
                channel_id: post.channel_id.clone(),
            };
            if let Some(Lane::Running { deferred, .. }) = self.lanes.get_mut(&writer) {
                deferred.push((agent.to_string(), post));
                return;
            }
        }
        let key = LaneKey {
            agent: agent.to_string(),
            channel_id: post.channel_id.clone(),
        };
        let by_system_bot = post.author_kind == AuthorKind::SystemBot;
        // A standing queue waits for a person (§7.1): a colleague's post
        // joins it rather than start a turn that would take it all.
        if post.author_kind == AuthorKind::Agent
            && matches!(self.state(&key), Lane::Idle)
            && self.queue_stands(&key).await
        {
            self.enqueue(&key, &post, true).await;
            return;
        }
        match self.state(&key) {
            Lane::Idle => {
                let debounce = !self.debounce().is_zero() && post.author_kind == AuthorKind::Person;
                if debounce {
                    let ceiling = Instant::now() + self.debounce_ceiling();
                    let generation = self.arm(&key, ceiling);
                    let typing = self.typing(&key);
                    self.lanes.insert(
                        key,
                        Lane::Debouncing {
                            author: post.author_name.clone(),
                            posts: vec![(post, runner::STARTED_IT)],
                            generation,
                            ceiling,
                            typing,
                        },
                    );
                } else {
                    let cause = if released {
                        TurnCause::Handoff
                    } else {
                        cause_of(&post)
                    };
                    self.start_turn(key, vec![(post, runner::STARTED_IT)], cause, None);
                }
            }
            // Nothing from the system bot is queued: triggers are idle-gated
            // instead (§5.2, §4.2).
            _ if by_system_bot => {}
            Lane::Debouncing { author, .. } => {
                let same_author = *author == post.author_name;
                self.enqueue(&key, &post, !same_author).await;
                if same_author {
                    self.rearm(&key);
                }
            }
            Lane::Running { fold, .. } => {
                // Queued first, so absorbing it survives a failure (§4.4).
                let fold = fold.clone();
                let absorbed = post.author_kind == AuthorKind::Person && {
                    self.enqueue(&key, &post, false).await;
                    fold.offer(&post.author_name, &post)
                };
                if post.author_kind != AuthorKind::Person {
                    self.enqueue(&key, &post, true).await;
                } else {
                    if !absorbed {
                        self.acknowledge(&key.agent, &post.id).await;
                    }
                    // A person's post behind a turn earns one drain even if
                    // that turn fails (§7.1), absorbed or not (a failure may
                    // come before the turn took it); a peer's mention does
                    // not.
                    if let Some(Lane::Running { person_waits, .. }) = self.lanes.get_mut(&key) {
                        *person_waits = true;
                    }
                }
            }
        }
    }

    /// A person's post that addresses nobody: folded into a debounce or a
    /// running turn answering the same person in this channel (§4.4);
    /// otherwise it is history.
    fn fragment(&mut self, post: ObservedPost, members: &[Member]) {
        for member in members.iter().filter(|m| m.kind == AuthorKind::Agent) {
            let key = LaneKey {
                agent: member.username.clone(),
                channel_id: post.channel_id.clone(),
            };
            match self.lanes.get_mut(&key) {
                Some(Lane::Debouncing { author, posts, .. }) if *author == post.author_name => {
                    posts.push((post.clone(), "debounce"));
                    self.rearm(&key);
                    return;
                }
                Some(Lane::Running { fold, .. }) if fold.offer(&post.author_name, &post) => {
                    return;
                }
                _ => {}
            }
        }
    }

    /// Resets the §4.4 window, never past its ceiling.
    fn rearm(&mut self, key: &LaneKey) {
        let Some(Lane::Debouncing { ceiling, .. }) = self.lanes.get(key) else {
            return;
        };
        let ceiling = *ceiling;
        let next = self.arm(key, ceiling);
        if let Some(Lane::Debouncing { generation, .. }) = self.lanes.get_mut(key) {
            *generation = next;
        }
    }

    async fn enqueue(&self, key: &LaneKey, post: &ObservedPost, acknowledge: bool) {
        let (agent, channel, id) = (key.agent.clone(), key.channel_id.clone(), post.id.clone());
        let now = chrono::Utc::now().timestamp_millis();
        match self
            .services
            .store
            .call(move |s| s.enqueue(&agent, &channel, &id, now))
            .await
        {
            Ok(_) => {
                info!(post = %post.id, agent = %key.agent, "queued for a busy agent");
                if acknowledge {
                    self.acknowledge(&key.agent, &post.id).await;
                }
            }
            Err(error) => warn!(%error, "could not queue a post"),
        }
    }

    /// Whether rows wait untaken in an idle lane: a queue a failure left
    /// standing (§7.1).
    async fn queue_stands(&self, key: &LaneKey) -> bool {
        let (agent, channel) = (key.agent.clone(), key.channel_id.clone());
        match self
            .services
            .store
            .call(move |s| s.queued_rows(&agent, &channel))
            .await
        {
            Ok(rows) => !rows.is_empty(),
            Err(error) => {
                warn!(%error, "could not read the queue; the post starts a turn");
                false
            }
        }
    }

    /// 👀 on a queued post, as the agent (§5.2): not a reply.
    async fn acknowledge(&self, agent: &str, post_id: &str) {
        let Some(seat) = self.services.seat(agent) else {
            return;
        };
        if let Err(error) = seat.rest.react(&seat.user_id, post_id, QUEUED_EMOJI).await {
            warn!(%error, "could not acknowledge a queued post");
        }
    }

    /// Shows the agent typing through the §4.4 window (§8.1), re-sent so
    /// the client keeps showing it, until the returned flag is cleared.
    fn typing(&self, key: &LaneKey) -> Arc<AtomicBool> {
        let on = Arc::new(AtomicBool::new(true));
        if let Some(seat) = self.services.seat(&key.agent) {
            let (rest, user, channel) = (
                seat.rest.clone(),
                seat.user_id.clone(),
                key.channel_id.clone(),
            );
            let flag = on.clone();
            tokio::spawn(async move {
                while flag.load(Ordering::Relaxed) {
                    let _ = rest.typing(&user, &channel).await;
                    tokio::time::sleep(runner::TYPING_EVERY).await;
                }
            });
        }
        on
    }

    /// The system bot's correction for a person's post that addressed
    /// several agents (§4.5): one post, and no turn, no queue.
    async fn correct(&self, post: &ObservedPost, agents: &BTreeSet<String>) {
        let named: Vec<Named<'_>> = agents
            .iter()
            .map(|username| Named {
                display_name: self.services.display_name(username),
                username,
            })
            .collect();
        let text = activation::correction(&named);
        let bot = &self.services.system_bot;
        let correction = framework_post(post.channel_id.clone(), text, "notice", None);
        if let Err(error) = bot.rest.create_post(&correction).await {
            warn!(%error, "could not post the correction");
        }
    }

    /// After a progress exit: everything queued for the lane becomes one
    /// turn, answering the newest person who addressed the agent (§5.2).
    pub(super) async fn drain(&mut self, key: LaneKey) {
        if !matches!(self.state(&key), Lane::Idle) {
            return;
        }
        let (agent, channel) = (key.agent.clone(), key.channel_id.clone());
        let rows = self
            .services
            .store
            .call(move |s| {
                let mut rows = Vec::new();
                for (id, queued_at) in s.queued_rows(&agent, &channel)? {
                    if let Some(post) = s.post(&id)? {
                        rows.push((post, queued_at));
                    }
                }
                Ok(rows)
            })
            .await;
        let rows = match rows {
            Ok(rows) => rows,
            Err(error) => {
                warn!(%error, agent = %key.agent, "could not read the queue to drain it");
                return;
            }
        };
        if rows.is_empty() {
            return;
        }
        info!(agent = %key.agent, channel = %key.channel_id, rows = rows.len(), "draining the queue");
        let drained: Vec<Queued> = rows
            .iter()
            .map(|(p, _)| Queued {
                post_id: p.id.clone(),
                created_at: p.created_at,
                by_person: p.author_kind == AuthorKind::Person,
            })
            .collect();
        let Some(chosen) = queue::answered(&drained) else {
            return;
        };
        let bound = rows.iter().map(|(_, at)| *at).max();
        let answered = chosen.post_id.clone();
        let author = rows
            .iter()
            .find(|(p, _)| p.id == answered)
            .map(|(p, _)| p.author_name.clone())
            .unwrap_or_default();
        self.launch(
            key,
            Vec::new(),
            TurnCause::Drain,
            Some(answered),
            bound,
            &author,
        );
    }

    pub(super) fn start_turn(
        &mut self,
        key: LaneKey,
        posts: Vec<(ObservedPost, &'static str)>,
        cause: TurnCause,
        bound: Option<i64>,
    ) {
        let answered = posts.last().map(|(p, _)| p.id.clone());
        let author = posts
            .first()
            .map(|(p, _)| p.author_name.clone())
            .unwrap_or_default();
        self.launch(key, posts, cause, answered, bound, &author);
    }

    fn launch(
        &mut self,
        key: LaneKey,
        posts: Vec<(ObservedPost, &'static str)>,
        cause: TurnCause,
        answered: Option<String>,
        bound: Option<i64>,
        author: &str,
    ) {
        let fold = Arc::new(FoldGate::new(author, self.services.limits.fold_limit));
        let turn_id = uuid::Uuid::now_v7().to_string();
        self.lanes.insert(
            key.clone(),
            Lane::Running {
                turn_id: turn_id.clone(),
                fold: fold.clone(),
                deferred: Vec::new(),
                person_waits: false,
            },
        );
        let start = TurnStart {
            turn_id,
            agent: key.agent,
            channel_id: key.channel_id,
            cause,
            answers: posts,
            answered,
            drain_bound: bound,
            fold,
        };
        let services = self.services.clone();
        let inbox = self.inbox.clone();
        tokio::spawn(async move {
            let outcome = runner::run(services, start).await;
            let _ = inbox.send(LaneInput::TurnEnded(outcome)).await;
        });
    }
}
