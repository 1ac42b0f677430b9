//! The unit a call names (§3.15, §7.2): a reference that matches no unit of
//! the agent's in this channel is refused with the references its Open
//! work lists, which the agent was shown; a reference longer than a unit's
//! is told how a unit is named.

use crate::store::{Unit, parse_unit_label, unit_label};

use super::Caller;

/// The longest reference that could be a unit's: `U-` and a number.
const LABEL_CHARS: usize = 21;

pub async fn find(caller: &Caller<'_>, reference: &str) -> Result<Unit, String> {
    let text = reference.trim();
    let Some(id) = parse_unit_label(text) else {
        let how = if text.chars().count() > LABEL_CHARS {
            "That reference is longer than a unit's: a unit is named U- and its number, such as U-3, as Open work lists it.".to_string()
        } else {
            format!(
                "`{text}` is not a unit reference: a unit is named U- and its number, such as U-3."
            )
        };
        return Err(format!("{how} {}", listing(caller).await));
    };
    let found = caller
        .services
        .store
        .call(move |s| s.unit(id))
        .await
        .map_err(|error| format!("The store could not be read ({error}); nothing changed."))?;
    let agent = caller.agent();
    match found {
        Some(unit) if is_theirs(&unit, agent, caller.channel_id) => Ok(unit),
        Some(unit) if unit.creator == agent || unit.assignee == agent => Err(format!(
            "{} is a unit of another channel; it is read and moved only there. {}",
            unit_label(id),
            listing(caller).await
        )),
        _ => Err(format!(
            "{} is not a unit of yours in this channel. {}",
            unit_label(id),
            listing(caller).await
        )),
    }
}

/// Whether `agent` reads `unit` from `channel_id`: one it created or was
/// assigned there; another pair's is simply absent (§3.15). A plugin's unit
/// lookup answers by the same rule (§3.14).
pub(crate) fn is_theirs(unit: &Unit, agent: &str, channel_id: &str) -> bool {
    unit.channel_id == channel_id && (unit.creator == agent || unit.assignee == agent)
}

/// The references Open work lists: the agent's open units here.
pub async fn listing(caller: &Caller<'_>) -> String {
    let (agent, channel) = (caller.agent().to_string(), caller.channel_id.to_string());
    let open = caller
        .services
        .store
        .call(move |s| s.open_units_of(&agent, &channel))
        .await
        .unwrap_or_default();
    if open.is_empty() {
        return "You have no open unit in this channel.".into();
    }
    let listed: Vec<String> = open
        .iter()
        .map(|u| {
            let role = if u.creator == caller.agent() {
                format!("you assigned it to {}", caller.name(&u.assignee))
            } else {
                format!("{} assigned it to you", caller.name(&u.creator))
            };
            format!("{} ({}, {role})", u.label(), u.state.as_str())
        })
        .collect();
    format!("Your open units here: {}.", listed.join("; "))
}
