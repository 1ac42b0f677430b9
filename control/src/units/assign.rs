//! `tasks::assign` (§3.15): hands a unit to a colleague. Everything that
//! can refuse it is checked before its post — the loop limits (§7.4), the
//! declared colleagues, the assignee's presence and its means to report,
//! and for a continuation the terms a close has — so a refused assignment
//! leaves nothing in the channel. Then the post, then the record.

use crate::store::{ClosedBy, NewClose, NewUnit, Unit, UnitState, unit_label};
use crate::tools::ToolRef;

use super::find::find;
use super::publish::publish;
use super::template::{self, Fields, clean};
use super::{Answer, Caller};

/// What the model asked for.
pub struct Assignment<'a> {
    pub assignee: &'a str,
    pub outcome: &'a str,
    pub criteria: &'a str,
    pub context: &'a str,
    pub follows: Option<&'a str>,
}

/// How the next unit relates to the one it follows.
enum Link {
    /// A continuation: closes `Unit` as done, from review or blocked.
    Closes(Unit),
    /// A link to a unit already done, not closed again.
    Links(Unit),
}

pub async fn assign(caller: &Caller<'_>, asked: &Assignment<'_>) -> Answer {
    if let Err(refusal) = within_limits(caller).await {
        return Answer::Refused(refusal);
    }
    let assignee = asked.assignee.trim().trim_start_matches('@').to_string();
    if let Err(refusal) = may_take(caller, &assignee).await {
        return Answer::Refused(refusal);
    }
    let link = match asked.follows {
        Some(reference) => match continuation(caller, reference, &assignee).await {
            Ok(link) => Some(link),
            Err(refusal) => return Answer::Refused(refusal),
        },
        None => None,
    };
    let names = &caller.services.display_names;
    let (outcome, criteria, context) = (
        clean(asked.outcome, names),
        clean(asked.criteria, names),
        clean(asked.context, names),
    );
    let (agent, channel) = (caller.agent().to_string(), caller.channel_id.to_string());
    let now = chrono::Utc::now().timestamp_millis();
    let id = match caller
        .services
        .store
        .call(move |s| s.reserve_unit_number(&channel, &agent, now))
        .await
    {
        Ok(id) => id,
        Err(error) => {
            return Answer::Refused(format!(
                "The store could not be written ({error}); nothing was posted."
            ));
        }
    };
    let label = unit_label(id);
    let fields = Fields {
        outcome: &outcome,
        criteria: &criteria,
        context: &context,
    };
    let creator = caller.name(caller.agent()).to_string();
    let message = match &link {
        None => template::assignment(&label, &creator, &assignee, &fields),
        Some(Link::Closes(prior)) => {
            template::continuation(&label, &prior.label(), &creator, &assignee, &fields)
        }
        Some(Link::Links(prior)) => {
            template::linked(&label, &prior.label(), &creator, &assignee, &fields)
        }
    };
    let post_id = match publish(caller, &label, message).await {
        Ok(post_id) => post_id,
        Err(refusal) => return Answer::Refused(refusal),
    };
    let unit = NewUnit {
        id,
        channel_id: caller.channel_id.to_string(),
        creator: caller.agent().to_string(),
        assignee: assignee.clone(),
        outcome,
        criteria,
        context,
        assignment_post_id: post_id.clone(),
        assigning_turn_id: caller.turn_id.to_string(),
        follows: link.as_ref().map(|l| match l {
            Link::Closes(u) | Link::Links(u) => u.id,
        }),
        at: chrono::Utc::now().timestamp_millis(),
    };
    let note = format!("Continued by {label}.");
    let close = match &link {
        Some(Link::Closes(prior)) => Some(NewClose {
            unit_id: prior.id,
            post_id: post_id.clone(),
            state: UnitState::Done,
            closed_by: ClosedBy::Continuation,
            closer: caller.agent().to_string(),
            verdict: note.clone(),
            at: unit.at,
        }),
        _ => None,
    };
    let recorded = caller
        .services
        .store
        .call(move |s| s.record_continuation(&unit, close.as_ref(), &note))
        .await;
    if let Err(error) = recorded {
        return Answer::Failed(format!(
            "The assignment of {label} is posted (post {post_id}), but the store could not record it ({error}); the unit does not exist. Tell the channel, and assign again once the store answers."
        ));
    }
    let whom = caller.name(&assignee);
    let prior = match &link {
        Some(Link::Closes(prior)) => format!(
            " {} is closed as done, continued by {label}.",
            prior.label()
        ),
        Some(Link::Links(prior)) => format!(
            " {} stays closed as done; its verdict now names {label} as its successor.",
            prior.label()
        ),
        None => String::new(),
    };
    Answer::Done(format!(
        "{label} is assigned to {whom}: its post is published (post {post_id}).{prior} {whom}'s turn waits for this one to end, then starts; the report comes back to you here, and nothing here starts before it."
    ))
}

/// §7.4: at the depth or chain-length limit an assignment is refused
/// before it runs, never stripped of its mention.
async fn within_limits(caller: &Caller<'_>) -> Result<(), String> {
    let turn = caller.turn_id.to_string();
    let lineage = caller
        .services
        .store
        .call(move |s| s.lineage_of(&turn))
        .await
        .map_err(|error| format!("The store could not be read ({error}); nothing was posted."))?;
    let Some(lineage) = lineage else {
        return Ok(());
    };
    let limits = &caller.services.limits;
    let what = if lineage.depth >= limits.depth_limit {
        format!(
            "its delegation limit ({} hand-offs from a person)",
            limits.depth_limit
        )
    } else if lineage.chain_length >= limits.chain_limit {
        format!(
            "its chain limit ({} turns from one person's post)",
            limits.chain_limit
        )
    } else {
        return Ok(());
    };
    Err(format!(
        "The assignment did not run: this work has reached {what}, so the colleague's turn could not be opened. Nothing was posted. Say in your reply that the chain has reached its limit; a person's fresh post starts a fresh chain."
    ))
}

/// Whether `assignee` may take a unit from the caller (§3.15): a declared
/// colleague where the agent's settings declare them, else any colleague
/// present that holds `tasks::report`.
async fn may_take(caller: &Caller<'_>, assignee: &str) -> Result<(), String> {
    if assignee == caller.agent() {
        return Err(
            "The assignment did not run: a unit is handed to a colleague, never to yourself. Do the work yourself, or name a colleague."
                .into(),
        );
    }
    let channel = caller.channel_id.to_string();
    let members = caller
        .services
        .store
        .call(move |s| s.members(&channel))
        .await
        .map_err(|error| format!("The store could not be read ({error}); nothing was posted."))?;
    let present = |u: &str| members.iter().any(|m| m.username == u);
    let reports = |u: &str| {
        caller
            .services
            .seat(u)
            .is_some_and(|s| s.held.contains(&ToolRef::new("tasks", "report")))
    };
    let declared = declared_colleagues(caller);
    let candidates: Vec<String> = match &declared {
        Some(declared) => declared.clone(),
        None => caller
            .services
            .seats
            .keys()
            .filter(|u| *u != caller.agent() && present(u) && reports(u))
            .cloned()
            .collect(),
    };
    let named = |list: &[String]| -> String {
        if list.is_empty() {
            return "none".into();
        }
        list.iter()
            .map(|u| format!("{} (assignee `{u}`)", caller.name(u)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if let Some(declared) = &declared
        && !declared.iter().any(|d| d == assignee)
    {
        return Err(format!(
            "The assignment did not run: you assign units only to your declared colleagues, and `{assignee}` is not one. Your colleagues: {}. Nothing was posted.",
            named(declared)
        ));
    }
    let why = if caller.services.seat(assignee).is_none() {
        Some(format!(
            "`{assignee}` is not a colleague of this deployment"
        ))
    } else if !present(assignee) {
        Some(format!("{} is not in this channel", caller.name(assignee)))
    } else if !reports(assignee) {
        Some(format!(
            "{} holds no tasks::report and could never report back",
            caller.name(assignee)
        ))
    } else {
        None
    };
    match why {
        None => Ok(()),
        Some(why) => {
            let able: Vec<String> = candidates
                .into_iter()
                .filter(|u| present(u) && reports(u))
                .collect();
            Err(format!(
                "The assignment did not run: {why}. Colleagues here who can take a unit: {}. Nothing was posted.",
                named(&able)
            ))
        }
    }
}

/// The colleagues the agent's tasks settings declare, where they do.
fn declared_colleagues(caller: &Caller<'_>) -> Option<Vec<String>> {
    caller
        .seat
        .agent
        .settings
        .get("tasks")
        .and_then(|t| t.get("colleagues"))
        .and_then(|c| c.as_array())
        .map(|list| {
            list.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
}

/// The terms of a continuation (§3.15): the creator's alone, to the unit's
/// own assignee, from review or blocked with its latest report read by
/// this turn; or a link to a unit already done that nothing follows yet.
async fn continuation(
    caller: &Caller<'_>,
    reference: &str,
    assignee: &str,
) -> Result<Link, String> {
    let prior = find(caller, reference).await?;
    let label = prior.label();
    if prior.creator != caller.agent() {
        return Err(format!(
            "The assignment did not run: {label} was created by {}, and only its creator continues it. Nothing was posted.",
            caller.name(&prior.creator)
        ));
    }
    if prior.assignee != assignee {
        return Err(format!(
            "The assignment did not run: a continuation goes to the unit's own assignee, {} (assignee `{}`). Assign a fresh unit without follows to hand the work to someone else. Nothing was posted.",
            caller.name(&prior.assignee),
            prior.assignee
        ));
    }
    if let Some(next) = prior.followed_by {
        return Err(format!(
            "The assignment did not run: {label} is already continued by {}, and a unit is followed once. Nothing was posted.",
            unit_label(next)
        ));
    }
    match prior.state {
        UnitState::Cancelled => Err(format!(
            "The assignment did not run: {label} was cancelled, and a cancelled unit is not continued. Assign a fresh unit without follows. Nothing was posted."
        )),
        UnitState::Done => Ok(Link::Links(prior)),
        UnitState::Assigned => Err(format!(
            "The assignment did not run: {label} is still assigned, and a unit is continued from review or blocked. Wait for {}'s report, or close it first. Nothing was posted.",
            caller.name(&prior.assignee)
        )),
        UnitState::Review | UnitState::Blocked => {
            super::close::latest_report_read(caller, &prior).await?;
            Ok(Link::Closes(prior))
        }
    }
}
