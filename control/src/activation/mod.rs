//! Which post starts which turn (§3.3, §3.10, §4.5): a person's post in a
//! direct message or a respond-to-all channel starts a turn for the agent
//! there; anywhere else, and for posts by agents and the system bot, only a
//! mention does. A post addressing two or more agents present starts
//! nothing, and a person's gets one mechanical correction from the system
//! bot. Mentions are decided by the shared grammar (`mattermost-wire`), so
//! what activates an agent is what the client highlights.

mod recorded;

use std::collections::BTreeSet;

use mattermost_wire::mentions::MentionScan;

pub use recorded::of_post;

/// How a channel triggers its agents (§3.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Triggering {
    /// The default: an agent acts only when @-mentioned.
    MentionRequired,
    /// Every person's post starts a turn for the one agent present.
    RespondToAll,
    /// A direct or group message: respond-to-all by the channel's type.
    Direct,
}

/// Who wrote the post.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Author {
    Person(String),
    Agent(String),
    SystemBot(String),
}

impl Author {
    fn username(&self) -> &str {
        match self {
            Self::Person(u) | Self::Agent(u) | Self::SystemBot(u) => u,
        }
    }
}

/// What a post does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activation {
    /// Nothing: no agent is addressed, or the post may not trigger here.
    Nothing,
    /// A turn (or a queued post, if the lane is busy) for this agent.
    Addressed(String),
    /// Two or more agents present were addressed: no turn, no queue (§4.5).
    /// `correct` is whether the system bot answers it with the correction,
    /// which it does for a person's post only: an agent's post is rejected
    /// before it is posted, and the system bot's own never address two.
    Refused {
        agents: BTreeSet<String>,
        correct: bool,
    },
}

/// Decides what `post` does in a channel with `triggering`, whose present
/// agents (by username) are `present`. `mentions` is the post's scan against
/// the channel's members.
pub fn decide(
    author: &Author,
    triggering: Triggering,
    present: &BTreeSet<String>,
    mentions: &MentionScan,
) -> Activation {
    // Mentions of absent agents are inert (§4.5); an author never mentions
    // itself.
    let addressed: BTreeSet<String> = mentions
        .usernames()
        .into_iter()
        .filter(|u| present.contains(u) && u != author.username())
        .collect();
    if addressed.len() >= 2 {
        return Activation::Refused {
            agents: addressed,
            correct: matches!(author, Author::Person(_)),
        };
    }
    if let Some(agent) = addressed.into_iter().next() {
        return Activation::Addressed(agent);
    }
    match (author, triggering) {
        // Only a person's post triggers without a mention: an agent's or the
        // system bot's would let an agent answer its own output (§3.10).
        (Author::Person(_), Triggering::RespondToAll | Triggering::Direct) => {
            match sole_agent(present) {
                Some(agent) => Activation::Addressed(agent),
                None => Activation::Nothing,
            }
        }
        _ => Activation::Nothing,
    }
}

/// The one agent of a respond-to-all channel or a direct message. Two or
/// more is a configuration the boot check and the membership check refuse
/// (§3.10); until then nothing starts rather than two concurrent turns.
fn sole_agent(present: &BTreeSet<String>) -> Option<String> {
    let mut agents = present.iter();
    match (agents.next(), agents.next()) {
        (Some(agent), None) => Some(agent.clone()),
        _ => None,
    }
}

/// A respond-to-all channel holding two or more agents, as the line that
/// says so; none when it holds at most one (§3.10). The boot refuses on it
/// and, at runtime, it raises the global halt.
pub fn crowding(channel_name: &str, agents: &[String]) -> Option<String> {
    (agents.len() >= 2).then(|| {
        format!(
            "the respond-to-all channel ~{channel_name} has {} agents ({}); it may hold at most one, or every post would start concurrent turns on the same task (§3.10). Remove all but one from the channel in Mattermost.",
            agents.len(),
            agents.join(", ")
        )
    })
}

/// A group message holding two or more agents, as the line that says so;
/// none when it holds at most one. A group message answers every person's
/// post as a DM does, so §3.10's one-agent rule holds for it as for a
/// respond-to-all channel.
pub fn crowded_group(display_name: &str, agents: &[String]) -> Option<String> {
    (agents.len() >= 2).then(|| {
        format!(
            "the group message “{display_name}” has {} agents ({}); like a respond-to-all channel it may hold at most one, or every post would start concurrent turns on the same task (§3.10). Convert it to a private channel in Mattermost, or continue with one agent in a new group message.",
            agents.len(),
            agents.join(", ")
        )
    })
}

/// An agent as the correction names it.
pub struct Named<'a> {
    pub display_name: &'a str,
    pub username: &'a str,
}

/// The system bot's correction for a person's post that addressed several
/// agents (§4.5): mechanical, naming each agent by display name. The example
/// handle is in code, which is no mention (§4.5): the correction itself
/// addresses no one.
pub fn correction(agents: &[Named<'_>]) -> String {
    let names: Vec<&str> = agents.iter().map(|a| a.display_name).collect();
    let example = agents
        .first()
        .map_or(("Mira", "mira"), |a| (a.display_name, a.username));
    format!(
        "This message addressed {}, so none of them will act on it. Address one agent per \
         message. To name an agent without addressing it, write its name without the @, as \
         {} rather than `@{}`.",
        join_names(&names),
        example.0,
        example.1
    )
}

fn join_names(names: &[&str]) -> String {
    match names {
        [] => "several agents".into(),
        [one] => (*one).into(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}
