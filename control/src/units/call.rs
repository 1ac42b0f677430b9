//! The `tasks` calls as the turn runner dispatches them (§3.15): the
//! arguments already checked against the declared schema, the verb run,
//! its answer made the call's outcome. A refusal changed nothing; a
//! failure after a post leaves the post up without its record, which ends
//! the turn as any semantic error does (§7.2).

use serde_json::Value;

use crate::inference::ToolCall;
use crate::store::UnitState;
use crate::tools::ToolRef;
use crate::turns::calls::{CallScope, Executed, Outcome};

use super::assign::{Assignment, assign};
use super::{Answer, Caller};

pub async fn run(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
) -> Executed {
    let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default();
    let caller = Caller {
        services: scope.services,
        seat: scope.seat,
        channel_id: scope.channel_id,
        turn_id: scope.turn_id,
    };
    let (summary, answer) = match tool.tool.as_str() {
        "assign" => {
            let asked = Assignment {
                assignee: text("assignee"),
                outcome: text("outcome"),
                criteria: text("criteria"),
                context: text("context"),
                follows: value.get("follows").and_then(Value::as_str),
            };
            let summary = match asked.follows {
                Some(follows) => {
                    format!("tasks::assign to {} continuing {follows}", asked.assignee)
                }
                None => format!("tasks::assign to {}", asked.assignee),
            };
            (summary, assign(&caller, &asked).await)
        }
        "report" => {
            let state = UnitState::parse(text("state")).unwrap_or(UnitState::Review);
            (
                format!("tasks::report {} {}", text("unit"), state.as_str()),
                super::report::report(&caller, text("unit"), state, text("report")).await,
            )
        }
        "close" => {
            let state = UnitState::parse(text("state")).unwrap_or(UnitState::Done);
            (
                format!("tasks::close {} {}", text("unit"), state.as_str()),
                super::close::close(&caller, text("unit"), state, text("verdict")).await,
            )
        }
        "read" => (
            format!("tasks::read {}", text("unit")),
            super::read::read(&caller, text("unit")).await,
        ),
        other => (
            tool.to_string(),
            Answer::Refused(format!(
                "The call did not run: tasks::{other} is not served by this build."
            )),
        ),
    };
    let outcome = match answer {
        Answer::Done(text) => Outcome::Ran {
            text,
            replay_line: None,
            content_key: None,
            note: None,
        },
        Answer::Refused(text) => Outcome::Refused {
            reason: "the unit did not change".into(),
            text,
        },
        Answer::Failed(text) => Outcome::Failed {
            reason: "its post is up without its record".into(),
            text,
        },
    };
    Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    }
}
