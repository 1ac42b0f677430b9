//! The channel window (§3.8): the channel's posts walked backwards from now,
//! the agent's own turns interleaved (never a peer's trace, never a status
//! post), each unit costed before it is admitted and the walk stopping at
//! the first that does not fit. The window's oldest entry holds still: the
//! next window starts from the same entry while everything since fits, and
//! a trim or a fresh build walks to a fixed share of the budget, so the
//! prefix a provider caches survives from turn to turn.

use std::collections::BTreeMap;

use chrono::TimeZone;
use serde::{Deserialize, Serialize};

use crate::inference::{AssistantMessage, Message, ToolCall};
use crate::store::{
    AuthorKind, Millis, ObservedPost, PostRole, Store, StoreError, TraceKind, TurnEvent,
};
use crate::tools::ToolRef;
use crate::tools::framework::parse_tool_ref;

use super::replay::replay_line;
use super::tokens::estimate;

/// The share of the budget a trimmed or fresh window walks to, in percent:
/// the rest is room to grow before the next trim (§3.8).
pub const TRIM_SHARE_PERCENT: u64 = 75;

/// Posts read per page of the walk.
const PAGE: u32 = 64;

/// What to build.
pub struct WindowRequest<'a> {
    pub agent: &'a str,
    pub agent_user_id: &'a str,
    pub channel_id: &'a str,
    pub budget_tokens: u64,
    /// The key of the previous window's oldest unit, if any.
    pub anchor: Option<&'a str>,
    /// The turn being assembled: its own trace is not in the window.
    pub turn_started_at: Millis,
    /// Nothing older than this (an episode boundary or a clear).
    pub floor: Millis,
    /// Agents' display names by username: an agent is named by it (§3.8).
    pub display_names: &'a BTreeMap<String, String>,
    pub timezone: chrono_tz::Tz,
}

/// A built window.
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub messages: Vec<Message>,
    /// The key of the oldest unit admitted: the next window's anchor.
    pub reach: Option<String>,
    /// When the oldest admitted unit was written.
    pub reach_at: Option<Millis>,
    pub charged_tokens: u64,
    /// Posts in the window, by id.
    pub post_ids: Vec<String>,
    /// People who posted in the window, latest first (§3.11).
    pub people: Vec<String>,
    /// Whether the window ends on the agent's own message, so a marker is
    /// owed before the turn's own message (§5.2).
    pub ends_on_own: bool,
}

/// How the agent's previous turn in the channel stands, for the line that
/// ends a window (§5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreviousTurn {
    /// The agent has not run here before.
    None,
    /// It ended.
    Ended,
    /// A restart cut it off before it ended.
    CutOff,
}

/// The line a draining window closes on after the agent's own message.
pub const PREVIOUS_TURN_ENDED: &str = "[Your previous turn in this channel ended with your message above. This turn starts a new message.]";

/// The line a window closes on when a restart cut the previous turn off.
pub const RESTART_CUT_OFF: &str = "[A restart cut off your previous turn in this channel.]";

impl Window {
    /// Closes the window on the line marking where the agent's previous turn
    /// ended, or that a restart cut it off (§5.2): it is the window's last
    /// entry, after the agent's own message and before the framework's
    /// message, so a draining turn never continues its own last message.
    pub fn mark_previous_turn(&mut self, previous: PreviousTurn, draining: bool) {
        let marker = match previous {
            PreviousTurn::CutOff => RESTART_CUT_OFF,
            PreviousTurn::Ended if draining && self.ends_on_own => PREVIOUS_TURN_ENDED,
            _ => return,
        };
        self.messages.push(Message::User(marker.to_string()));
    }
}

/// The calls a completion made, as its trace event's detail records them.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct CompletionDetail {
    #[serde(default)]
    pub calls: Vec<RecordedCall>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedCall {
    pub id: String,
    /// As the model wrote it.
    pub name: String,
    pub arguments: String,
}

/// How a result event records the line later turns read in its place.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ResultDetail {
    #[serde(default)]
    pub replay_line: Option<String>,
    /// What the call was and came to, for a later turn's earlier actions
    /// (§3.8); absent in results recorded before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// The reference the model was given where it read a view of the
    /// result's first part, for the trace (§8.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
}

/// One unit the walk admits or refuses whole.
struct Unit {
    key: String,
    at: Millis,
    messages: Vec<Message>,
    cost: u64,
    post: Option<ObservedPost>,
    own: bool,
}

/// Builds the window; runs on the store thread.
pub fn build(store: &Store, request: &WindowRequest<'_>) -> Result<Window, StoreError> {
    let mut walk = Walk::new(store, request)?;
    let share = request.budget_tokens * TRIM_SHARE_PERCENT / 100;
    let mut admitted: Vec<Unit> = Vec::new();
    let mut total = 0u64;
    let mut anchored = false;
    // With no previous start to hold, the walk goes no further than the
    // share a fresh window is built to.
    let reach_limit = if request.anchor.is_some() {
        request.budget_tokens
    } else {
        share
    };
    while let Some(unit) = walk.next()? {
        if total + unit.cost > reach_limit {
            break;
        }
        total += unit.cost;
        let is_anchor = request.anchor == Some(unit.key.as_str());
        admitted.push(unit);
        if is_anchor {
            anchored = true;
            break;
        }
    }
    if !anchored && total > share {
        // The previous start no longer fits (or there was none): trim to
        // the share, so the window has room to grow and then holds still.
        let mut kept = 0u64;
        let keep = admitted
            .iter()
            .take_while(|u| {
                kept += u.cost;
                kept <= share
            })
            .count();
        admitted.truncate(keep);
        total = admitted.iter().map(|u| u.cost).sum();
    }
    let reach = admitted.last().map(|u| (u.key.clone(), u.at));
    admitted.reverse();
    let mut people = Vec::new();
    for unit in admitted.iter().rev() {
        if let Some(post) = &unit.post
            && post.author_kind == AuthorKind::Person
            && !people.contains(&post.author_name)
        {
            people.push(post.author_name.clone());
        }
    }
    Ok(Window {
        ends_on_own: admitted.last().is_some_and(|u| u.own),
        post_ids: admitted
            .iter()
            .filter_map(|u| u.post.as_ref().map(|p| p.id.clone()))
            .collect(),
        messages: admitted.into_iter().flat_map(|u| u.messages).collect(),
        reach_at: reach.as_ref().map(|r| r.1),
        reach: reach.map(|r| r.0),
        charged_tokens: total,
        people,
    })
}

/// The walk backwards: posts in pages, the agent's own trace beside them,
/// merged newest first.
struct Walk<'s, 'r> {
    store: &'s Store,
    request: &'r WindowRequest<'r>,
    posts: Vec<ObservedPost>,
    posts_done: bool,
    cursor: Option<(Millis, String)>,
    /// The agent's completions with their results, newest first.
    trace: Vec<Unit>,
}

impl<'s, 'r> Walk<'s, 'r> {
    fn new(store: &'s Store, request: &'r WindowRequest<'r>) -> Result<Self, StoreError> {
        let events = store.own_trace(
            request.agent,
            request.channel_id,
            request.floor,
            request.turn_started_at,
        )?;
        let mut trace = trace_units(&events);
        trace.reverse();
        Ok(Self {
            store,
            request,
            posts: Vec::new(),
            posts_done: false,
            cursor: None,
            trace,
        })
    }

    fn next(&mut self) -> Result<Option<Unit>, StoreError> {
        loop {
            if self.posts.is_empty() && !self.posts_done {
                let before = self.cursor.as_ref().map(|(at, id)| (*at, id.as_str()));
                let mut page = self.store.posts_before(
                    self.request.channel_id,
                    before,
                    self.request.floor,
                    PAGE,
                )?;
                self.posts_done = page.len() < PAGE as usize;
                if let Some(last) = page.last() {
                    self.cursor = Some((last.created_at, last.id.clone()));
                }
                page.reverse();
                self.posts = page;
            }
            let post_at = self.posts.last().map(|p| p.created_at);
            let trace_at = self.trace.first().map(|u| u.at);
            match (post_at, trace_at) {
                (None, None) => return Ok(None),
                (Some(p), Some(t)) if t >= p => return Ok(Some(self.trace.remove(0))),
                (None, Some(_)) => return Ok(Some(self.trace.remove(0))),
                _ => {
                    let Some(post) = self.posts.pop() else {
                        continue;
                    };
                    if let Some(unit) = post_unit(post, self.request) {
                        return Ok(Some(unit));
                    }
                }
            }
        }
    }
}

/// A post as the window shows it; none for a post the window leaves out
/// (status posts, the agent's and its colleagues' alike: a status post is a
/// trace rendered, §3.8).
fn post_unit(post: ObservedPost, request: &WindowRequest<'_>) -> Option<Unit> {
    // Approval prompts are their turn's own, and reach the model only as
    // the call's result (§3.7).
    if matches!(post.role, PostRole::Status | PostRole::Prompt) {
        return None;
    }
    let own = post.author_id == request.agent_user_id;
    let message = if own && post.role == PostRole::Reply {
        Message::Assistant(AssistantMessage {
            text: post.message.clone(),
            ..AssistantMessage::default()
        })
    } else {
        Message::User(render_post(&post, request.display_names, request.timezone))
    };
    let cost = message_cost(&message);
    Some(Unit {
        key: post.id.clone(),
        at: post.created_at,
        messages: vec![message],
        cost,
        own: own && post.role == PostRole::Reply,
        post: Some(post),
    })
}

/// How the window names an author (§3.8): without an @, an agent by its
/// display name, a person and the system bot by username.
pub fn author_line(post: &ObservedPost, display_names: &BTreeMap<String, String>) -> String {
    match post.author_kind {
        AuthorKind::Agent => format!(
            "{} (agent)",
            display_names
                .get(&post.author_name)
                .map_or(post.author_name.as_str(), String::as_str)
        ),
        AuthorKind::Person => format!("{} (person)", post.author_name),
        AuthorKind::SystemBot => format!("{} (system bot)", post.author_name),
        AuthorKind::OtherBot => format!("{} (bot)", post.author_name),
    }
}

/// A post as the model reads it: who, when (absolute, so the text never
/// changes between turns), its id, its text, and a line per attached file.
pub fn render_post(
    post: &ObservedPost,
    display_names: &BTreeMap<String, String>,
    timezone: chrono_tz::Tz,
) -> String {
    let mut out = format!(
        "{} · {} · post {}\n{}",
        author_line(post, display_names),
        local_time(post.created_at, timezone),
        post.id,
        strip_mentions_of_agents(&post.message, display_names),
    );
    for file in &post.files {
        out.push_str(&format!(
            "\n[attached file: {} ({}, {} bytes)]",
            file.name, file.mime_type, file.size
        ));
    }
    out
}

/// An @mention of an agent, as prompts carry it, would be copied back into
/// replies as a mention: an agent is shown by name instead (§3.8, §4.5).
/// What counts as a mention is the shared grammar's reading, the one
/// activation applies, so nothing quoted can start a hand-off.
pub fn strip_mentions_of_agents(text: &str, display_names: &BTreeMap<String, String>) -> String {
    mattermost_wire::mentions::replace_mentions(
        text,
        &|username: &str| display_names.contains_key(username),
        &|username: &str| {
            display_names
                .get(username)
                .cloned()
                .unwrap_or_else(|| username.to_string())
        },
    )
}

pub fn local_time(at: Millis, timezone: chrono_tz::Tz) -> String {
    match timezone.timestamp_millis_opt(at).single() {
        Some(time) => time.format("%Y-%m-%d %H:%M").to_string(),
        None => at.to_string(),
    }
}

/// The agent's completions that called tools, each with its results: one
/// unit, since a call is sent beside its result or not at all (§3.8).
/// Oldest first.
fn trace_units(events: &[TurnEvent]) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let mut results: BTreeMap<(String, String), &TurnEvent> = BTreeMap::new();
    for event in events.iter().filter(|e| e.kind == TraceKind::Result) {
        if let Some(call) = &event.call_id {
            results.insert((event.turn_id.clone(), call.clone()), event);
        }
    }
    for event in events.iter().filter(|e| e.kind == TraceKind::Completion) {
        let detail: CompletionDetail = event
            .detail
            .as_deref()
            .and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or_default();
        if detail.calls.is_empty() {
            continue;
        }
        let mut messages = vec![Message::Assistant(AssistantMessage {
            text: event.content.clone().unwrap_or_default(),
            tool_calls: detail
                .calls
                .iter()
                .map(|c| ToolCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: sendable_arguments(&c.arguments),
                })
                .collect(),
            reasoning: None,
        })];
        for call in &detail.calls {
            let content = match results.get(&(event.turn_id.clone(), call.id.clone())) {
                Some(result) => replayed(result),
                None => "[this call has no recorded result]".to_string(),
            };
            messages.push(Message::ToolResult {
                call_id: call.id.clone(),
                name: call.name.clone(),
                content,
            });
        }
        let cost = messages.iter().map(message_cost).sum();
        units.push(Unit {
            key: format!("trace:{}:{}", event.turn_id, event.seq),
            at: event.at,
            messages,
            cost,
            post: None,
            own: true,
        });
    }
    units.sort_by_key(|u| u.at);
    units
}

/// A call's arguments as they go back to the provider: as recorded when
/// they are JSON, else an empty object. The provider's raw text is never
/// read back (§7.2), and a provider that wants an object would refuse it;
/// the trace keeps the exact bytes.
pub fn sendable_arguments(arguments: &str) -> String {
    if serde_json::from_str::<serde_json::Value>(arguments).is_ok() {
        arguments.to_string()
    } else {
        "{}".to_string()
    }
}

/// What a later turn reads in place of a result (§3.8).
fn replayed(result: &TurnEvent) -> String {
    let detail: ResultDetail = result
        .detail
        .as_deref()
        .and_then(|d| serde_json::from_str(d).ok())
        .unwrap_or_default();
    let tool = result
        .tool
        .as_deref()
        .and_then(parse_tool_ref)
        .unwrap_or_else(|| ToolRef::new("unknown", "tool"));
    replay_line(
        &tool,
        result.content.as_deref().unwrap_or_default(),
        detail.replay_line.as_deref(),
    )
}

/// What a message costs the budget: its text, and each call's name and
/// arguments, never reasoning (§3.8, §3.12).
pub fn message_cost(message: &Message) -> u64 {
    match message {
        Message::User(text) => estimate(text),
        Message::Assistant(assistant) => {
            estimate(&assistant.text)
                + assistant
                    .tool_calls
                    .iter()
                    .map(|c| estimate(&c.name) + estimate(&c.arguments))
                    .sum::<u64>()
        }
        Message::ToolResult { content, name, .. } => estimate(content) + estimate(name),
    }
}

#[cfg(test)]
mod tests;
