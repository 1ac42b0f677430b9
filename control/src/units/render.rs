//! Open work (§3.15): after the window, the units the agent created or was
//! assigned in this channel and has not closed, oldest first, one line
//! each, with where the other party stands as the turn begins. The list is
//! capped by the toolset's settings; a unit is never truncated, the list
//! is, and the remainder is counted. The section then says, every turn and
//! whether or not a unit is open, that nothing wakes the agent here.

use std::fmt::Write as _;

use crate::store::{Store, StoreError, Unit, unit_label};

use super::NOTHING_WAKES;
use super::standing::{Standings, Viewpoint};
use super::when::when;

/// How many units are listed where the settings do not say.
pub const DEFAULT_CAP: usize = 20;

/// The cap the agent's `tasks` settings set.
pub fn cap_of(settings: Option<&serde_json::Value>) -> usize {
    settings
        .and_then(|s| s.get("open_units_cap"))
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(DEFAULT_CAP)
}

/// The cap of an agent holding the tasks toolset, which alone has units;
/// none for any other agent, whose message has no Open work.
pub fn holds_tasks(seat: &crate::services::Seat) -> Option<usize> {
    seat.held
        .iter()
        .any(|t| t.namespace == "tasks")
        .then(|| cap_of(seat.agent.settings.get("tasks")))
}

/// The turn the section is assembled for.
pub struct TurnView<'a> {
    pub agent: &'a str,
    pub turn_id: &'a str,
    pub channel_id: &'a str,
    pub boot_id: &'a str,
    pub now: crate::store::Millis,
    pub timezone: chrono_tz::Tz,
    pub display_names: &'a std::collections::BTreeMap<String, String>,
}

/// At assembly: the reports the window holds count as read by the turn
/// (§3.15), and the section is rendered. `cap` is none for an agent
/// without the tasks toolset.
pub fn for_turn(
    store: &mut Store,
    cap: Option<usize>,
    in_window: &[String],
    turn: &TurnView<'_>,
) -> Result<Option<String>, StoreError> {
    let Some(cap) = cap else {
        return Ok(None);
    };
    store.mark_reports_in_window(turn.turn_id, in_window)?;
    let view = Viewpoint {
        reader: turn.agent,
        channel_id: turn.channel_id,
        boot_id: turn.boot_id,
        now: turn.now,
        timezone: turn.timezone,
        display_names: turn.display_names,
    };
    open_work(store, view, cap).map(Some)
}

/// Places the section in the framework message, after the roster (§3.8).
pub fn place(section: Option<&str>, out: &mut String) {
    if let Some(section) = section {
        out.push_str(section);
        out.push_str("\n\n");
    }
}

/// The section, read from the store as the turn begins.
pub fn open_work(store: &Store, view: Viewpoint<'_>, cap: usize) -> Result<String, StoreError> {
    let units = store.open_units_of(view.reader, view.channel_id)?;
    section(store, &units, view, cap)
}

/// The section for `units`, the agent's open units here, oldest first.
pub fn section(
    store: &Store,
    units: &[Unit],
    view: Viewpoint<'_>,
    cap: usize,
) -> Result<String, StoreError> {
    let (now, tz, reader) = (view.now, view.timezone, view.reader.to_string());
    let names = view.display_names;
    let name = |u: &str| crate::services::display_name(names, u).to_string();
    let mut out = String::new();
    if units.is_empty() {
        out.push_str("Open work: none. You have no open unit in this channel.\n");
    } else {
        out.push_str("Open work — your units in this channel not closed, oldest first:\n");
        let mut standings = Standings::new(view);
        for unit in units.iter().take(cap) {
            let role = if unit.creator == reader {
                format!("you assigned it to {}", name(&unit.assignee))
            } else {
                format!("{} assigned it to you", name(&unit.creator))
            };
            let follows = unit
                .follows
                .map(|f| format!(", continues {}", unit_label(f)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- {} ({role} at {}{follows}): “{}” — {}; {}.",
                unit.label(),
                when(unit.assigned_at, now, tz),
                unit.outcome,
                unit.state.as_str(),
                standings.of(store, unit)?
            );
        }
        if units.len() > cap {
            let _ = writeln!(
                out,
                "…and {} more open units not listed here (the list shows {cap}).",
                units.len() - cap
            );
        }
    }
    out.push_str(NOTHING_WAKES);
    Ok(out)
}

#[cfg(test)]
mod tests;
