//! A completion's calls (§5.1, §5.3, §3.7, §3.7a, §7.5): run in order, a
//! run of concurrent calls admitted to the budget together, gated calls and
//! questions stopping for a person, a stop ending at the boundary and a
//! kill not waiting for a tool in flight.

use tracing::Instrument;

use super::*;

impl Turn<'_> {
    /// Runs a completion's calls in order; a run of consecutive concurrent
    /// calls runs together, admitted to the budget first (§5.1).
    pub(super) async fn run_calls(&mut self, completion: Completion) -> Option<Exit> {
        self.start.fold.close();
        // The turn has called a tool from the moment the model asks for
        // one, whatever becomes of the call (§7.6).
        self.services.controls.called(&self.id);
        self.units.begin_completion();
        let limit = self.services.post_limit.get();
        self.beside_calls = completion.text.trim().to_string();
        if !completion.text.trim().is_empty() {
            self.last_words = Some(completion.text.trim().to_string());
            // Text beside a call goes to the status post (§3.3), agent
            // mentions stripped (§4.5).
            let interim = crate::context::window::strip_mentions_of_agents(
                completion.text.trim(),
                &self.services.display_names,
            );
            let note = format!("💬 {}", interim.lines().next().unwrap_or_default());
            self.status
                .note(&self.seat.rest, &self.services.store, &note, true, limit)
                .await;
        }
        let sent_back = completion
            .tool_calls
            .iter()
            .map(|c| crate::inference::ToolCall {
                arguments: crate::context::window::sendable_arguments(&c.arguments),
                ..c.clone()
            })
            .collect();
        self.own.push(Message::Assistant(AssistantMessage {
            text: completion.text.clone(),
            tool_calls: sent_back,
            reasoning: completion.reasoning.clone(),
        }));
        let planned: Vec<calls::Planned> = completion
            .tool_calls
            .iter()
            .map(|call| calls::plan(self.services, self.seat, call))
            .collect();
        let mut exit = None;
        let mut remaining = planned.into_iter().peekable();
        while let Some(first) = remaining.next() {
            let mut run = vec![first];
            if run[0].concurrent {
                while remaining.peek().is_some_and(|p| p.concurrent) {
                    run.extend(remaining.next());
                }
            }
            if let Some(halt) = self.halted_now() {
                // A stop ends the turn at this boundary: no further calls.
                for planned in run {
                    let executed = planned.unrun(Outcome::Cancelled {
                        by: halt.by.clone(),
                    });
                    self.record_result(executed, limit).await;
                }
                exit.get_or_insert(Exit::Halted(halt));
                continue;
            }
            let cost = run.iter().filter(|p| !p.budget_exempt).count() as u32;
            let mut spent = self.attempts + cost > self.allowance;
            if spent && exit.is_none() && !self.words_only {
                // The agent asks a person to extend its budget (§5.3); the
                // context is kept, and an approval grants the budget again.
                self.units.waited_on_person();
                match self.extension(&run).await {
                    Ok(Decided::Approved { .. }) => {
                        self.allowance += self.seat.agent.limits.action_budget;
                        spent = self.attempts + cost > self.allowance;
                    }
                    // Only a question is ever answered (the decision route
                    // checks the kind); an answer here extends nothing.
                    Ok(Decided::Denied { by } | Decided::Answered { by, .. }) => {
                        exit = Some(Exit::BudgetDenied { by });
                    }
                    Ok(Decided::DeniedWithReason { by, reason }) => {
                        // Zero attempts left, and words only (§5.4).
                        self.words_only = true;
                        self.pending_words.push(format!(
                            "[@{by} did not extend your action budget, and said:] {reason}"
                        ));
                    }
                    Err(end) => exit = Some(end),
                }
            }
            if exit.is_some() || spent || self.words_only {
                // After an end, or past the budget, nothing more runs (§5.3).
                // A call after a reasoned denial ends the turn as exhausted,
                // without a second prompt.
                let why = if exit.is_some() {
                    "not run: the turn ended before it"
                } else {
                    "not run: the action budget is spent"
                };
                for planned in run {
                    let executed = planned.unrun(Outcome::NotRun { why: why.into() });
                    if let Some(end) = self.record_result(executed, limit).await {
                        exit.get_or_insert(end);
                    }
                }
                if !self.words_only || self.pending_words.is_empty() {
                    exit.get_or_insert(Exit::BudgetExhausted);
                }
                continue;
            }
            self.spend(cost).await;
            for planned in &run {
                let name = planned
                    .resolved
                    .as_ref()
                    .map_or_else(|_| planned.call.name.clone(), |(t, _, _)| t.to_string());
                *self.call_counts.entry(name).or_default() += 1;
            }
            if run[0].gated || run[0].asks {
                self.units.waited_on_person();
            }
            let ran = if run[0].gated {
                let planned = run.remove(0);
                match self.approval(&planned).await {
                    Ok(Asked::Unshowable { text, reason }) => {
                        vec![planned.unrun(Outcome::Refused { text, reason })]
                    }
                    Ok(Asked::Decided(Decided::Approved { .. })) => {
                        let decision = self.last_decision.clone();
                        let (ran, killed) = self.run_unless_killed(vec![planned], decision).await;
                        if let Some(end) = killed {
                            exit.get_or_insert(end);
                        }
                        ran
                    }
                    Ok(Asked::Decided(Decided::Denied { by })) => {
                        let tool = planned.tool_name();
                        exit = Some(Exit::Denied {
                            by: by.clone(),
                            tool,
                        });
                        vec![planned.unrun(Outcome::Denied { by, reason: None })]
                    }
                    Ok(Asked::Decided(Decided::DeniedWithReason { by, reason })) => {
                        self.reasoned_denials
                            .insert(planned.tool_name(), (by.clone(), reason.clone()));
                        vec![planned.unrun(Outcome::Denied {
                            by,
                            reason: Some(reason),
                        })]
                    }
                    Ok(Asked::Decided(Decided::Answered { .. })) => {
                        vec![planned.unrun(Outcome::NotRun {
                            why: "not run: an approval was answered as a question".into(),
                        })]
                    }
                    Err(end) => vec![unasked(planned, &mut exit, end)],
                }
            } else if run[0].asks {
                let planned = run.remove(0);
                match self.question(&planned).await {
                    Ok(Asked::Unshowable { text, reason }) => {
                        vec![planned.unrun(Outcome::Refused { text, reason })]
                    }
                    Ok(Asked::Decided(Decided::Answered { by, answer })) => {
                        vec![answered(planned, &by, &answer)]
                    }
                    Ok(Asked::Decided(other)) => vec![planned.unrun(Outcome::NotRun {
                        why: format!("not run: the question was {}", other.outcome()),
                    })],
                    Err(end) => vec![unasked(planned, &mut exit, end)],
                }
            } else {
                let (ran, killed) = self.run_unless_killed(run, None).await;
                if let Some(end) = killed {
                    exit.get_or_insert(end);
                }
                ran
            };
            for executed in ran {
                if let Some(end) = self.record_result(executed, limit).await {
                    exit.get_or_insert(end);
                }
            }
        }
        // A denial's reason follows the results its calls are owed.
        for words in std::mem::take(&mut self.pending_words) {
            self.own.push(Message::User(words));
        }
        // §3.15: a unit post's ask to end the turn, granted or refused once
        // every call of the completion has returned.
        if exit.is_none() {
            exit = self.end_at_unit_post().await;
        }
        exit
    }

    /// Runs calls together, unless a person kills the turn first: a kill
    /// does not wait for a tool in flight, which runs on as its own task and
    /// may still complete and record its outcome (§7.5).
    async fn run_unless_killed(
        &self,
        run: Vec<calls::Planned>,
        decision: Option<String>,
    ) -> (Vec<Executed>, Option<Exit>) {
        let mut abandoned: Vec<Executed> = run.iter().map(|p| p.abandoned("")).collect();
        let scope = CallScope {
            services: self.services,
            seat: self.seat,
            turn_id: &self.id,
            channel: &self.channel_handle,
            unit: self.served_unit.as_deref(),
            channel_id: &self.start.channel_id,
        };
        let running = futures_util::future::join_all(run.into_iter().map(|planned| {
            let span = crate::turns::log_fields::call_span(&planned);
            calls::run(&scope, planned, &self.views, decision.clone()).instrument(span)
        }));
        let mut halted = self.halted.clone();
        tokio::select! {
            ran = running => (ran, None),
            () = killed(&mut halted) => {
                let halt = self.halted_now().unwrap_or(Halt { by: String::new(), kill: true });
                for call in &mut abandoned {
                    call.outcome = Outcome::Abandoned { by: halt.by.clone() };
                }
                (abandoned, Some(Exit::Halted(halt)))
            }
        }
    }
}
