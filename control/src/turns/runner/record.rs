//! What a turn keeps (§8.2, §3.8): each call's result as the model reads it
//! and the trace keeps it, usage after each completion, and relief when the
//! context outgrows its ceiling.

use super::*;
use crate::context::relief::Pressure;
use crate::context::replay::action_line;

impl Turn<'_> {
    pub(super) async fn record_result(&mut self, executed: Executed, limit: usize) -> Option<Exit> {
        let executed = self.unit_post_returned(executed).await;
        crate::turns::log_fields::call_ended(&executed);
        let mut exit = None;
        if executed.ran() {
            self.rejections.tool_ran();
        }
        let now = chrono::Utc::now().timestamp_millis();
        let tool_name = executed
            .tool
            .as_ref()
            .map_or_else(|| executed.call.name.clone(), ToString::to_string);
        let mut disposition = executed.disposition();
        let mut reference = None;
        let (content, replay) = match &executed.outcome {
            Outcome::Ran {
                text,
                replay_line,
                content_key,
                ..
            } => {
                let tool = executed
                    .tool
                    .clone()
                    .unwrap_or_else(|| crate::tools::ToolRef::new("unknown", "tool"));
                let key = content_key.as_deref().unwrap_or(text);
                // A byte-identical result the turn still shows costs one
                // line naming it; one since replaced is shown again (§3.8).
                match self.repeats.record(&executed.call.id, &tool, key) {
                    Repeat::StillShown { line, .. } => (line, replay_line.clone()),
                    repeat => {
                        let view = self.views.enter(
                            &executed.call.id,
                            &tool_name,
                            text,
                            now,
                            self.view_limit(),
                            self.services.timezone,
                        );
                        reference.clone_from(&view.reference);
                        if view.reference.is_some() {
                            disposition = Disposition::Came(format!(
                                "shown {} of {} characters; the rest by reference",
                                view.shown, view.whole
                            ));
                        }
                        let text = match repeat {
                            Repeat::ShownAgain { earlier_call } => format!(
                                "{}\n[The content is identical to the result of call {earlier_call}, since replaced.]",
                                view.text
                            ),
                            _ => view.text,
                        };
                        (text, replay_line.clone())
                    }
                }
            }
            Outcome::Refused { text, .. } | Outcome::Lost { text, .. } => (text.clone(), None),
            // A tool that throws ends the turn (§7.2); one that may have
            // acted and did not answer ends it as unconfirmed (§7.1).
            Outcome::Failed { text, reason } => {
                exit = Some(Exit::ToolFailed {
                    tool: tool_name.clone(),
                    reason: reason.clone(),
                });
                (text.clone(), None)
            }
            Outcome::Unconfirmed { text, .. } => {
                exit = Some(Exit::Unconfirmed {
                    tool: tool_name.clone(),
                });
                (text.clone(), None)
            }
            Outcome::Denied { by, reason } => (
                match reason {
                    Some(reason) => {
                        format!("The call did not run: @{by} denied it, and said: “{reason}”")
                    }
                    None => format!("The call did not run: @{by} denied it."),
                },
                None,
            ),
            Outcome::NotRun { why } => (format!("The call was {why}."), None),
            Outcome::Cancelled { by } => (
                format!("The call did not run: @{by} stopped the turn."),
                None,
            ),
            Outcome::Abandoned { by } => (
                format!(
                    "The call was still running when @{by} killed the turn; it may have completed. Check before repeating it."
                ),
                None,
            ),
            // Its attempt was spent when the run was admitted (§7.2): only
            // the rejection count (§4.5) moves here.
            Outcome::NotHeld { text } => {
                if self.rejections.rejected() == AfterRejection::EndTurn {
                    exit = Some(Exit::Rejected);
                }
                (text.clone(), None)
            }
            Outcome::Unparseable => {
                if self.unparseable_forgiven {
                    exit = Some(Exit::MalformedCall);
                }
                self.unparseable_forgiven = true;
                (
                    "The call did not run: its arguments were not valid JSON. Call it again with a JSON object as its arguments.".to_string(),
                    None,
                )
            }
        };
        let full = match &executed.outcome {
            Outcome::Ran { text, .. } => text.clone(),
            _ => content.clone(),
        };
        let line = CallLine {
            summary: executed.summary.clone(),
            disposition,
        };
        let action = action_line(&line, replay.as_deref(), full.chars().count());
        self.trace(
            TraceKind::Result,
            Some(executed.call.id.clone()),
            Some(tool_name.clone()),
            Some(executed.call.arguments.clone()),
            Some(full),
            Some(
                serde_json::to_string(&ResultDetail {
                    replay_line: replay,
                    action: Some(action),
                    reference,
                })
                .unwrap_or_default(),
            ),
        )
        .await;
        self.own.push(Message::ToolResult {
            call_id: executed.call.id.clone(),
            name: executed.call.name.clone(),
            content,
        });
        // A tool's summary and what it came to quote its arguments and its
        // words, which may name an agent: the status post is the agent's own
        // post and must address no one (§4.5, §8.1).
        let quoted = |text: &str| {
            crate::context::window::strip_mentions_of_agents(text, &self.services.display_names)
        };
        let disposition = match line.disposition {
            Disposition::Came(note) => Disposition::Came(quoted(&note)),
            Disposition::Refused { reason } => Disposition::Refused {
                reason: quoted(&reason),
            },
            Disposition::Failed { reason } => Disposition::Failed {
                reason: quoted(&reason),
            },
            other => other,
        };
        let line = CallLine {
            summary: quoted(&line.summary),
            disposition,
        };
        self.status
            .call(&self.seat.rest, &self.services.store, &line, limit)
            .await;
        exit
    }

    /// Spends action attempts (§5.3) and records them at once, so the
    /// turn's stored count (§8.2) is the count the prompts show.
    pub(super) async fn spend(&mut self, attempts: u32) {
        if attempts == 0 {
            return;
        }
        self.attempts += attempts;
        let id = self.id.clone();
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.add_actions(&id, attempts))
            .await
        {
            warn!(%error, turn = %self.id, "could not record the turn's actions");
        }
    }

    /// How long a result may be before it enters as a view: a fixed share
    /// of the ceiling, at most a fixed size (§3.8).
    pub(super) fn view_limit(&self) -> usize {
        crate::context::sizing::result_view_chars(self.seat.agent.limits.turn_ceiling_tokens)
    }

    /// Before each completion: over the ceiling, results the model already
    /// read become stand-ins and the fresh batch is shortened together
    /// (`context::relief`); a turn still over ends (§3.8).
    pub(super) fn relieve_pressure(&mut self) -> Option<Exit> {
        let ceiling = u64::from(self.seat.agent.limits.turn_ceiling_tokens);
        let fixed =
            estimate(&self.seat.system_prompt) + self.window.iter().map(message_cost).sum::<u64>();
        let relieved = Pressure {
            own: &mut self.own,
            views: &mut self.views,
            fixed,
            ceiling,
            now: chrono::Utc::now().timestamp_millis(),
            timezone: self.services.timezone,
        }
        .relieve();
        for call_id in relieved.stood_in.iter().chain(&relieved.shortened) {
            self.repeats.replaced(call_id);
        }
        self.relieved.stood_in.extend(relieved.stood_in);
        self.relieved.shortened.extend(relieved.shortened);
        let used = self.context_estimate();
        (used > ceiling).then(|| Exit::CeilingExceeded(self.exhaustion(used, Some(ceiling))))
    }

    /// The context as the next completion would send it, in estimated tokens.
    pub(super) fn context_estimate(&self) -> u64 {
        estimate(&self.seat.system_prompt)
            + self
                .window
                .iter()
                .chain(self.own.iter())
                .map(message_cost)
                .sum::<u64>()
    }

    /// What the exhaustion notice says: the size against the ceiling (none
    /// where the provider measured it against the model's window), and the
    /// largest parts, by name (§7.1).
    pub(super) fn exhaustion(&self, used: u64, ceiling: Option<u64>) -> exit::Exhaustion {
        let mut parts: std::collections::BTreeMap<String, u64> = std::collections::BTreeMap::new();
        parts.insert(
            "the system prompt".into(),
            estimate(&self.seat.system_prompt),
        );
        parts.insert(
            "the conversation".into(),
            self.window.iter().map(message_cost).sum(),
        );
        for message in &self.own {
            let part = match message {
                Message::ToolResult { name, .. } => format!("results of {name}"),
                Message::Assistant(_) => "the turn's own words and calls".into(),
                _ => "the framework's notes to the turn".into(),
            };
            *parts.entry(part).or_default() += message_cost(message);
        }
        let mut largest: Vec<(String, u64)> = parts.into_iter().filter(|(_, t)| *t > 0).collect();
        largest.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        largest.truncate(3);
        exit::Exhaustion {
            used,
            ceiling,
            at_start: self.own.is_empty(),
            largest,
        }
    }

    pub(super) async fn record_completion(&mut self, completion: &Completion) {
        // A completion the time limit cut reports nothing; its event carries
        // the estimate, which no total includes (§7.2).
        if completion.finish != FinishReason::TimeLimit {
            self.add_usage(&completion.usage).await;
        }
        let detail = CompletionDetail {
            calls: completion
                .tool_calls
                .iter()
                .map(|c| RecordedCall {
                    id: c.id.clone(),
                    name: c.name.clone(),
                    arguments: c.arguments.clone(),
                })
                .collect(),
        };
        let mut detail = serde_json::to_value(&detail).unwrap_or_default();
        detail["usage"] = json!({
            "prompt_tokens": completion.usage.prompt_tokens,
            "cached_prompt_tokens": completion.usage.cached_prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "reasoning_tokens": completion.usage.reasoning_tokens,
            "cost_micro_usd": completion.usage.cost_micro_usd,
            "estimated": completion.usage_estimated,
        });
        // Whether relief edited the prompt since the completion before
        // this one, and which results it touched (§8.3, §3.8).
        let relieved = std::mem::take(&mut self.relieved);
        let referenced = |calls: &[String]| -> serde_json::Map<String, serde_json::Value> {
            calls
                .iter()
                .map(|c| (c.clone(), json!(self.views.reference_of_call(c))))
                .collect()
        };
        detail["relief"] = json!({
            "stood_in": referenced(&relieved.stood_in),
            "shortened": referenced(&relieved.shortened),
        });
        detail["upstream"] = json!(completion.upstream);
        detail["finish"] = json!(format!("{:?}", completion.finish));
        let event = TurnEvent {
            turn_id: self.id.clone(),
            seq: 0,
            at: chrono::Utc::now().timestamp_millis(),
            kind: TraceKind::Completion,
            call_id: None,
            tool: None,
            arguments: None,
            content: Some(completion.text.clone()),
            detail: Some(detail.to_string()),
        };
        // Reasoning is kept beside the completion that produced it (§3.12).
        let reasoning = completion.reasoning.as_ref().map(|r| r.stored());
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.append_event_with_reasoning(&event, reasoning.as_deref()))
            .await
        {
            warn!(%error, "could not record the turn's trace");
        }
    }

    pub(super) async fn add_usage(&self, usage: &crate::inference::Usage) {
        let (id, usage) = (self.id.clone(), *usage);
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.add_usage(&id, &usage))
            .await
        {
            warn!(%error, "could not record the turn's usage");
        }
    }

    pub(super) async fn trace(
        &self,
        kind: TraceKind,
        call_id: Option<String>,
        tool: Option<String>,
        arguments: Option<String>,
        content: Option<String>,
        detail: Option<String>,
    ) {
        let event = TurnEvent {
            turn_id: self.id.clone(),
            seq: 0,
            at: chrono::Utc::now().timestamp_millis(),
            kind,
            call_id,
            tool,
            arguments,
            content,
            detail,
        };
        if let Err(error) = self
            .services
            .store
            .call(move |s| s.append_event(&event))
            .await
        {
            warn!(%error, "could not record the turn's trace");
        }
    }

    /// Records the reply from Mattermost's answer rather than wait for a
    /// socket to deliver it: the queue drains the moment this turn ends,
    /// and the drained turn's window must end on this reply, then the line
    /// saying the previous turn ended (§5.2). The feed hands the socket's
    /// copy on as if it had recorded it (`chat::posted`).
    pub(super) async fn record_reply(&self, created: &mattermost_wire::model::Post) {
        let author = crate::chat::directory::Known {
            username: self.start.agent.clone(),
            kind: crate::store::AuthorKind::Agent,
        };
        let now = chrono::Utc::now().timestamp_millis();
        let observed =
            crate::chat::directory::observed(created, author, crate::store::ObservedVia::Live, now);
        let posted = &self.services.posted;
        posted.expect(&created.id);
        match self
            .services
            .store
            .call(move |s| s.record_post(&observed))
            .await
        {
            Ok(true) => {}
            // A socket's copy came first and was handed on already.
            Ok(false) => {
                posted.arrived(&created.id);
            }
            Err(error) => {
                // The socket's copy records it, late for a drain.
                posted.arrived(&created.id);
                warn!(%error, turn = %self.id, "could not record the reply");
            }
        }
    }
}
