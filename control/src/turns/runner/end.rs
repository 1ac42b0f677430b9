//! A turn's end (§5.2, §7.1, §8.1): the exit recorded, the notice it
//! owes, the status post closed, and what the turn took consumed or given
//! back in the same store transaction.

use super::*;

impl Turn<'_> {
    /// Records the end, posts the notice an exit owes, closes the status
    /// post, and consumes or returns what the turn took (§5.2).
    pub(super) async fn end(&mut self, exit: &Exit) -> bool {
        let _ = self.typing.send(false);
        self.start.fold.close();
        let limit = self.services.post_limit.get();
        let ending = match exit {
            Exit::Completed => Ending::Completed,
            Exit::Denied { by, .. } => Ending::EndedBy {
                person: by.clone(),
                how: "Denied".into(),
            },
            // A declined extension is a person ending the turn's actions
            // (§5.3), and the closing line names them (§8.1).
            Exit::BudgetDenied { by } => Ending::EndedBy {
                person: by.clone(),
                how: "Budget extension declined".into(),
            },
            Exit::Halted(halt) => Ending::EndedBy {
                person: halt.by.clone(),
                how: if halt.kill { "Killed" } else { "Stopped" }.into(),
            },
            other => Ending::Other(format!("Ended: {}", other.kind().replace('_', " "))),
        };
        if matches!(exit, Exit::Completed) {
            self.units_left_open().await;
        }
        self.status
            .close(&self.seat.rest, &self.services.store, &ending, limit)
            .await;
        let mut notice = exit.notice();
        if let (Some(text), Exit::Denied { .. } | Exit::BudgetDenied { .. }) = (&mut notice, &exit)
        {
            // §3.15: the denial notice names the units the turn was working,
            // a declined budget extension being a person's denial too.
            if let Some(units) = self.units_denied().await {
                text.push(' ');
                text.push_str(&units);
            }
        }
        if let Some(notice) = notice {
            // A notice may quote a tool's or a provider's words: it
            // addresses no agent (§4.5).
            let notice = crate::context::window::strip_mentions_of_agents(
                &notice,
                &self.services.display_names,
            );
            let post = framework_post(
                self.start.channel_id.clone(),
                notice,
                "notice",
                Some(&self.id),
            );
            if let Err(error) = self.seat.rest.create_post(&post).await {
                warn!(%error, turn = %self.id, "could not post the turn's notice");
            }
        }
        if matches!(exit, Exit::CeilingExceeded(_)) {
            self.units_out_of_context().await;
        }
        let progress = exit.allows_progress();
        let end = TurnEnd {
            exit_kind: exit.kind().to_string(),
            ended_at: chrono::Utc::now().timestamp_millis(),
            ended_by: match exit {
                Exit::Denied { by, .. }
                | Exit::BudgetDenied { by }
                | Exit::Halted(Halt { by, .. }) => Some(by.clone()),
                _ => None,
            },
            context_reach_post_id: self.window_reach.clone(),
        };
        let id = self.id.clone();
        let (agent, channel) = (self.start.agent.clone(), self.start.channel_id.clone());
        // Only the post that started the turn is queued again: a fragment
        // the debounce folded named nobody, so it queues nothing (§4.4).
        let started: Vec<(String, Millis)> = self
            .start
            .answers
            .iter()
            .filter(|(_, how)| *how == STARTED_IT)
            .map(|(p, _)| (p.id.clone(), p.created_at))
            .collect();
        let recorded = self
            .services
            .store
            // The end and the queue's change land together: nothing ever
            // reads an ended turn whose taken posts are in neither place.
            .call(move |s| {
                s.atomically(|s| {
                    s.end_turn(&id, &end)?;
                    if progress {
                        s.consume_taken(&id)
                    } else {
                        // A failure returns what it took and queues the post
                        // that started it, so nothing it answered is lost
                        // (§5.2).
                        s.return_taken(&id)?;
                        for (post, at) in &started {
                            s.enqueue(&agent, &channel, post, *at)?;
                        }
                        Ok(())
                    }
                })
            })
            .await;
        if let Err(error) = recorded {
            warn!(%error, turn = %self.id, "could not record the turn's end");
        }
        self.services.controls.release(&self.id);
        info!(turn = %self.id, exit = exit.kind(), "turn ended");
        progress
    }
}
