//! Assembling a turn's context from the store (§3.8, §8.2): the window, then
//! the framework's message. One store call reads everything, and nothing
//! here asks Mattermost: membership, pins and posts are as last observed.

use std::collections::BTreeMap;

use crate::context::message::{self, EarlierAction, MessageFacts, Peer};
use crate::context::window::{self, PreviousTurn, Window, WindowRequest};
use crate::inference::Message;
use crate::store::{AuthorKind, Millis, ObservedChannel, ObservedPost, StoreError, TraceKind};
use crate::tools::ToolRef;

use crate::services::{Seat, Services};

/// What one assembly produced.
pub struct Assembled {
    /// The window's messages followed by the framework's message.
    pub messages: Vec<Message>,
    /// Index of the framework's message; the window is everything before.
    pub window_len: usize,
    pub window: Window,
}

/// The turn as assembly needs it.
pub struct AssemblyInput<'a> {
    pub turn_id: &'a str,
    pub channel_id: &'a str,
    pub started_at: Millis,
    pub answers: &'a [ObservedPost],
    /// The turn drains the queue behind the agent's own previous turn.
    pub draining: bool,
}

pub async fn assemble(
    services: &Services,
    seat: &Seat,
    input: &AssemblyInput<'_>,
) -> Result<Assembled, StoreError> {
    let peers: BTreeMap<String, Peer> = services
        .seats
        .values()
        .filter(|s| s.agent.username != seat.agent.username)
        .map(|s| {
            (
                s.agent.username.clone(),
                Peer {
                    display_name: s.agent.display_name.clone(),
                    username: s.agent.username.clone(),
                    expertise: s.expertise.clone(),
                    namespaces: s.agent.namespaces.clone(),
                },
            )
        })
        .collect();
    let agent = seat.agent.username.clone();
    let agent_user_id = seat.user_id.clone();
    let budget = u64::from(seat.agent.limits.context_budget_tokens);
    let channel_id = input.channel_id.to_string();
    let turn_id = input.turn_id.to_string();
    let started_at = input.started_at;
    let answers = input.answers.to_vec();
    let draining = input.draining;
    let display_names = services.display_names.clone();
    let timezone = services.timezone;
    let timezone_name = services.timezone_name.clone();
    let reads_posts = seat.held.contains(&ToolRef::new("conversations", "read"));
    let memory_caps = crate::memory::listed_caps(seat);
    let open_work_cap = crate::units::render::holds_tasks(seat);
    let boot_id = services.boot_id.clone();
    let now = chrono::Utc::now().timestamp_millis();
    services
        .store
        .call(move |store| {
            let channel = store.channel(&channel_id)?.unwrap_or(ObservedChannel {
                id: channel_id.clone(),
                name: String::new(),
                display_name: String::new(),
                kind: crate::store::ChannelKind::Open,
            });
            let members = store.members(&channel_id)?;
            let present_peers: Vec<Peer> = members
                .iter()
                .filter(|m| m.kind == AuthorKind::Agent)
                .filter_map(|m| peers.get(&m.username).cloned())
                .collect();
            let previous = store
                .turns_of(&agent, &channel_id)?
                .into_iter()
                .rev()
                .find(|t| t.id != turn_id);
            let anchor = previous
                .as_ref()
                .and_then(|t| t.context_reach_post_id.clone());
            // Context never reaches back past the agent's latest episode
            // boundary here, nor past the channel's clear (§3.8, §8.5).
            let floor = store.context_floor(&agent, &channel_id)?;
            let mut window = window::build(
                store,
                &WindowRequest {
                    agent: &agent,
                    agent_user_id: &agent_user_id,
                    channel_id: &channel_id,
                    budget_tokens: budget,
                    anchor: anchor.as_deref(),
                    turn_started_at: started_at,
                    floor,
                    display_names: &display_names,
                    timezone,
                },
            )?;
            let earlier = earlier_actions(store, &agent, &channel_id, floor, window.reach_at)?;
            let pinned = store.pinned_posts(&channel_id)?;
            let memory = crate::memory::listing(store, &agent, memory_caps.as_ref())?;
            window.mark_previous_turn(
                match &previous {
                    Some(t) if t.ended_at.is_none() => PreviousTurn::CutOff,
                    Some(_) => PreviousTurn::Ended,
                    None => PreviousTurn::None,
                },
                draining,
            );
            let open_work = crate::units::render::for_turn(
                store,
                open_work_cap,
                &window.post_ids,
                &crate::units::render::TurnView {
                    agent: &agent,
                    turn_id: &turn_id,
                    channel_id: &channel_id,
                    boot_id: &boot_id,
                    now,
                    timezone,
                    display_names: &display_names,
                },
            )?;
            let text = message::render(&MessageFacts {
                answers: &answers,
                in_window: &window.post_ids,
                now,
                timezone,
                timezone_name: &timezone_name,
                channel: &channel,
                pinned: &pinned,
                earlier_actions: &earlier,
                peers: &present_peers,
                people: &window.people,
                display_names: &display_names,
                reads_posts,
                memory: memory.as_deref(),
                open_work: open_work.as_deref(),
            });
            let mut messages = window.messages.clone();
            let window_len = messages.len();
            messages.push(Message::User(text));
            Ok(Assembled {
                messages,
                window_len,
                window,
            })
        })
        .await
}

/// The agent's own calls in the channel older than the window, newest
/// first: what it did, never what a result said, and never one made before
/// its latest episode boundary here (§3.8).
pub(crate) fn earlier_actions(
    store: &crate::store::Store,
    agent: &str,
    channel_id: &str,
    floor: Millis,
    reach_at: Option<Millis>,
) -> Result<Vec<EarlierAction>, StoreError> {
    let Some(before) = reach_at else {
        return Ok(Vec::new());
    };
    let events = store.own_trace(agent, channel_id, floor, before)?;
    let mut actions: Vec<EarlierAction> = events
        .iter()
        .filter(|e| e.kind == TraceKind::Result)
        .map(EarlierAction::of_result)
        .collect();
    actions.reverse();
    actions.truncate(message::EARLIER_ACTIONS);
    Ok(actions)
}
