//! A memory call as the turn runner makes it (§3.6): the agent's caps from
//! its settings, the call run in one store call, and its outcome as the
//! result the model reads. Memory is ungated (the exception to A5), so
//! nothing here waits for a person.

use serde_json::Value;

use crate::inference::ToolCall;
use crate::tools::ToolRef;
use crate::turns::calls::{CallScope, Executed, Outcome};

use super::{Caps, Request, serve};

pub async fn run(
    scope: &CallScope<'_>,
    call: &ToolCall,
    tool: &ToolRef,
    value: &Value,
) -> Executed {
    let agent = &scope.seat.agent;
    let caps = Caps::from_settings(agent.settings.get("memory"));
    let reads = scope.seat.held.contains(&ToolRef::new("memory", "read"));
    let (name, arguments) = (tool.tool.clone(), value.clone());
    let (owner, turn, channel) = (
        agent.username.clone(),
        scope.turn_id.to_string(),
        scope.channel_id.to_string(),
    );
    let timezone = scope.services.timezone;
    let served = scope
        .services
        .store
        .call(move |store| {
            let request = Request {
                agent: &owner,
                turn_id: &turn,
                channel_id: &channel,
                now: chrono::Utc::now().timestamp_millis(),
                caps,
                timezone,
                reads,
            };
            serve(store, &request, &name, &arguments)
        })
        .await;
    let (summary, outcome) = match served {
        Ok(served) => (
            served.summary,
            match served.outcome {
                Ok(done) => Outcome::Ran {
                    text: done.text,
                    replay_line: done.replay_line,
                    content_key: None,
                    note: None,
                },
                Err(text) => Outcome::Refused {
                    reason: "memory refused it".into(),
                    text,
                },
            },
        ),
        // Whether a failed store call wrote is not known to the model; the
        // turn ends on it as on any semantic error (§7.2).
        Err(error) => (
            tool.to_string(),
            Outcome::Failed {
                text: format!("The memory store could not be reached: {error}."),
                reason: error.to_string(),
            },
        ),
    };
    Executed {
        call: call.clone(),
        tool: Some(tool.clone()),
        summary,
        outcome,
    }
}
