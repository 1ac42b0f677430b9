//! Where the other party of a unit stands as the turn begins (§3.15):
//! computed from the turn records and the pending decisions whenever it is
//! shown and never stored, so it cannot disagree with them. It says what
//! the other party's turns did, never what they called (§3.8).

use std::collections::BTreeMap;

use crate::store::{Millis, Store, StoreError, Unit, UnitState};

use super::when::when;

/// What a standing is computed against.
pub struct Viewpoint<'a> {
    /// The agent reading it.
    pub reader: &'a str,
    pub channel_id: &'a str,
    /// This process's boot: a turn of an earlier boot that never ended was
    /// abandoned, not running (§7.3).
    pub boot_id: &'a str,
    pub now: Millis,
    pub timezone: chrono_tz::Tz,
    pub display_names: &'a BTreeMap<String, String>,
}

/// What one agent's turns here are doing, read once per agent.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Activity {
    /// The running turn: when it started, and when it parked on a person.
    running: Option<(Millis, Option<Millis>)>,
    /// When its latest ended turn here ended.
    last_ended: Option<Millis>,
}

/// Standings for several units, each agent's activity read once.
pub struct Standings<'a> {
    view: Viewpoint<'a>,
    seen: BTreeMap<String, Activity>,
}

impl<'a> Standings<'a> {
    pub fn new(view: Viewpoint<'a>) -> Self {
        Self {
            view,
            seen: BTreeMap::new(),
        }
    }

    fn activity(&mut self, store: &Store, agent: &str) -> Result<Activity, StoreError> {
        if let Some(known) = self.seen.get(agent) {
            return Ok(known.clone());
        }
        let running = match store.running_turn(agent, self.view.channel_id, self.view.boot_id)? {
            Some((turn, started)) => Some((started, store.parked_since(&turn)?)),
            None => None,
        };
        let last_ended = store.latest_turn_end(agent, self.view.channel_id)?;
        let activity = Activity {
            running,
            last_ended,
        };
        self.seen.insert(agent.to_string(), activity.clone());
        Ok(activity)
    }

    fn at(&self, at: Millis) -> String {
        when(at, self.view.now, self.view.timezone)
    }

    fn name<'b>(&'b self, username: &'b str) -> &'b str {
        crate::services::display_name(self.view.display_names, username)
    }

    /// The party a unit waits on: its assignee while assigned, its creator
    /// once reported; none once closed.
    pub fn awaited(unit: &Unit) -> Option<&str> {
        match unit.state {
            UnitState::Assigned => Some(&unit.assignee),
            UnitState::Review | UnitState::Blocked => Some(&unit.creator),
            UnitState::Done | UnitState::Cancelled => None,
        }
    }

    /// The standing of the party `unit` waits on, as a phrase.
    pub fn of(&mut self, store: &Store, unit: &Unit) -> Result<String, StoreError> {
        let Some(awaited) = Self::awaited(unit) else {
            return Ok(format!(
                "closed {}",
                unit.closed_at.map(|t| self.at(t)).unwrap_or_default()
            ));
        };
        let since = unit.changed_at;
        if awaited == self.view.reader {
            return Ok(format!("awaiting your move since {}", self.at(since)));
        }
        let who = self.name(awaited).to_string();
        let activity = self.activity(store, awaited)?;
        Ok(match (activity.running, activity.last_ended) {
            (Some((_, Some(parked))), _) => {
                format!("{who} is waiting on a person since {}", self.at(parked))
            }
            (Some((started, None)), _) => {
                let before = if started < since {
                    ", in a turn begun before the unit last changed"
                } else {
                    ""
                };
                format!("{who} is working here since {}{before}", self.at(started))
            }
            (None, Some(ended)) if ended >= since => format!(
                "{who}'s latest turn here since the unit last changed ended at {}",
                self.at(ended)
            ),
            (None, _) => format!("{who} has had no turn here since the unit last changed"),
        })
    }
}
