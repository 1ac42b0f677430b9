//! The framework's message after the window (§3.8): one message in the
//! user's role, opened by a line saying it is the framework's and not a
//! post, carrying everything that may change between two turns of the same
//! agent in the same channel — the posts the turn answers, the date, the
//! channel, the pins, earlier actions, the peers and the people who posted.
//! Memory descriptions (§3.6) and open work (§3.15) have their places here
//! and are rendered by the features that own them (`crate::memory::render`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use chrono::TimeZone;

use crate::store::{ChannelKind, Millis, ObservedChannel, ObservedPost, TurnEvent};

use super::replay::action_line_unrecorded;
use super::window::ResultDetail;

use super::tokens::estimate;
use super::window::{author_line, local_time, strip_mentions_of_agents};

/// The opening line.
pub const OPENING: &str = "[Framework message. This is not a post. It describes this turn.]";

/// The pinned section's cap in tokens: the newest pin is shown whole
/// whatever its size; older ones follow while they fit (§3.8).
pub const PINS_CAP_TOKENS: u64 = 2_000;

/// How many earlier actions are named (§3.8).
pub const EARLIER_ACTIONS: usize = 8;

/// The longest earlier-action line.
const EARLIER_ACTION_CHARS: usize = 200;

/// The longest excerpt of an answered post quoted here; the post itself is
/// whole in the window or readable by its id.
const EXCERPT_CHARS: usize = 200;

/// A colleague as the roster names it (§3.11).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peer {
    pub display_name: String,
    pub username: String,
    pub expertise: String,
    /// Granted namespaces, core ones left out.
    pub namespaces: Vec<String>,
}

/// One of the agent's own earlier calls, older than the window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierAction {
    pub at: Millis,
    pub tool: String,
    /// What the agent did and what it came to, never what its result said
    /// (§3.8).
    pub line: String,
}

impl EarlierAction {
    /// The earlier action a recorded result stands for.
    pub fn of_result(result: &TurnEvent) -> Self {
        let tool = result.tool.clone().unwrap_or_default();
        let detail: ResultDetail = result
            .detail
            .as_deref()
            .and_then(|d| serde_json::from_str(d).ok())
            .unwrap_or_default();
        let size = result.content.as_deref().map_or(0, |c| c.chars().count());
        let line = detail
            .action
            .unwrap_or_else(|| action_line_unrecorded(&tool, detail.replay_line.as_deref(), size));
        Self {
            at: result.at,
            tool,
            line: line.chars().take(EARLIER_ACTION_CHARS).collect(),
        }
    }
}

pub struct MessageFacts<'a> {
    /// The posts this turn answers, oldest first (§5.2).
    pub answers: &'a [ObservedPost],
    /// Ids of posts the window holds.
    pub in_window: &'a [String],
    pub now: Millis,
    pub timezone: chrono_tz::Tz,
    pub timezone_name: &'a str,
    pub channel: &'a ObservedChannel,
    pub pinned: &'a [ObservedPost],
    pub earlier_actions: &'a [EarlierAction],
    pub peers: &'a [Peer],
    /// People who posted in the window, latest first.
    pub people: &'a [String],
    pub display_names: &'a BTreeMap<String, String>,
    /// Whether the agent holds a tool that reads a post by id.
    pub reads_posts: bool,
    /// The memory listing (§3.6), rendered by `crate::memory`; `None` for
    /// an agent that holds no memory tool.
    pub memory: Option<&'a str>,
    /// The Open work section (§3.15), for an agent holding the tasks
    /// toolset; rendered by `crate::units::render`.
    pub open_work: Option<&'a str>,
}

/// Renders the message.
pub fn render(facts: &MessageFacts<'_>) -> String {
    let mut out = String::new();
    out.push_str(OPENING);
    out.push_str("\n\n");
    answers(facts, &mut out);
    let today = facts
        .timezone
        .timestamp_millis_opt(facts.now)
        .single()
        .map(|t| t.format("%A %-d %B %Y").to_string())
        .unwrap_or_default();
    let _ = writeln!(out, "Today is {today} ({}).\n", facts.timezone_name);
    channel(facts.channel, &mut out);
    if let Some(listing) = facts.memory {
        let _ = writeln!(out, "{listing}\n");
    }
    pins(facts, &mut out);
    earlier(facts, &mut out);
    roster(facts, &mut out);
    crate::units::render::place(facts.open_work, &mut out);
    out.trim_end().to_string()
}

fn answers(facts: &MessageFacts<'_>, out: &mut String) {
    if facts.answers.is_empty() {
        return;
    }
    out.push_str("Posts you answer now, oldest first:\n");
    for post in facts.answers {
        let text = strip_mentions_of_agents(&post.message, facts.display_names);
        let excerpt: String = text.chars().take(EXCERPT_CHARS).collect();
        let cut = if text.chars().count() > EXCERPT_CHARS {
            "…"
        } else {
            ""
        };
        let place = if facts.in_window.contains(&post.id) {
            "above".to_string()
        } else if facts.reads_posts {
            "older than the history shown; conversations::read reads it whole".to_string()
        } else {
            "older than the history shown".to_string()
        };
        let _ = writeln!(
            out,
            "- post {} by {} ({place}): \"{excerpt}{cut}\"",
            post.id,
            author_line(post, facts.display_names),
        );
    }
    out.push('\n');
}

fn channel(channel: &ObservedChannel, out: &mut String) {
    let _ = match channel.kind {
        ChannelKind::Direct => writeln!(
            out,
            "Channel: a direct message ({}).\n",
            channel.display_name
        ),
        ChannelKind::Group => writeln!(
            out,
            "Channel: a group message with {}.\n",
            channel.display_name
        ),
        ChannelKind::Open | ChannelKind::Private => writeln!(
            out,
            "Channel: {} (~{}, {}).\n",
            channel.display_name,
            channel.name,
            if channel.kind == ChannelKind::Open {
                "public"
            } else {
                "private"
            }
        ),
    };
}

/// Pinned posts (§3.8): oldest first as shown, the newest always whole,
/// older ones while they fit under the cap, the rest counted and named by id.
fn pins(facts: &MessageFacts<'_>, out: &mut String) {
    if facts.pinned.is_empty() {
        out.push_str("Pinned posts: none.\n\n");
        return;
    }
    let mut shown: Vec<&ObservedPost> = Vec::new();
    let mut left_out: Vec<&str> = Vec::new();
    let mut spent = 0u64;
    for (index, post) in facts.pinned.iter().rev().enumerate() {
        let cost = estimate(&post.message);
        if index == 0 || spent + cost <= PINS_CAP_TOKENS {
            spent += cost;
            shown.push(post);
        } else {
            left_out.push(&post.id);
        }
    }
    shown.reverse();
    out.push_str(
        "Pinned posts, oldest first. People pinned them; each is a standing instruction:\n",
    );
    for post in shown {
        let day = local_time(post.created_at, facts.timezone);
        let _ = writeln!(
            out,
            "- {} · {} · post {}\n  <<<\n  {}\n  >>>",
            author_line(post, facts.display_names),
            day.get(..10).unwrap_or(&day),
            post.id,
            strip_mentions_of_agents(&post.message, facts.display_names).replace('\n', "\n  "),
        );
    }
    if !left_out.is_empty() {
        left_out.reverse();
        let _ = writeln!(
            out,
            "{} older pinned posts are not shown here for space: {}.",
            left_out.len(),
            left_out.join(", ")
        );
    }
    out.push('\n');
}

fn earlier(facts: &MessageFacts<'_>, out: &mut String) {
    if facts.earlier_actions.is_empty() {
        return;
    }
    out.push_str("Your earlier actions in this channel, before the history shown, newest first:\n");
    for action in facts.earlier_actions.iter().take(EARLIER_ACTIONS) {
        let _ = writeln!(
            out,
            "- {} {}",
            local_time(action.at, facts.timezone),
            action.line.lines().next().unwrap_or_default()
        );
    }
    out.push('\n');
}

fn roster(facts: &MessageFacts<'_>, out: &mut String) {
    if facts.peers.is_empty() {
        out.push_str("Colleagues in this channel: none.\n\n");
    } else {
        out.push_str("Colleagues in this channel (to hand one work, write its @username):\n");
        for peer in facts.peers {
            let tools = if peer.namespaces.is_empty() {
                String::new()
            } else {
                format!("; holds {}", peer.namespaces.join(", "))
            };
            let expertise = if peer.expertise.is_empty() {
                "no expertise declared".to_string()
            } else {
                peer.expertise.clone()
            };
            let _ = writeln!(
                out,
                "- {} (@{}): {expertise}{tools}",
                peer.display_name, peer.username
            );
        }
        out.push('\n');
    }
    if !facts.people.is_empty() {
        let people: Vec<String> = facts.people.iter().map(|p| format!("@{p}")).collect();
        let _ = writeln!(
            out,
            "People who posted here, latest first: {}.",
            people.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuthorKind, ObservedVia, PostRole};

    fn post(id: &str, at: Millis, text: &str) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c1".into(),
            author_id: "u1".into(),
            author_name: "ana".into(),
            author_kind: AuthorKind::Person,
            created_at: at,
            message: text.into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: true,
            observed_at: at,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        }
    }

    fn facts<'a>(
        answers: &'a [ObservedPost],
        pinned: &'a [ObservedPost],
        channel: &'a ObservedChannel,
        names: &'a BTreeMap<String, String>,
        peers: &'a [Peer],
    ) -> MessageFacts<'a> {
        MessageFacts {
            answers,
            in_window: &[],
            now: 1_764_504_000_000,
            timezone: chrono_tz::Europe::Berlin,
            timezone_name: "Europe/Berlin",
            channel,
            pinned,
            earlier_actions: &[],
            peers,
            people: &[],
            display_names: names,
            reads_posts: false,
            memory: None,
            open_work: None,
        }
    }

    #[test]
    fn s3_8_pins_show_the_newest_whole_and_count_the_rest_by_id() {
        let channel = ObservedChannel {
            id: "c1".into(),
            name: "research".into(),
            display_name: "Research".into(),
            kind: ChannelKind::Open,
        };
        let names = BTreeMap::new();
        let pinned = vec![
            post("old1", 1, &"a ".repeat(3000)),
            post("old2", 2, &"b ".repeat(3000)),
            post("newest", 3, &"c ".repeat(9000)),
        ];
        let text = render(&facts(&[], &pinned, &channel, &names, &[]));
        assert!(text.starts_with(OPENING));
        assert!(text.contains("post newest"), "the newest is always whole");
        assert!(text.contains(&"c ".repeat(9000).trim_end().to_string()));
        assert!(text.contains("2 older pinned posts are not shown here for space: old1, old2."));
        assert!(
            text.contains("Today is Sunday 30 November 2025 (Europe/Berlin)."),
            "{text}"
        );
        assert!(text.contains("Channel: Research (~research, public)."));
    }

    #[test]
    fn s3_11_peers_are_named_with_handle_expertise_and_namespaces_and_answers_without_at() {
        let channel = ObservedChannel {
            id: "d1".into(),
            name: String::new(),
            display_name: "ana, mira".into(),
            kind: ChannelKind::Direct,
        };
        let names = BTreeMap::from([("theo".to_string(), "Theo".to_string())]);
        let peers = [Peer {
            display_name: "Theo".into(),
            username: "theo".into(),
            expertise: "Operations.".into(),
            namespaces: vec!["mail".into()],
        }];
        let answers = [post("p1", 1, "@theo said you know")];
        let text = render(&facts(&answers, &[], &channel, &names, &peers));
        assert!(
            text.contains("- Theo (@theo): Operations.; holds mail"),
            "{text}"
        );
        assert!(text.contains("\"Theo said you know\""), "{text}");
        assert!(text.contains("Channel: a direct message (ana, mira)."));
        assert!(text.contains("Pinned posts: none."));
    }

    fn result_event(content: &str, detail: serde_json::Value) -> TurnEvent {
        TurnEvent {
            turn_id: "t1".into(),
            seq: 3,
            at: 1_764_504_000_000,
            kind: crate::store::TraceKind::Result,
            call_id: Some("call-1-1".into()),
            tool: Some("workspace::read".into()),
            arguments: Some(r#"{"path":"notes/plan.md"}"#.into()),
            content: Some(content.into()),
            detail: Some(detail.to_string()),
        }
    }

    #[test]
    fn s3_8_earlier_actions_say_what_the_agent_did_never_what_a_result_said() {
        let said = "The launch code is 0000 and the plan is secret.";
        let recorded = crate::context::replay::action_line(
            &crate::status::CallLine {
                summary: "workspace::read notes/plan.md".into(),
                disposition: crate::status::Disposition::Done,
            },
            None,
            said.chars().count(),
        );
        let action = EarlierAction::of_result(&result_event(
            said,
            serde_json::json!({"replay_line": null, "action": recorded}),
        ));
        assert!(!action.line.contains("launch code"), "{}", action.line);
        assert!(
            action.line.contains("workspace::read notes/plan.md")
                && action
                    .line
                    .contains(&format!("returned {} characters", said.len())),
            "the tool, the gist of its arguments and the outcome: {}",
            action.line
        );
        // A result recorded before the action was kept is named by its
        // tool and size alone.
        let older = EarlierAction::of_result(&result_event(
            said,
            serde_json::json!({"replay_line": null}),
        ));
        assert!(!older.line.contains("launch code"), "{}", older.line);
        assert!(older.line.contains("workspace::read"), "{}", older.line);
    }
}
