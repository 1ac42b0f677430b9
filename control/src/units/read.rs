//! `tasks::read` (§3.15): the unit whole — outcome, criteria and context,
//! the unit it follows, its parties with the other one's standing, when it
//! was assigned and last changed, and the post of its latest report and of
//! its close, verbatim and delimited, read by the ids the record holds. A
//! report shown here counts as read for the close that judges it; a post
//! since forgotten (§8.4) is not shown, and the result says so.

use std::fmt::Write as _;

use crate::store::{ObservedPost, Store, StoreError, Unit, UnitReport, UnitState, unit_label};

use super::find::find;
use super::standing::{Standings, Viewpoint};
use super::when::when;
use super::{Answer, Caller};

pub async fn read(caller: &Caller<'_>, reference: &str) -> Answer {
    let unit = match find(caller, reference).await {
        Ok(unit) => unit,
        Err(refusal) => return Answer::Refused(refusal),
    };
    let (agent, channel, turn, boot) = (
        caller.agent().to_string(),
        caller.channel_id.to_string(),
        caller.turn_id.to_string(),
        caller.services.boot_id.clone(),
    );
    let names = caller.services.display_names.clone();
    let timezone = caller.services.timezone;
    let now = chrono::Utc::now().timestamp_millis();
    let shown = caller
        .services
        .store
        .call(move |s| {
            let view = Viewpoint {
                reader: &agent,
                channel_id: &channel,
                boot_id: &boot,
                now,
                timezone,
                display_names: &names,
            };
            let text = render(s, &unit, view)?;
            // The latest report was shown whole: it counts as read (§3.15).
            if let Some(report) = shown_report(s, &unit)? {
                s.mark_report_read(&turn, report.id)?;
            }
            Ok(text)
        })
        .await;
    match shown {
        Ok(text) => Answer::Done(text),
        Err(error) => Answer::Refused(format!("The store could not be read ({error}).")),
    }
}

/// The latest report, where its post is still there to show.
fn shown_report(store: &Store, unit: &Unit) -> Result<Option<UnitReport>, StoreError> {
    let Some(id) = unit.latest_report_id else {
        return Ok(None);
    };
    let Some(report) = store.unit_report(id)? else {
        return Ok(None);
    };
    Ok(live(store, &report.post_id)?.map(|_| report))
}

/// A post as the store holds it. A client's deletion does not redact it
/// (§8.2); a post forgotten (§8.4), or not yet observed, is absent — the
/// store keeps a forgotten post's row, so its mark is checked here.
fn live(store: &Store, post_id: &str) -> Result<Option<ObservedPost>, StoreError> {
    if store.forgotten_at(post_id)?.is_some() {
        return Ok(None);
    }
    store.post(post_id)
}

/// The unit as the result shows it.
pub fn render(store: &Store, unit: &Unit, view: Viewpoint<'_>) -> Result<String, StoreError> {
    let (now, tz) = (view.now, view.timezone);
    let name = |u: &str| crate::services::display_name(view.display_names, u).to_string();
    let reader = view.reader.to_string();
    let mut standings = Standings::new(view);
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", unit.label(), unit.state.as_str());
    let _ = writeln!(out, "Outcome: {}", unit.outcome);
    let _ = writeln!(out, "Criteria: {}", unit.criteria);
    if !unit.context.is_empty() {
        let _ = writeln!(out, "Context: {}", unit.context);
    }
    if let Some(follows) = unit.follows {
        let _ = writeln!(out, "Continues: {}", unit_label(follows));
    }
    if let Some(next) = unit.followed_by {
        let _ = writeln!(out, "Continued by: {}", unit_label(next));
    }
    let standing = standings.of(store, unit)?;
    let (creator, assignee) = (name(&unit.creator), name(&unit.assignee));
    let (creator, assignee) = if unit.creator == reader {
        (format!("{creator} (you)"), assignee)
    } else {
        (creator, format!("{assignee} (you)"))
    };
    let _ = writeln!(out, "Creator: {creator}");
    let _ = writeln!(out, "Assignee: {assignee}");
    let _ = writeln!(out, "Standing: {standing}.");
    let _ = writeln!(
        out,
        "Assigned {}; last changed {}.",
        when(unit.assigned_at, now, tz),
        when(unit.changed_at, now, tz)
    );
    if let Some(id) = unit.latest_report_id {
        match store.unit_report(id)? {
            Some(report) => shown(
                store,
                &mut out,
                "latest report",
                &report.post_id,
                report.at,
                now,
                tz,
            )?,
            None => out.push_str("Its latest report's record is missing.\n"),
        }
    } else if unit.state == UnitState::Assigned {
        out.push_str("No report yet.\n");
    }
    if let Some(post_id) = &unit.close_post_id {
        let at = unit.closed_at.unwrap_or(unit.changed_at);
        shown(store, &mut out, "close", post_id, at, now, tz)?;
    }
    Ok(out.trim_end().to_string())
}

fn shown(
    store: &Store,
    out: &mut String,
    what: &str,
    post_id: &str,
    at: crate::store::Millis,
    now: crate::store::Millis,
    tz: chrono_tz::Tz,
) -> Result<(), StoreError> {
    match live(store, post_id)? {
        Some(post) => {
            let _ = writeln!(
                out,
                "The {what}, post {post_id} ({}), verbatim:\n<<<\n{}\n>>>",
                when(at, now, tz),
                post.message
            );
        }
        None => match store.forgotten_at(post_id)? {
            // §3.15: a post since forgotten is not shown, and the result says so.
            Some(forgotten) => {
                let _ = writeln!(
                    out,
                    "The {what}, post {post_id}, was forgotten ({}) at a person's request (/collegium forget, §8.4), so it is not shown.",
                    when(forgotten, now, tz)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "The {what}, post {post_id}, is not in this daemon's record of the channel (not yet observed), so it is not shown."
                );
            }
        },
    }
    Ok(())
}
