//! The runner's part in work units (§3.15): what only the runner knows —
//! what the turn answers, whether a person steered it, how the other calls
//! of a completion came out — applied to the units module's rules. The
//! silent-reply reminder, the note on a unit post's result where the turn
//! owes no reply, the `endTurn` gate, the denial notice's units and the
//! out-of-context report all start here.

use super::*;
use crate::units::owes;
use crate::units::reminder::Spent;

/// What the runner keeps of a turn's units.
#[derive(Debug, Default)]
pub(super) struct UnitTurn {
    /// The silent-reply reminders spent this turn, one per side.
    pub(super) reminded: Spent,
    /// The first person who steered the turn: it then owes a reply.
    steered_by: Option<String>,
    /// How the current completion's calls came out, for the `endTurn` gate.
    completion: owes::Completion,
}

impl UnitTurn {
    pub(super) fn steered(&mut self, by: &str) {
        self.steered_by.get_or_insert_with(|| by.to_string());
    }

    pub(super) fn begin_completion(&mut self) {
        self.completion = owes::Completion::default();
    }

    /// A call of the completion waited on a person: an approval, a
    /// question, or a budget extension.
    pub(super) fn waited_on_person(&mut self) {
        self.completion.waited_on_person = true;
    }
}

/// Whether a call is one whose post addresses a colleague and may ask to
/// end the turn there: `tasks::assign` or `tasks::report`.
fn unit_post_call(executed: &Executed) -> bool {
    executed
        .tool
        .as_ref()
        .is_some_and(|t| t.namespace == "tasks" && matches!(t.tool.as_str(), "assign" | "report"))
}

/// How a call that did not return cleanly came out, in the gate's words.
fn troubled(outcome: &Outcome) -> Option<&'static str> {
    match outcome {
        Outcome::Ran { .. } => None,
        Outcome::Refused { .. } | Outcome::NotHeld { .. } | Outcome::Unparseable => Some("refused"),
        Outcome::Denied { .. } => Some("denied"),
        Outcome::Failed { .. } | Outcome::Lost { .. } | Outcome::Unconfirmed { .. } => {
            Some("failed")
        }
        Outcome::NotRun { .. } | Outcome::Cancelled { .. } | Outcome::Abandoned { .. } => {
            Some("not run")
        }
    }
}

impl Turn<'_> {
    fn answered_ids(&self) -> Vec<String> {
        self.answers.iter().map(|p| p.id.clone()).collect()
    }

    /// The posts that started the turn and those folded into it.
    fn started_ids(&self) -> Vec<String> {
        self.start
            .answers
            .iter()
            .map(|(p, _)| p.id.clone())
            .collect()
    }

    /// What the turn owes, if anything, in the words the model reads.
    async fn owed(&self) -> Option<String> {
        owes::owed(
            self.services,
            self.seat,
            &self.start.channel_id,
            &self.id,
            &self.answers,
            self.units.steered_by.as_deref(),
        )
        .await
    }

    /// The silent-reply reminder a final reply that reaches nobody earns,
    /// from a side not yet spent this turn.
    pub(super) async fn unit_reminder(&self) -> Option<Rejection> {
        crate::units::reminder::next(
            self.services,
            self.seat,
            &self.start.channel_id,
            &self.id,
            &self.answered_ids(),
            self.units.reminded,
        )
        .await
        .map(|(side, feedback)| Rejection::UnitOpen { feedback, side })
    }

    /// Notes how a call returned for the `endTurn` gate, and adds the
    /// runner's note to a unit post's result where the turn owes no reply
    /// and no unit a move (§3.15).
    pub(super) async fn unit_post_returned(&mut self, mut executed: Executed) -> Executed {
        let unit_post = unit_post_call(&executed);
        if unit_post && owes::asks_to_end(&executed.call.arguments) {
            self.units.completion.asked = Some(executed.call.id.clone());
        }
        if let Some(how) = troubled(&executed.outcome) {
            let tool = executed
                .tool
                .as_ref()
                .map_or_else(|| executed.call.name.clone(), ToString::to_string);
            self.units
                .completion
                .troubled
                .get_or_insert((tool, how.to_string()));
            return executed;
        }
        if unit_post
            && self.owed().await.is_none()
            && let Outcome::Ran { text, .. } = &mut executed.outcome
        {
            text.push_str("\n\n");
            text.push_str(owes::NO_REPLY_OWED);
        }
        executed
    }

    /// The `endTurn` gate, once every call of the completion has returned:
    /// the turn ends at the unit post, or goes on and the model is told
    /// why. Either way the trace records it (§3.15, §8.2).
    pub(super) async fn end_at_unit_post(&mut self) -> Option<Exit> {
        let completion = std::mem::take(&mut self.units.completion);
        let asked = completion.asked.clone()?;
        // A steer that reached the turn during the calls is kept for the
        // next completion, which hands it over.
        if let Some(steers) = self.steers.as_mut() {
            while let Ok(steer) = steers.try_recv() {
                self.steered.push(steer);
            }
        }
        let steer_since = self
            .steered
            .first()
            .map(|s| self.services.display_name(&s.by).to_string());
        let owed = self.owed().await;
        let verdict = owes::gate(&completion, steer_since.as_deref(), owed.as_deref());
        let (content, detail) = match &verdict {
            Ok(()) => (
                "endTurn granted: the turn ends at its unit post".to_string(),
                json!({"end_turn": "granted", "call": asked}),
            ),
            Err(why) => (
                why.clone(),
                json!({"end_turn": "refused", "call": asked, "reason": why}),
            ),
        };
        self.trace(
            TraceKind::Note,
            Some(asked),
            None,
            None,
            Some(content),
            Some(detail.to_string()),
        )
        .await;
        match verdict {
            Ok(()) => Some(Exit::Completed),
            Err(why) => {
                self.own.push(Message::User(why));
                None
            }
        }
    }

    /// The sentence a denial notice ends with, naming the units the turn
    /// was working.
    pub(super) async fn units_denied(&self) -> Option<String> {
        crate::units::notice::denial(
            self.services,
            self.seat,
            &self.start.channel_id,
            &self.id,
            &self.started_ids(),
        )
        .await
    }

    /// A completing turn names on its status post each unit it leaves
    /// open that it owed a move, whether or not it replied (§3.15).
    pub(super) async fn units_left_open(&mut self) {
        let Some(note) = crate::units::status::open_units_note(
            self.services,
            self.seat,
            &self.start.channel_id,
            &self.id,
            &self.answered_ids(),
        )
        .await
        else {
            return;
        };
        let limit = self.services.post_limit.get();
        self.status
            .note(&self.seat.rest, &self.services.store, &note, true, limit)
            .await;
    }

    /// An exhausted turn's units are reported blocked by the framework.
    pub(super) async fn units_out_of_context(&self) {
        crate::units::exhausted::report_blocked(
            self.services,
            self.seat,
            &self.start.channel_id,
            &self.id,
            &self.started_ids(),
        )
        .await;
    }
}
