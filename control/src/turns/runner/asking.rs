//! A turn that stops for a person (§3.7, §5.3): the approval and extension
//! prompts, posted under the agent's account, and the wait on them, which
//! has no timeout and which a person's stop cancels.

use super::*;

impl Turn<'_> {
    /// Parks the turn on a person's decision (§3.7): the prompt under the
    /// agent's account, the status post's head saying since when, and no
    /// timeout.
    pub(super) async fn approval(&mut self, planned: &calls::Planned) -> Result<Decided, Exit> {
        let Ok((tool, value, _)) = &planned.resolved else {
            return Err(Exit::Store(
                "an approval for a call that did not resolve".into(),
            ));
        };
        let payload = serde_json::to_string_pretty(value).unwrap_or_default();
        let asker = self.answers.last().cloned();
        // Agent mentions are stripped from prompts (§4.5): a quoted @name
        // would address that agent from the prompt.
        let words = asker.as_ref().map(|post| {
            crate::context::window::strip_mentions_of_agents(
                &post.message,
                &self.services.display_names,
            )
        });
        let words = words.as_deref().unwrap_or_default();
        let asked_by = asker.as_ref().map(|post| match post.author_kind {
            crate::store::AuthorKind::Agent => AskedBy::Colleague {
                display_name: self
                    .services
                    .display_names
                    .get(&post.author_name)
                    .map_or(post.author_name.as_str(), String::as_str),
                words,
            },
            _ => AskedBy::Person {
                username: &post.author_name,
                words,
            },
        });
        let text = prompt::render(&prompt::PromptFacts {
            tool: &tool.to_string(),
            action: self.attempts,
            budget: self.seat.agent.limits.action_budget,
            asked_by,
            payload: &payload,
        });
        self.ask_person("approval", Some(tool.to_string()), &planned.call.id, text)
            .await
    }

    /// Posts a prompt under the agent's account and parks the turn on it
    /// until a person decides (§3.7, §5.3): no timeout; a stop cancels it.
    pub(super) async fn ask_person(
        &mut self,
        kind: &str,
        tool: Option<String>,
        call_id: &str,
        text: String,
    ) -> Result<Decided, Exit> {
        let id = uuid::Uuid::now_v7().to_string();
        let record = NewDecision {
            id: id.clone(),
            turn_id: self.id.clone(),
            call_id: call_id.to_string(),
            agent: self.start.agent.clone(),
            channel_id: self.start.channel_id.clone(),
            kind: kind.into(),
            tool,
            payload: text.clone(),
            requested_at: chrono::Utc::now().timestamp_millis(),
        };
        self.services
            .store
            .call(move |s| s.open_decision(&record))
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        // Parked before the prompt exists, so the fastest click finds it.
        let waiting = self.services.parked.park(&id);
        let signature = sign::sign(&self.services.decision_key, &id);
        let url = format!(
            "{}{}",
            self.services.callback_url,
            crate::callbacks::DECISION_ROUTE
        );
        let post = NewPost {
            channel_id: self.start.channel_id.clone(),
            message: text,
            props: json!({
                ROLE_PROP: "prompt",
                TURN_PROP: self.id,
                "attachments": prompt::attachments(&url, &id, &signature),
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
            ..NewPost::default()
        };
        // The status post says the turn waits before the prompt appears, so
        // the channel reads in the order things happened (§8.1).
        let since = chrono::Utc::now().with_timezone(&self.services.timezone);
        let head = format!(
            "🔐 _waiting on a decision since {}_",
            since.format("%H:%M %Z")
        );
        let limit = self.services.post_limit.get();
        self.status
            .set_head(&self.seat.rest, &self.services.store, Some(head), limit)
            .await;
        let posted = self
            .seat
            .rest
            .create_post(&post)
            .await
            .map_err(|e| Exit::Delivery(e.to_string()))?;
        let (decision, post_id) = (id.clone(), posted.id.clone());
        let _ = self
            .services
            .store
            .call(move |s| s.set_prompt_post(&decision, &post_id))
            .await;
        self.services.controls.parked(&self.id, true);
        let mut halted = self.halted.clone();
        let decided = tokio::select! {
            decided = waiting => decided
                .map_err(|_| Exit::Store("the wait for a decision was dropped".into()))?,
            () = stopped(&mut halted) => {
                let halt = self.halted_now().unwrap_or(Halt { by: String::new(), kill: false });
                self.cancel_prompt(&id, &halt).await;
                return Err(Exit::Halted(halt));
            }
        };
        self.services.controls.parked(&self.id, false);
        self.status
            .set_head(&self.seat.rest, &self.services.store, None, limit)
            .await;
        self.last_decision = Some(id);
        Ok(decided)
    }

    /// The extension prompt (§5.3): the running count, the calls repeated
    /// most, and the agent's last words or that it wrote none.
    pub(super) async fn extension(&mut self, run: &[calls::Planned]) -> Result<Decided, Exit> {
        let budget = self.seat.agent.limits.action_budget;
        let mut repeated: Vec<(&String, &u32)> = self.call_counts.iter().collect();
        repeated.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let most: Vec<String> = repeated
            .iter()
            .take(3)
            .map(|(tool, n)| format!("`{tool}` ×{n}"))
            .collect();
        let words = match &self.last_words {
            Some(words) => format!(
                "Its last words: “{}”",
                crate::context::window::strip_mentions_of_agents(
                    &words
                        .chars()
                        .take(prompt::EXCERPT_CHARS)
                        .collect::<String>(),
                    &self.services.display_names
                )
            ),
            None => "It wrote nothing beside its calls.".to_string(),
        };
        let display = self.seat.agent.display_name.clone();
        let text = format!(
            "🔐 **More actions needed** — {display} has used {} of {} actions in this turn. \
             Most repeated: {}. {words} Approve to grant {budget} more; the turn keeps its context.",
            self.attempts,
            self.allowance,
            if most.is_empty() {
                "none".to_string()
            } else {
                most.join(", ")
            },
        );
        let call = run.first().map(|p| p.call.id.clone()).unwrap_or_default();
        self.ask_person("extension", None, &call, text).await
    }

    /// A stop cancels a pending prompt without counting a denial (§7.5):
    /// recorded as cancelled, rewritten without buttons.
    pub(super) async fn cancel_prompt(&self, approval: &str, halt: &Halt) {
        let (id, by) = (approval.to_string(), halt.by.clone());
        let now = chrono::Utc::now().timestamp_millis();
        let record = self
            .services
            .store
            .call(move |s| {
                s.decide(&id, "cancelled", &by, None, now)?;
                s.decision(&id)
            })
            .await;
        if let Ok(Some(decision)) = record
            && let Some(post) = decision.prompt_post_id
        {
            let how = if halt.kill { "killed" } else { "stopped" };
            let text = prompt::terminal(
                &decision.payload,
                &format!("✋ Cancelled: @{} {how} the turn.", halt.by),
            );
            if let Err(error) = self.seat.rest.replace_post(&post, &text, json!({})).await {
                warn!(%error, "could not rewrite the cancelled prompt");
            }
        }
    }
}
