//! A turn that stops for a person (§3.7, §5.3): the approval and extension
//! prompts, posted under the agent's account, and the wait on them, which
//! has no timeout and which a person's stop cancels.

use super::*;
use crate::approvals::prompt::{AskedBy, Provenance, Requester};

impl Turn<'_> {
    /// The framework-authored line's facts (§3.7): this action's place in
    /// the budget as it stands (extensions included) and who the work
    /// descends from, all from the turn record.
    async fn provenance(&self) -> Provenance {
        let turn = self.id.clone();
        let origin = self
            .services
            .store
            .call(move |s| s.origin_request(&turn))
            .await
            .ok()
            .flatten();
        // Agent mentions are stripped from prompts (§4.5): a quoted @name
        // would address that agent from the prompt.
        let strip = |words: &str| {
            crate::context::window::strip_mentions_of_agents(words, &self.services.display_names)
        };
        let asker = asker(&self.answers, self.start.answered.as_deref());
        let announced = match asker {
            Some(post) if post.author_kind == crate::store::AuthorKind::SystemBot => {
                let id = post.id.clone();
                self.services
                    .store
                    .call(move |s| s.trigger_announced_by(&id))
                    .await
                    .ok()
                    .flatten()
            }
            _ => None,
        };
        let asked_by = asker.map(|post| match post.author_kind {
            crate::store::AuthorKind::SystemBot => match &announced {
                Some(trigger) => AskedBy::Trigger {
                    what: crate::triggers::announce::provenance(trigger),
                    schedule: trigger.source == crate::store::TriggerSource::Schedule,
                },
                None => AskedBy::SystemBot,
            },
            crate::store::AuthorKind::Agent => AskedBy::Colleague {
                display_name: self.services.display_name(&post.author_name).to_string(),
                person: origin.map(|(username, words)| Requester {
                    username,
                    words: strip(&words),
                }),
            },
            _ => AskedBy::Person {
                username: post.author_name.clone(),
                words: strip(&post.message),
            },
        });
        Provenance {
            action: self.attempts,
            budget: self.allowance,
            asked_by,
        }
    }

    /// Parks the turn on a person's decision (§3.7): the prompt under the
    /// agent's account, the status post's head saying since when, and no
    /// timeout.
    pub(super) async fn approval(&mut self, planned: &calls::Planned) -> Result<Asked, Exit> {
        let Ok((tool, value, _)) = &planned.resolved else {
            return Err(Exit::Store(
                "an approval for a call that did not resolve".into(),
            ));
        };
        let arguments = serde_json::to_string_pretty(value).unwrap_or_default();
        // A plugin decides what its prompt shows (§3.14), and so does a
        // framework worker that renders its own payload (a mail send shows
        // every recipient, the subject and the whole body, §3.13); where it
        // cannot say, the person still reads the exact arguments, and is
        // told why.
        let renders = self
            .services
            .registry
            .toolset(&tool.namespace)
            .is_some_and(|t| {
                t.host == crate::tools::Host::Plugin
                    || crate::tools::served::renders_payload(&t.host)
            });
        let rendering = if renders {
            let scope = CallScope {
                services: self.services,
                seat: self.seat,
                turn_id: &self.id,
                channel: &self.channel_handle,
                unit: self.served_unit.as_deref(),
                channel_id: &self.start.channel_id,
            };
            Some(calls::render(&scope, &planned.call, tool, value).await)
        } else {
            None
        };
        let (payload, form, unrendered) = match rendering {
            Some(calls::Rendering::Rendered { payload, command }) => (
                payload,
                if command {
                    prompt::PayloadForm::Command
                } else {
                    prompt::PayloadForm::Rendered
                },
                None,
            ),
            Some(calls::Rendering::Unavailable(why)) => {
                (arguments, prompt::PayloadForm::Arguments, Some(why))
            }
            // The worker found the call wrong before anyone was asked (an
            // address that does not parse): the model reads why, and no
            // prompt is posted (§3.7).
            Some(calls::Rendering::Refused(text)) => {
                return Ok(Asked::Unshowable {
                    text,
                    reason: "refused before the approval prompt".into(),
                });
            }
            None => (arguments, prompt::PayloadForm::Arguments, None),
        };
        let tool = tool.to_string();
        let facts = prompt::PromptFacts {
            tool: &tool,
            line: self.provenance().await,
            // A person's reason, quoted in the agent's own post, addresses
            // no agent (§4.5).
            earlier_denial: self.reasoned_denials.get(&tool).map(|(by, reason)| {
                (
                    by.clone(),
                    crate::context::window::strip_mentions_of_agents(
                        reason,
                        &self.services.display_names,
                    ),
                )
            }),
            payload: &payload,
            form,
            unrendered: unrendered.as_deref(),
        };
        let limit = self.services.post_limit.read_now().await;
        let file = format!("{}-payload.{}", tool.replace("::", "-"), form.extension());
        // Over the post limit the payload is attached whole beside a bounded
        // prefix, or, for a tool never cut (a command), refused (§3.7).
        let (text, attachment) = match prompt::render_bounded(&facts, limit, &file) {
            prompt::Bounded::Whole(text) => (text, None),
            prompt::Bounded::Attached(text) => (text, Some((file, payload.clone().into_bytes()))),
            unshowable => {
                return Ok(Asked::Unshowable {
                    text: format!(
                        "The call did not run: its payload is {} characters, too long to show a person in one approval prompt (a post holds at most {limit}){}.",
                        payload.chars().count(),
                        if unshowable == prompt::Bounded::NeverCut {
                            "; a command is never cut or attached. Split the work into shorter commands"
                        } else {
                            ""
                        }
                    ),
                    reason: "too long to show a person".into(),
                });
            }
        };
        self.ask_person(Asking {
            kind: "approval",
            tool: Some(tool),
            call_id: &planned.call.id,
            text,
            choices: Vec::new(),
            attachment,
        })
        .await
        .map(Asked::Decided)
    }

    /// Parks the turn on a person's answer (§3.7a): the agent's words lead,
    /// the line names (and so tags) the person the work descends from, and
    /// the offered answers are buttons beside free text.
    pub(super) async fn question(&mut self, planned: &calls::Planned) -> Result<Asked, Exit> {
        let Ok((_, value, _)) = &planned.resolved else {
            return Err(Exit::Store(
                "a question for a call that did not resolve".into(),
            ));
        };
        let question = value
            .get("question")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default();
        let question = crate::context::window::strip_mentions_of_agents(
            question,
            &self.services.display_names,
        );
        let choices: Vec<String> = value
            .get("answers")
            .and_then(serde_json::Value::as_array)
            .map(|answers| {
                answers
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let lead = crate::context::window::strip_mentions_of_agents(
            &self.beside_calls,
            &self.services.display_names,
        );
        let text = crate::approvals::question::render(&crate::approvals::question::QuestionFacts {
            lead: Some(&lead),
            line: self.provenance().await,
            question: &question,
        });
        let limit = self.services.post_limit.read_now().await;
        if text.chars().count() > limit {
            return Ok(Asked::Unshowable {
                text: format!(
                    "The question was not asked: with your words beside it, it is {} characters, and a post holds at most {limit}. Ask more briefly.",
                    text.chars().count()
                ),
                reason: "too long to show a person".into(),
            });
        }
        self.ask_person(Asking {
            kind: "ask",
            tool: Some(planned.tool_name()),
            call_id: &planned.call.id,
            text,
            choices,
            attachment: None,
        })
        .await
        .map(Asked::Decided)
    }

    /// Posts a prompt under the agent's account and parks the turn on it
    /// until a person decides (§3.7, §5.3): no timeout; a stop cancels it.
    async fn ask_person(&mut self, asking: Asking<'_>) -> Result<Decided, Exit> {
        // A turn that would die at its next completion never parks a person
        // first (§5.1, §5.3): the context is relieved as that completion
        // would relieve it, and a turn still over its ceiling ends here.
        if let Some(exhausted) = self.relieve_pressure() {
            return Err(exhausted);
        }
        let id = uuid::Uuid::now_v7().to_string();
        let record = NewDecision {
            id: id.clone(),
            turn_id: self.id.clone(),
            call_id: asking.call_id.to_string(),
            agent: self.start.agent.clone(),
            channel_id: self.start.channel_id.clone(),
            kind: asking.kind.into(),
            tool: asking.tool,
            payload: asking.text.clone(),
            choices: asking.choices.clone(),
            requested_at: chrono::Utc::now().timestamp_millis(),
        };
        let text = asking.text;
        self.services
            .store
            .call(move |s| s.open_decision(&record))
            .await
            .map_err(|e| Exit::Store(e.to_string()))?;
        // Parked before the prompt exists, so the fastest click finds it.
        let waiting = self.services.parked.park(&id);
        let url = format!(
            "{}{}",
            self.services.callback_url,
            crate::approvals::DECISION_ROUTE
        );
        let buttons = if asking.kind == "ask" {
            crate::approvals::question::attachments(
                &url,
                &id,
                self.services.decision_key.expose(),
                &asking.choices,
            )
        } else {
            prompt::attachments(&url, &id, self.services.decision_key.expose())
        };
        let mut post = framework_post(
            self.start.channel_id.clone(),
            text,
            "prompt",
            Some(&self.id),
        );
        post.props.insert("attachments".into(), buttons);
        post.props.insert(
            crate::chat::directory::DECISION_PROP.into(),
            id.clone().into(),
        );
        if let Some((name, bytes)) = &asking.attachment {
            let uploaded = self
                .seat
                .rest
                .upload_file(&self.start.channel_id, name, bytes)
                .await
                .map_err(|e| Exit::Delivery(e.to_string()))?;
            post.file_ids = vec![uploaded.id];
        }
        // The status post says the turn waits before the prompt appears, so
        // the channel reads in the order things happened (§8.1).
        let since = chrono::Utc::now().with_timezone(&self.services.timezone);
        let waits_on = if asking.kind == "ask" {
            "❓ _waiting on an answer since"
        } else {
            "🔐 _waiting on a decision since"
        };
        let head = format!("{waits_on} {}_", since.format("%H:%M %Z"));
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
        self.ask_person(Asking {
            kind: "extension",
            tool: None,
            call_id: &call,
            text,
            choices: Vec::new(),
            attachment: None,
        })
        .await
    }

    /// A stop cancels a pending prompt without counting a denial (§7.5):
    /// recorded as cancelled, rewritten without buttons. Where a person's
    /// decision was recorded first (a click racing the stop), the record
    /// keeps it and the prompt says both: what they decided, and that the
    /// stop ended the turn before the call ran.
    pub(super) async fn cancel_prompt(&self, approval: &str, halt: &Halt) {
        let (id, by) = (approval.to_string(), halt.by.clone());
        let now = chrono::Utc::now().timestamp_millis();
        let record = self
            .services
            .store
            .call(move |s| {
                let cancelled = s.decide(&id, "cancelled", &by, None, now)?;
                Ok((cancelled, s.decision(&id)?))
            })
            .await;
        if let Ok((cancelled, Some(decision))) = record
            && let Some(post) = &decision.prompt_post_id
        {
            let how = if halt.kill { "killed" } else { "stopped" };
            let line = match (cancelled, &decision.outcome, &decision.decided_by) {
                (false, Some(outcome), Some(decider)) => format!(
                    "✋ {} by @{decider}, but @{} {how} the turn before anything ran.",
                    crate::config::resolved::capitalised(&outcome.replace('_', " ")),
                    halt.by
                ),
                _ => format!("✋ Cancelled: @{} {how} the turn.", halt.by),
            };
            let text = prompt::terminal(&decision.payload, &line);
            if let Err(error) = self.seat.rest.replace_post(post, &text, json!({})).await {
                warn!(%error, "could not rewrite the cancelled prompt");
            }
        }
    }
}

/// A prompt to post and park on.
struct Asking<'a> {
    /// `approval`, `extension` or `ask`.
    kind: &'static str,
    tool: Option<String>,
    call_id: &'a str,
    text: String,
    /// A question's offered answers.
    choices: Vec<String>,
    /// A file to attach: a payload too long to show whole (§3.7).
    attachment: Option<(String, Vec<u8>)>,
}

/// What asking a person came to.
pub(super) enum Asked {
    Decided(Decided),
    /// The call is refused before any person is asked, with this text,
    /// which the model reads (§7.2): its payload cannot be shown a person,
    /// or the toolset found its arguments wrong while rendering it.
    Unshowable {
        text: String,
        reason: String,
    },
}

/// The call whose prompt could not be asked, or whose wait a person's stop
/// ended (§7.5: cancelled, not denied).
pub(super) fn unasked(planned: calls::Planned, exit: &mut Option<Exit>, end: Exit) -> Executed {
    let outcome = match &end {
        Exit::Halted(halt) => Outcome::Cancelled {
            by: halt.by.clone(),
        },
        Exit::CeilingExceeded(_) => Outcome::NotRun {
            why: "not run: the context is over its ceiling, so no person was asked".into(),
        },
        _ => Outcome::NotRun {
            why: "not run: the person could not be asked".into(),
        },
    };
    exit.get_or_insert(end);
    planned.unrun(outcome)
}

/// A question's answer as the call's result (§3.7a).
pub(super) fn answered(planned: calls::Planned, by: &str, answer: &str) -> Executed {
    let mut executed = planned.unrun(Outcome::Ran {
        text: format!("@{by} answered: {answer}"),
        replay_line: None,
        content_key: None,
        note: Some(format!("answered by @{by}")),
    });
    executed.summary = format!("{} — asked a person", executed.summary);
    executed
}

/// The post whose asking the approval line quotes (§3.7): the one the turn
/// answers (§5.2), or its author's newest fragment folded in after it
/// (§4.4); never simply the last a drain took. `answers` is oldest first.
fn asker<'p>(answers: &'p [ObservedPost], answered: Option<&str>) -> Option<&'p ObservedPost> {
    let Some(answered) = answered.and_then(|id| answers.iter().find(|p| p.id == id)) else {
        return answers.last();
    };
    answers
        .iter()
        .rev()
        .find(|p| p.author_name == answered.author_name && p.created_at >= answered.created_at)
        .or(Some(answered))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuthorKind, ObservedVia, PostRole};

    fn post(id: &str, author: &str, kind: AuthorKind, at: Millis) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c1".into(),
            author_id: format!("u-{author}"),
            author_name: author.into(),
            author_kind: kind,
            created_at: at,
            message: id.into(),
            props: None,
            role: PostRole::Post,
            turn_id: None,
            pinned: false,
            observed_at: at,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        }
    }

    #[test]
    fn s3_7_the_line_quotes_the_post_the_turn_answers_not_the_last_drained() {
        // A drain answers Ana's newest post (§5.2); a colleague's hand-off
        // queued after it is taken too, and is not who asked.
        let drained = [
            post("bo-1", "bo", AuthorKind::Person, 1),
            post("ana-1", "ana", AuthorKind::Person, 2),
            post("theo-1", "theo", AuthorKind::Agent, 3),
        ];
        assert_eq!(
            asker(&drained, Some("ana-1")).map(|p| p.id.as_str()),
            Some("ana-1")
        );
        // A fragment Ana folded in after it is her newest word (§4.4).
        let folded = [
            post("ana-1", "ana", AuthorKind::Person, 1),
            post("ana-2", "ana", AuthorKind::Person, 2),
        ];
        assert_eq!(
            asker(&folded, Some("ana-1")).map(|p| p.id.as_str()),
            Some("ana-2")
        );
        assert_eq!(asker(&drained, None).map(|p| p.id.as_str()), Some("theo-1"));
    }
}
