//! The command route (§8.4, §7.5): `/collegium` as Mattermost delivers it,
//! with the command's token checked on every request (§6.4). A bare
//! `/collegium` lists the subcommands; `stop` and `kill` halt the turns
//! running in the channel and say so visibly; `queue` and `approvals` show
//! what waits; each other subcommand has its own file here.

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::StatusCode;
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::{Value, json};
use tracing::{info, warn};

pub(super) mod clear;
pub(super) mod deferred;
mod deliver;
mod forgetting;
mod inspect;
mod memory;
mod notice;
mod trace;
mod triggers;
mod unit_cancel;
mod units;
mod usage;

use crate::approvals::presence::presence;
use crate::approvals::question;
use crate::commands;
use crate::commands::approvals::{self, Awaiting, Waiting};
use crate::context::window::local_time;
use crate::services::{Halt, Services, Steer, SteerRefused};
use crate::store::decisions::DecisionRecord;
use crate::store::{Millis, ObservedChannel};

#[derive(Deserialize, Default, Clone)]
#[serde(default)]
pub struct CommandRequest {
    /// Mattermost's command token: compared, never printed.
    token: collegium_worker_kit::redact::Redacted<String>,
    user_id: String,
    user_name: String,
    channel_id: String,
    text: String,
    /// What a dialog opened in answer must carry (`clear`, §8.5).
    trigger_id: String,
    /// Where an answer not ready within the deadline goes (§8.4).
    response_url: String,
}

pub(super) fn ephemeral(text: &str) -> Json<Value> {
    Json(json!({"response_type": "ephemeral", "text": text}))
}

pub async fn command(
    State(routes): State<super::Routes>,
    Form(request): Form<CommandRequest>,
) -> Result<Json<Value>, StatusCode> {
    let services = &routes.services;
    if services.command_token.expose().is_empty()
        || !super::same_secret(request.token.expose(), services.command_token.expose())
    {
        warn!("a command request without the command's token");
        return Err(StatusCode::UNAUTHORIZED);
    }
    let mut words = request.text.split_whitespace();
    let typed = words.next().unwrap_or_default().to_lowercase();
    let rest: Vec<&str> = words.collect();
    info!(user = %request.user_name, subcommand = %typed, "command");
    // The parser's one lookup is `SUBCOMMANDS` (§8.4): a word nothing
    // declares answers with the listing, as a bare `/collegium` does.
    let Some(sub) = commands::parse(&typed) else {
        return Ok(if typed.is_empty() || typed == "help" {
            ephemeral(&commands::listing())
        } else {
            ephemeral(&format!(
                "There is no subcommand `{typed}`.\n{}",
                commands::listing()
            ))
        });
    };
    // Every subcommand runs under the one deadline Mattermost's patience
    // sets; a slow one finishes through the command's response_url (§8.4).
    let deadline = std::time::Duration::from_millis(u64::from(services.limits.command_answer_ms));
    let hook =
        deferred::ResponseUrl::parse(&request.response_url, services.system_bot.rest.base_url());
    let rest: Vec<String> = rest.into_iter().map(str::to_string).collect();
    let routes = routes.clone();
    Ok(deferred::within(deadline, hook, async move {
        let rest: Vec<&str> = rest.iter().map(String::as_str).collect();
        dispatch(&routes, &request, sub, &rest).await
    })
    .await)
}

/// One declared subcommand, run.
async fn dispatch(
    routes: &super::Routes,
    request: &CommandRequest,
    sub: &commands::Subcommand,
    rest: &[&str],
) -> Json<Value> {
    let services = &routes.services;
    let answer = match sub.name {
        "stop" | "kill" => halt(services, request, sub.name == "kill").await,
        "queue" if rest.get(1).is_some_and(|w| w.eq_ignore_ascii_case("clear")) => {
            forgetting::clear_queue(services, request, rest).await
        }
        "queue" => queue(services, request, rest.first().copied()).await,
        "forget" => forgetting::forget(services, request, rest).await,
        "clear" => clear::clear(services, request, rest).await,
        "reset" => forgetting::reset(services, request, rest).await,
        "approvals" => approvals(services, request, rest.first().copied()).await,
        "steer" => steer(services, request, rest).await,
        "units" => units::units(services, request, rest).await,
        "memory" => memory::memory(services, request, rest).await,
        "triggers" => triggers::triggers(services, request, rest).await,
        "trace" => trace::trace(services, request, rest).await,
        "resume" => resume(services, &routes.lanes, request).await,
        "inspect" => inspect::inspect(services, request, rest).await,
        "usage" => usage::usage(services, request, rest).await,
        known => ephemeral(&format!(
            "`/collegium {known}` is not available in this build yet."
        )),
    };
    // Nothing is cut: an ephemeral answer over the post limit goes whole
    // as a file (§8.3, A4).
    deliver::fit(services, request, answer).await
}

/// Nothing, where `user_id` is a person in `channel_id`; else the line
/// refusing them, saying what they may not do. §7.5 gives stop, kill and
/// steer to "any human in the channel", and a clear is theirs too (§8.5):
/// a bot's token, or a person outside the channel, runs `/collegium` as
/// well, and neither may.
pub(super) async fn person_in(
    services: &Services,
    channel_id: &str,
    user_id: &str,
    what: &str,
) -> Result<(), String> {
    let (channel, user) = (channel_id.to_string(), user_id.to_string());
    let standing = services
        .store
        .call(move |s| presence(s, &channel, &user))
        .await
        .map_err(|error| {
            format!("The channel's people could not be read ({error}); nothing changed.")
        })?;
    if standing.may_answer() {
        Ok(())
    } else {
        Err(format!(
            "Only a person in this channel may {what}; nothing changed."
        ))
    }
}

/// [`person_in`] for the channel the command was typed in.
async fn person_here(
    services: &Services,
    request: &CommandRequest,
    what: &str,
) -> Result<(), Json<Value>> {
    person_in(services, &request.channel_id, &request.user_id, what)
        .await
        .map_err(|refusal| ephemeral(&refusal))
}

/// `stop` and `kill` (§7.5): every turn running here is halted; the notice
/// names the agents reached by display name, from the system bot, or under
/// the agent's own account in a direct message. The queue is left as it is.
async fn halt(services: &Services, request: &CommandRequest, kill: bool) -> Json<Value> {
    let what = if kill {
        "kill the turns running here"
    } else {
        "stop the turns running here"
    };
    if let Err(refused) = person_here(services, request, what).await {
        return refused;
    }
    let halt = Halt {
        by: request.user_name.clone(),
        kill,
    };
    let reached = services.controls.halt_channel(&request.channel_id, &halt);
    if reached.is_empty() {
        return ephemeral("No agent has a turn running here; nothing was stopped.");
    }
    let names: Vec<&str> = reached.iter().map(|a| services.display_name(a)).collect();
    let verb = if kill { "Killed" } else { "Stopped" };
    let text = format!(
        "{verb} {} here at @{}'s command. Anything queued stays queued.",
        names.join(" and "),
        request.user_name
    );
    if let Err(error) = notice::post_notice(services, &request.channel_id, &reached, text).await {
        return ephemeral(&format!(
            "{verb} {}, but the notice could not be posted: {error}",
            names.join(" and ")
        ));
    }
    Json(json!({}))
}

/// `steer [agent] text` (§7.5): one instruction to the turn running here,
/// as the person speaking. Several running and none named: refused, never
/// guessed; nothing running: said, and the text discarded.
async fn steer(services: &Services, request: &CommandRequest, words: &[&str]) -> Json<Value> {
    if let Err(refused) = person_here(services, request, "steer a turn running here").await {
        return refused;
    }
    // The first word names an agent only where it is an agent in this
    // channel, so a steer may open with any other word (§7.5).
    let agents_here = agents_here(services, &request.channel_id).await;
    let named = words
        .first()
        .map(|w| w.trim_start_matches('@').to_lowercase())
        .filter(|w| agents_here.contains(w) && services.seat(w).is_some() && words.len() > 1);
    let text = if named.is_some() { &words[1..] } else { words }.join(" ");
    if text.is_empty() {
        return ephemeral("Say what to steer with: `/collegium steer [{agent}] {text}`.");
    }
    let name = |agent: &str| services.display_name(agent).to_string();
    match services.controls.steer(
        &request.channel_id,
        named.as_deref(),
        Steer {
            by: request.user_name.clone(),
            text,
        },
    ) {
        Ok(agent) => ephemeral(&format!("Steering {}.", name(&agent))),
        Err(SteerRefused::NothingRunning) => {
            ephemeral("No agent has a turn running here to steer; your text was discarded.")
        }
        Err(SteerRefused::Several(agents)) => {
            let names: Vec<String> = agents.iter().map(|a| name(a)).collect();
            ephemeral(&format!(
                "Several agents are running here ({}); name one: `/collegium steer {{agent}} {{text}}`.",
                names.join(", ")
            ))
        }
        Err(SteerRefused::Parked { agent, turn_id }) => {
            ephemeral(&waits_on(services, &name(&agent), &agent, &turn_id).await)
        }
    }
}

/// The agents that are members of `channel_id` and seats of this daemon.
pub(super) async fn agents_here(services: &Services, channel_id: &str) -> Vec<String> {
    let channel = channel_id.to_string();
    services
        .store
        .call(move |s| s.members(&channel))
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.kind == crate::store::AuthorKind::Agent)
        .map(|m| m.username)
        .filter(|a| services.seat(a).is_some())
        .collect()
}

/// What a turn parked on a person waits on, for a steer that cannot reach
/// it (§7.5): an approval is steered by denying it with a reason (§5.4), a
/// question by answering it.
async fn waits_on(services: &Services, name: &str, agent: &str, turn_id: &str) -> String {
    let (agent, turn) = (agent.to_string(), turn_id.to_string());
    let waiting = services
        .store
        .call(move |s| s.open_decisions(Some(&agent)))
        .await
        .unwrap_or_default()
        .into_iter()
        .map(|(decision, _)| decision)
        .find(|d| d.turn_id == turn);
    let what = match waiting
        .as_ref()
        .map(|d| (d.kind.as_str(), d.tool.as_deref()))
    {
        Some(("ask", _)) => {
            "an answer to its question; answer it there to steer the turn".to_string()
        }
        Some(("extension", _)) => {
            "a decision on extending its action budget; Deny with a reason to steer the turn"
                .to_string()
        }
        Some((_, Some(tool))) => {
            format!(
                "a decision on its approval prompt for `{tool}`; Deny with a reason to steer the turn"
            )
        }
        _ => "a person's decision on its prompt; Deny with a reason to steer the turn".to_string(),
    };
    format!(
        "{name}'s turn here is waiting on {what}. A steer is read before a completion, and this turn makes none until then; your text was discarded."
    )
}

/// `resume` (§7.4): clears a ceiling halt on a person's authority,
/// attributably, and drains what waited, as boot does.
async fn resume(
    services: &Services,
    lanes: &tokio::sync::mpsc::Sender<crate::lanes::LaneInput>,
    request: &CommandRequest,
) -> Json<Value> {
    let now = chrono::Utc::now().timestamp_millis();
    if services.controls.global_halt().is_none() {
        return ephemeral("Nothing is halted.");
    }
    // A ceiling halt clears "on the human's authority" (§7.4), never a bot's.
    if let Err(refused) = person_here(services, request, "resume the agents").await {
        return refused;
    }
    // A membership violation is not a person's to wave through (§3.10).
    let standing = crate::loops::membership::violations(services).await;
    if !standing.is_empty() {
        return ephemeral(&format!(
            "The halt stays: {} Resume once that is fixed.",
            standing.join(" Also, ")
        ));
    }
    let Some(reason) = services.controls.resume(now) else {
        return ephemeral("Nothing is halted.");
    };
    crate::loops::halt::post_in_main_channel(
        services,
        &format!(
            "▶ @{} resumed every agent (the halt said: {reason}). A fresh hourly allowance begins now.",
            request.user_name
        ),
    )
    .await;
    let standing = services
        .store
        .call(|s| s.lanes_with_queued())
        .await
        .unwrap_or_default();
    for (agent, channel_id) in standing {
        let _ = lanes
            .send(crate::lanes::LaneInput::Drain(crate::lanes::LaneKey {
                agent,
                channel_id,
            }))
            .await;
    }
    ephemeral("Resumed.")
}

/// `queue {agent}` (§8.4): whether a turn holds the lane here, since when,
/// the post that started it and its status post, or on what it is parked;
/// then what waits in the queue, oldest first.
async fn queue(services: &Services, request: &CommandRequest, agent: Option<&str>) -> Json<Value> {
    let Some(agent) = agent.map(|a| a.trim_start_matches('@').to_lowercase()) else {
        return ephemeral("Name the agent: `/collegium queue {agent}`.");
    };
    if services.seat(&agent).is_none() {
        return ephemeral(&format!("There is no agent @{agent}."));
    }
    let display = services.display_name(&agent).to_string();
    let running = services.controls.is_running(&agent, &request.channel_id);
    let (lane_agent, channel) = (agent.clone(), request.channel_id.clone());
    let lane = services
        .store
        .call(move |s| {
            let mut rows = Vec::new();
            for (id, queued_at) in s.queued_rows(&lane_agent, &channel)? {
                rows.push((s.post(&id)?, id, queued_at));
            }
            let holder = match s.last_turn(&lane_agent, &channel)? {
                Some(turn) if running && turn.ended_at.is_none() => {
                    let status = s.status_post_id(&turn.id)?;
                    let parked = s
                        .open_decisions(Some(&lane_agent))?
                        .into_iter()
                        .find(|(d, _)| d.turn_id == turn.id);
                    Some((turn, status, parked))
                }
                _ => None,
            };
            Ok((holder, rows))
        })
        .await;
    let Ok((holder, rows)) = lane else {
        return ephemeral("The store could not be read; try again.");
    };
    let at = |t: Millis| local_time(t, services.timezone);
    let mut out = match &holder {
        None if running => format!("{display} here: a turn is running."),
        None => format!("{display} here: idle."),
        Some((turn, status, parked)) => {
            let started = match &turn.answers_post_id {
                Some(post) => format!("started by post {post}"),
                None => format!("started by {}", turn.cause),
            };
            let status = match status {
                Some(post) => format!("its status post is {post}"),
                None => "it has no status post yet".to_string(),
            };
            let mut line = format!(
                "{display} here: a turn is running, holding the lane since {}, {started}; {status}.",
                at(turn.started_at)
            );
            if let Some((decision, since)) = parked {
                let on = match (decision.kind.as_str(), decision.tool.as_deref()) {
                    ("ask", _) => "an answer to its question".to_string(),
                    ("extension", _) => "a decision on extending its action budget".to_string(),
                    (_, Some(tool)) => format!("a decision on its approval prompt for `{tool}`"),
                    _ => "a person's decision on its prompt".to_string(),
                };
                let _ = write!(line, " It is parked, waiting on {on} since {}.", at(*since));
            }
            line
        }
    };
    let _ = write!(out, " {} queued.", rows.len());
    for (post, id, queued_at) in rows {
        let by = post.map(|p| p.author_name).unwrap_or_else(|| "?".into());
        let _ = write!(out, "\n- post {id} by {by}, queued {}", at(queued_at));
    }
    ephemeral(&out)
}

/// `approvals [{agent}]` (§8.4): what waits on a person in the channels the
/// invoker is in, by the same presence that decides who may answer (§3.7),
/// so a private channel's or a direct message's prompts reach only its
/// members.
async fn approvals(
    services: &Services,
    request: &CommandRequest,
    agent: Option<&str>,
) -> Json<Value> {
    let agent = agent.map(|a| a.trim_start_matches('@').to_lowercase());
    let invoker = request.user_id.clone();
    let open = services
        .store
        .call(move |s| {
            let mut open = Vec::new();
            for (decision, at) in s.open_decisions(agent.as_deref())? {
                if presence(s, &decision.channel_id, &invoker)?.may_answer() {
                    let channel = s.channel(&decision.channel_id)?;
                    open.push((decision, at, channel));
                }
            }
            Ok(open)
        })
        .await;
    let open = match open {
        Ok(open) => open,
        Err(error) => return ephemeral(&format!("What waits could not be read: {error}")),
    };
    let waiting: Vec<Waiting> = open
        .into_iter()
        .map(|(decision, at, channel)| waiting(services, decision, at, channel))
        .collect();
    ephemeral(&approvals::render(
        &waiting,
        chrono::Utc::now().timestamp_millis(),
    ))
}

/// One open decision as the list names it.
fn waiting(
    services: &Services,
    decision: DecisionRecord,
    requested_at: Millis,
    channel: Option<ObservedChannel>,
) -> Waiting {
    let agent = services.display_name(&decision.agent).to_string();
    let place = match channel {
        Some(c) if !c.name.is_empty() => format!("~{}", c.name),
        Some(c) => format!("a direct message ({})", c.display_name),
        None => "an unknown channel".into(),
    };
    let awaiting = if decision.is_question() {
        Awaiting::Question {
            words: question::asked_words(&decision.payload),
        }
    } else {
        Awaiting::Approval {
            tool: decision.tool.clone(),
        }
    };
    Waiting {
        agent,
        place,
        awaiting,
        requested_at,
        requested_local: local_time(requested_at, services.timezone),
        prompt_post_id: decision.prompt_post_id,
    }
}
