//! The fields a turn's and a call's log records carry (issue 21 item 6), so
//! `journalctl AGENT=mira` or `journalctl TURN=…` finds everything one turn
//! did: a `turn` span holding `agent`, `channel` and `turn` around the whole
//! turn; a `call` span holding `tool` and `call` around each call while it
//! runs; and one closing event per call with its `outcome`. The journal
//! layer upcases the names (`AGENT=`, `OUTCOME=`). No argument, result or
//! reasoning is ever a field (§3.12).

use tracing::Span;

use super::calls::{Executed, Outcome, Planned};

/// The span a whole turn runs in.
pub fn turn_span(turn: &str, agent: &str, channel: &str) -> Span {
    tracing::info_span!("turn", agent = %agent, channel = %channel, turn = %turn)
}

/// The span one call runs in.
pub fn call_span(planned: &Planned) -> Span {
    tracing::info_span!("call", tool = %planned.tool_name(), call = %planned.call.id)
}

/// The call's closing record: what it came to, once it is recorded.
pub fn call_ended(executed: &Executed) {
    let tool = executed
        .tool
        .as_ref()
        .map_or_else(|| executed.call.name.clone(), ToString::to_string);
    tracing::info!(
        tool = %tool,
        call = %executed.call.id,
        outcome = outcome_kind(&executed.outcome),
        "tool call ended"
    );
}

/// One word for what a call came to, as `OUTCOME=` holds it.
pub fn outcome_kind(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Ran { .. } => "ran",
        Outcome::Refused { .. } => "refused",
        Outcome::Failed { .. } => "failed",
        Outcome::Lost { .. } => "lost",
        Outcome::Unconfirmed { .. } => "unconfirmed",
        Outcome::Unparseable => "unparseable",
        Outcome::NotHeld { .. } => "not_held",
        Outcome::Denied { .. } => "denied",
        Outcome::NotRun { .. } => "not_run",
        Outcome::Cancelled { .. } => "cancelled",
        Outcome::Abandoned { .. } => "abandoned",
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use serde_json::Value;

    use super::*;
    use crate::inference::ToolCall;
    use crate::tools::ToolRef;

    /// Every line the subscriber writes, kept for the test to read.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lines").extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The JSON lines `during` logs, as the JSON sink writes them.
    fn logged(during: impl FnOnce()) -> Vec<Value> {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .json()
            .flatten_event(true)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, during);
        let text = String::from_utf8(lines.0.lock().expect("lines").clone()).expect("utf-8");
        text.lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line"))
            .collect()
    }

    fn executed(outcome: Outcome) -> Executed {
        Executed {
            call: ToolCall {
                id: "call-7".into(),
                name: "workspace__read".into(),
                arguments: "{}".into(),
            },
            tool: Some(ToolRef::new("workspace", "read")),
            summary: String::new(),
            outcome,
        }
    }

    #[test]
    fn i21_a_calls_closing_record_carries_agent_channel_turn_tool_call_and_outcome() {
        let lines = logged(|| {
            let turn = turn_span("turn-1", "mira", "chan-9");
            let _in_turn = turn.enter();
            tracing::info!("turn started");
            call_ended(&executed(Outcome::Denied {
                by: "ana".into(),
                reason: None,
            }));
        });
        assert_eq!(lines.len(), 2, "{lines:#?}");
        for line in &lines {
            assert_eq!(line["span"]["name"], "turn", "{line}");
            assert_eq!(line["span"]["agent"], "mira", "{line}");
            assert_eq!(line["span"]["channel"], "chan-9", "{line}");
            assert_eq!(line["span"]["turn"], "turn-1", "{line}");
        }
        let ended = &lines[1];
        assert_eq!(ended["message"], "tool call ended");
        assert_eq!(ended["tool"], "workspace::read");
        assert_eq!(ended["call"], "call-7");
        assert_eq!(ended["outcome"], "denied");
    }

    #[test]
    fn i21_a_record_inside_a_call_carries_its_tool_and_call() {
        let planned = Planned {
            call: ToolCall {
                id: "call-8".into(),
                name: "workspace__write".into(),
                arguments: "{}".into(),
            },
            resolved: Err(executed(Outcome::Unparseable)),
            concurrent: false,
            budget_exempt: false,
            gated: false,
            asks: false,
        };
        let lines = logged(|| {
            let turn = turn_span("turn-2", "theo", "chan-1");
            let _in_turn = turn.enter();
            let call = call_span(&planned);
            let _in_call = call.enter();
            tracing::warn!("a rendering of no known kind");
        });
        let line = &lines[0];
        assert_eq!(line["span"]["name"], "call", "{line}");
        assert_eq!(line["span"]["tool"], "workspace__write", "{line}");
        assert_eq!(line["span"]["call"], "call-8", "{line}");
        assert_eq!(line["spans"][0]["agent"], "theo", "{line}");
        assert_eq!(line["spans"][0]["turn"], "turn-2", "{line}");
    }

    #[test]
    fn i21_every_outcome_has_one_word() {
        let words = [
            outcome_kind(&Outcome::Unparseable),
            outcome_kind(&Outcome::NotRun { why: String::new() }),
            outcome_kind(&Outcome::Abandoned { by: String::new() }),
        ];
        assert_eq!(words, ["unparseable", "not_run", "abandoned"]);
    }
}
