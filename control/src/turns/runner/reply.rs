//! What a completion's answer comes to (§4.5, §7.1): calls to run, or the
//! reply, checked before it is posted, fed back once when refused, and
//! recorded from Mattermost's answer (§5.2).

use super::*;

impl Turn<'_> {
    /// Acts on a completion: its calls, or its text as the reply; the exit
    /// it brings the turn to, if any.
    pub(super) async fn handle(&mut self, completion: Completion) -> Option<Exit> {
        // Stopped: nothing more is posted; calls are recorded as not run.
        if let Some(halt) = self.halted_now()
            && completion.tool_calls.is_empty()
        {
            return Some(Exit::Halted(halt));
        }
        if completion.finish == FinishReason::TimeLimit {
            self.time_limit_cuts += 1;
            if self.time_limit_cuts >= 2 {
                return Some(Exit::CutAtTimeLimit);
            }
        }
        if !completion.tool_calls.is_empty() {
            return self.run_calls(completion).await;
        }
        // Output cut at its limit is never posted as if whole, and says
        // which limit cut it (§7.1).
        let cut = Rejection::of_cut(
            &completion.finish,
            &completion.text,
            self.seat.agent.limits.completion_time_limit_secs,
        );
        let rejection = if cut.is_some() {
            cut
        } else if completion.leaked.is_some() {
            Some(Rejection::CallAsProse)
        } else {
            self.check(&completion.text).await
        };
        if let Some(Rejection::UnitOpen { side, .. }) = &rejection {
            self.units.reminded.spend(*side);
        }
        match rejection {
            Some(rejection) => self.reject(&completion.text, rejection).await,
            None => match self.post_reply(&completion.text).await {
                Ok(()) => Some(Exit::Completed),
                Err(Unposted::Rejected(rejection)) => {
                    self.reject(&completion.text, rejection).await
                }
                Err(Unposted::Refused(reason)) => Some(Exit::Delivery(reason)),
            },
        }
    }

    /// Checks a reply against §4.5 with the channel's members as recorded.
    async fn check(&self, text: &str) -> Option<Rejection> {
        let channel = self.start.channel_id.clone();
        let members = self
            .services
            .store
            .call(move |s| s.members(&channel))
            .await
            .unwrap_or_default();
        let usernames: BTreeSet<String> = members.iter().map(|m| m.username.clone()).collect();
        let agents: BTreeSet<&str> = members
            .iter()
            .filter(|m| m.kind == crate::store::AuthorKind::Agent)
            .map(|m| m.username.as_str())
            .collect();
        let scan = mattermost_wire::mentions::scan(text, &|u: &str| usernames.contains(u));
        let addressed: BTreeSet<String> = scan
            .usernames()
            .into_iter()
            .filter(|u| agents.contains(u.as_str()) && *u != self.seat.agent.username)
            .collect();
        let limits = &self.services.limits;
        if !addressed.is_empty() {
            let what = if self.depth >= limits.depth_limit {
                Some(format!(
                    "its delegation limit ({} hand-offs from a person)",
                    limits.depth_limit
                ))
            } else if self.chain_length >= limits.chain_limit {
                Some(format!(
                    "its chain limit ({} turns from one person's post)",
                    limits.chain_limit
                ))
            } else {
                None
            };
            if let Some(what) = what {
                return Some(Rejection::LimitReached { what });
            }
        }
        let refused = check_reply(text, &addressed, None, self.services.post_limit.get());
        let person = scan.usernames().into_iter().any(|u| {
            members
                .iter()
                .any(|m| m.username == u && m.kind == crate::store::AuthorKind::Person)
        });
        if refused.is_some() || !addressed.is_empty() || person || self.rejections.would_end() {
            return refused;
        }
        self.unit_reminder().await
    }

    async fn reject(&mut self, text: &str, rejection: Rejection) -> Option<Exit> {
        // A rejected post spends an attempt (§4.5).
        self.spend(1).await;
        let feedback = rejection.feedback();
        self.trace(
            TraceKind::RejectedPost,
            None,
            None,
            None,
            Some(text.to_string()),
            Some(json!({"reason": feedback}).to_string()),
        )
        .await;
        match self.rejections.rejected() {
            AfterRejection::EndTurn => Some(Exit::Rejected),
            AfterRejection::FeedBack => {
                self.own.push(Message::Assistant(AssistantMessage {
                    text: text.to_string(),
                    ..AssistantMessage::default()
                }));
                self.own
                    .push(Message::User(format!("[Framework] {feedback}")));
                None
            }
        }
    }

    /// Posts the reply. A post over the server's limit is a rejection the
    /// model reads (§4.5); any other refusal is Mattermost's, and ends the
    /// turn as a delivery failure carrying its reason (§7.1).
    async fn post_reply(&mut self, text: &str) -> Result<(), Unposted> {
        self.start.fold.close();
        let post = framework_post(
            self.start.channel_id.clone(),
            text.to_string(),
            "reply",
            Some(&self.id),
        );
        match self.seat.rest.create_post(&post).await {
            Ok(created) => {
                self.record_reply(&created).await;
                Ok(())
            }
            Err(crate::chat::RestError::Api { status: 400, error })
                if error.id.contains("message_length") =>
            {
                // The server's limit changed under us: read it again (§6.2).
                self.services.post_limit.refresh().await;
                Err(Unposted::Rejected(Rejection::TooLong {
                    limit: self.services.post_limit.get(),
                    length: text.chars().count(),
                }))
            }
            Err(error) => {
                warn!(%error, turn = %self.id, "Mattermost refused the reply");
                Err(Unposted::Refused(error.to_string()))
            }
        }
    }
}
