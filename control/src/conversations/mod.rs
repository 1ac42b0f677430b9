//! Reading the post store on demand (§3.8): `conversations::search` reaches
//! what recency cannot, and `conversations::read` reads one post whole. Both
//! are ungated reads billed against the action budget, served by the daemon.
//! Both are bounded as the window is, per channel — channels the agent is a
//! member of now, back to each one's latest episode boundary or clear, never
//! a forgotten post — and neither widens an audience (audience.rs).
//!
//! - `search`: the phrase, the filters, the hits.
//! - `read`: one post, paged when long.
//! - `audience`: which channels may surface in the current one.
//! - `matching`: case-insensitive substring and the excerpt around it.
//! - `render`: how a hit or a post is shown.

pub mod audience;
pub mod matching;
pub mod read;
pub mod render;
pub mod search;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::inference::ToolCall;
use crate::store::{ChannelKind, ReachChannel, Store, StoreError};
use crate::tools::ToolRef;
use crate::turns::calls::{CallScope, Executed, Outcome};

use audience::Here;
use render::Style;

/// Who searches, from where.
#[derive(Debug, Clone)]
pub struct Caller<'a> {
    pub agent: &'a str,
    pub user_id: &'a str,
    pub channel_id: &'a str,
    pub turn_id: &'a str,
}

/// The channels a caller may read from here, each with its floor.
#[derive(Debug, Clone)]
pub struct Reach {
    pub channels: Vec<ReachChannel>,
    /// The current channel is public, so only public channels surface.
    pub here_public: bool,
}

/// The channels the agent is a member of now that may surface here
/// (§3.8). The current channel is always among them: the turn runs there,
/// whether or not its membership has been observed yet.
pub fn reach(store: &Store, caller: &Caller<'_>) -> Result<Reach, StoreError> {
    let mut all = store.reach_of(caller.agent, caller.user_id)?;
    if !all.iter().any(|c| c.channel.id == caller.channel_id)
        && let Some(channel) = store.channel(caller.channel_id)?
    {
        all.push(ReachChannel {
            channel,
            members: store
                .members(caller.channel_id)?
                .into_iter()
                .map(|m| m.user_id)
                .collect(),
            floor: store.context_floor(caller.agent, caller.channel_id)?,
        });
    }
    let kind = all
        .iter()
        .find(|c| c.channel.id == caller.channel_id)
        .map(|c| c.channel.kind)
        // An unrecorded channel is taken as public: the narrowest reach.
        .unwrap_or(ChannelKind::Open);
    let members: Vec<String> = all
        .iter()
        .find(|c| c.channel.id == caller.channel_id)
        .map(|c| c.members.clone())
        .unwrap_or_default();
    let here = Here {
        channel_id: caller.channel_id,
        kind,
        members: members.iter().map(String::as_str).collect(),
    };
    let channels = audience::within(&here, all);
    Ok(Reach {
        here_public: here.is_public(),
        channels,
    })
}

/// Serves a `conversations::` call (the one arm in turns/calls.rs).
pub async fn run(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
) -> Executed {
    let services = scope.services;
    let executed = |summary: String, outcome| Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    };
    let refused = |summary: String, text: String, reason: &str| {
        executed(
            summary,
            Outcome::Refused {
                text,
                reason: reason.into(),
            },
        )
    };
    let agent = scope.seat.agent.username.clone();
    let user_id = scope.seat.user_id.clone();
    let channel_id = scope.channel_id.to_string();
    let turn_id = scope.turn_id.to_string();
    let display_names = services.display_names.clone();
    let timezone = services.timezone;
    match tool.tool.as_str() {
        "search" => {
            let request = match search::parse(value, timezone) {
                Ok(request) => request,
                Err(text) => {
                    return refused(
                        "conversations::search".into(),
                        text,
                        "the arguments do not make a search",
                    );
                }
            };
            let max_hits = max_hits(&scope.seat.agent.settings);
            let summary = format!("conversations::search \"{}\"", short(&request.phrase));
            let outcome = services
                .store
                .call(move |store| {
                    let caller = Caller {
                        agent: &agent,
                        user_id: &user_id,
                        channel_id: &channel_id,
                        turn_id: &turn_id,
                    };
                    let found = search::find(store, &caller, &request, max_hits, &display_names)?;
                    let style = Style {
                        display_names: &display_names,
                        timezone,
                    };
                    Ok(Outcome::Ran {
                        text: search::render(&request, &found, &channel_id, &style),
                        replay_line: Some(search::replay_line(&request, found.hits.len())),
                        content_key: None,
                        note: Some(format!("{} hits", found.hits.len())),
                    })
                })
                .await;
            executed(summary, store_outcome(outcome))
        }
        "read" => {
            let request = match read::parse(value) {
                Ok(request) => request,
                Err(text) => {
                    return refused("conversations::read".into(), text, "no post id was given");
                }
            };
            let summary = format!("conversations::read {}", request.post);
            let outcome = services
                .store
                .call(move |store| {
                    let caller = Caller {
                        agent: &agent,
                        user_id: &user_id,
                        channel_id: &channel_id,
                        turn_id: &turn_id,
                    };
                    let Some((post, reach)) = read::find(store, &caller, &request.post)? else {
                        return Ok(Outcome::Ran {
                            text: read::not_found(&request.post),
                            replay_line: None,
                            content_key: None,
                            note: Some("no such post in reach".into()),
                        });
                    };
                    let style = Style {
                        display_names: &display_names,
                        timezone,
                    };
                    Ok(
                        match read::render(&request, &post, &reach, &channel_id, &style) {
                            Ok(text) => Outcome::Ran {
                                text,
                                replay_line: Some(format!(
                                    "[read post {} from offset {}]",
                                    request.post, request.offset
                                )),
                                content_key: None,
                                note: None,
                            },
                            Err(text) => Outcome::Refused {
                                text,
                                reason: "the offset is past the post's end".into(),
                            },
                        },
                    )
                })
                .await;
            executed(summary, store_outcome(outcome))
        }
        other => refused(
            format!("conversations::{other}"),
            format!(
                "conversations::{other} is not a tool; conversations::search and conversations::read are."
            ),
            "no such tool",
        ),
    }
}

/// The deployment's `max_hits` for the toolset, else the default.
fn max_hits(settings: &std::collections::BTreeMap<String, Value>) -> u32 {
    settings
        .get("conversations")
        .and_then(|s| s.get("max_hits"))
        .and_then(Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n > 0)
        .unwrap_or(search::DEFAULT_MAX_HITS)
}

fn short(phrase: &str) -> String {
    let head: String = phrase.chars().take(60).collect();
    if phrase.chars().count() > 60 {
        format!("{head}…")
    } else {
        head
    }
}

/// A read the store could not answer is a plain failure the model reads:
/// nothing was changed, so the turn goes on (§7.2).
fn store_outcome(outcome: Result<Outcome, StoreError>) -> Outcome {
    outcome.unwrap_or_else(|error| Outcome::Lost {
        text: format!("The post store could not be read ({error}); nothing was found. Try again."),
        reason: "the store could not be read".into(),
    })
}
