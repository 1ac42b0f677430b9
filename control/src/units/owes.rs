//! Whether a turn owes a reply, or a unit a move (§3.15). A turn may end
//! at its unit post with no reply unless it owes one: it owes one where a
//! post it answers (§5.2) is a person's, a trigger's announcement, or a
//! plain post of a colleague other than the one its unit post addressed,
//! or where a person steered it. It owes a unit a move where it still
//! holds in assigned a unit it was working, or a report of its own unit
//! awaiting its verdict is among the posts it answers — the two sides the
//! silent-reply reminder speaks to. Only the runner knows what the turn
//! answers, so the runner asks; this module says whether, and in what
//! words.

use std::collections::BTreeSet;

use crate::services::{Seat, Services};
use crate::store::{AuthorKind, ObservedPost, PostRole};

use super::exhausted::working_now;
use super::reminder::awaiting_verdict;

/// The runner's note on a unit post's result where the turn owes no reply
/// and no unit a move (§3.15).
pub const NO_REPLY_OWED: &str = "[Runner] This turn owes no reply and no unit a move: it may end at this post, and anything more you write here is posted to the channel. A tasks::assign or tasks::report with endTurn: true ends the turn at its post without a reply.";

/// Why the turn owes a reply, if it does: the first of the posts it
/// answers that needs one, or the person who steered it. `addressed` holds
/// the colleagues the turn's unit posts addressed; `name` gives a display
/// name for a username.
pub fn reply_owed(
    answers: &[ObservedPost],
    addressed: &BTreeSet<String>,
    steered_by: Option<&str>,
    name: impl Fn(&str) -> String,
) -> Option<String> {
    if let Some(person) = steered_by {
        return Some(format!("{} steered it", name(person)));
    }
    answers.iter().find_map(|post| match post.author_kind {
        AuthorKind::Person => Some(format!(
            "it answers a post of {} (post {})",
            name(&post.author_name),
            post.id
        )),
        // The system bot addresses an agent only in a trigger's
        // announcement (§4.2): its notices mention no agent.
        AuthorKind::SystemBot => Some(format!(
            "it answers a trigger's announcement (post {})",
            post.id
        )),
        AuthorKind::Agent
            if post.role != PostRole::UnitPost && !addressed.contains(&post.author_name) =>
        {
            Some(format!(
                "it answers a plain post of {} (post {}), a colleague no unit post of this turn addressed",
                name(&post.author_name),
                post.id
            ))
        }
        _ => None,
    })
}

/// The colleagues the turn's unit posts addressed: the assignee of each
/// unit it assigned and the creator of each unit it reported on (§3.15).
pub async fn addressed_by(services: &Services, turn_id: &str) -> BTreeSet<String> {
    let turn = turn_id.to_string();
    let read = services
        .store
        .call(move |s| Ok((s.units_assigned_by(&turn)?, s.units_reported_by(&turn)?)))
        .await;
    match read {
        Ok((assigned, reported)) => assigned
            .into_iter()
            .map(|u| u.assignee)
            .chain(reported.into_iter().map(|u| u.creator))
            .collect(),
        Err(error) => {
            tracing::warn!(%error, turn = %turn_id, "could not read the turn's unit posts");
            BTreeSet::new()
        }
    }
}

/// Why the turn owes a unit a move, if it does: a unit it was working still
/// assigned to it, or a report of its own unit awaiting its verdict among
/// the posts it answers (§3.15).
pub async fn move_owed(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answered: &[String],
) -> Option<String> {
    // A store that cannot be read owes nothing here: the gate then errs
    // towards letting the reminder and the reply rules run as usual.
    if let Some(unit) = working_now(services, seat, channel_id, turn_id, answered)
        .await
        .ok()
        .and_then(|units| units.into_iter().next())
    {
        return Some(format!(
            "you still hold {} from {} in assigned: report it with tasks::report",
            unit.label(),
            services.display_name(&unit.creator)
        ));
    }
    let unit = awaiting_verdict(services, seat, channel_id, answered).await?;
    Some(format!(
        "{}'s report on {} awaits your verdict: judge it with tasks::close, or continue it with tasks::assign following it",
        services.display_name(&unit.assignee),
        unit.label()
    ))
}

/// What the turn owes, in words the model reads, or nothing.
pub async fn owed(
    services: &Services,
    seat: &Seat,
    channel_id: &str,
    turn_id: &str,
    answers: &[ObservedPost],
    steered_by: Option<&str>,
) -> Option<String> {
    let addressed = addressed_by(services, turn_id).await;
    if let Some(why) = reply_owed(answers, &addressed, steered_by, |u| {
        services.display_name(u).to_string()
    }) {
        return Some(format!("this turn owes a reply: {why}"));
    }
    let answered: Vec<String> = answers.iter().map(|p| p.id.clone()).collect();
    move_owed(services, seat, channel_id, turn_id, &answered)
        .await
        .map(|why| format!("this turn owes a unit a move: {why}"))
}

/// How the other calls of a completion came out, for the `endTurn` gate.
#[derive(Debug, Default, Clone)]
pub struct Completion {
    /// The call that asked to end the turn at its post, where one did and
    /// its post went up.
    pub asked: Option<String>,
    /// A call of the completion that was refused or failed, by tool and how.
    pub troubled: Option<(String, String)>,
    /// Whether a call of the completion waited on a person: an approval, a
    /// question, or a budget extension.
    pub waited_on_person: bool,
}

/// The `endTurn` gate (§3.15): granted once every other call of the
/// completion returned with neither a refusal nor a failure and none
/// waited on a person, no steer reached the turn since, and the turn owes
/// no reply and no unit a move. Otherwise the reason the model reads.
pub fn gate(
    completion: &Completion,
    steer_since: Option<&str>,
    owed: Option<&str>,
) -> Result<(), String> {
    let why = if let Some((tool, how)) = &completion.troubled {
        format!("{tool} in the same completion was {how}; read its result before ending")
    } else if completion.waited_on_person {
        "a call in the same completion waited on a person, whose answer may need one from you"
            .to_string()
    } else if let Some(person) = steer_since {
        format!("{person} steered this turn since; answer the steer")
    } else if let Some(owed) = owed {
        owed.to_string()
    } else {
        return Ok(());
    };
    Err(format!(
        "[Runner] The turn was not ended at the unit post (endTurn was refused): {why}. The post stands; the turn goes on, so write what it owes, or call again."
    ))
}

/// Whether a call's arguments ask to end the turn at its post.
pub fn asks_to_end(arguments: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| v.get("endTurn").and_then(serde_json::Value::as_bool))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObservedVia;

    fn post(id: &str, author: &str, kind: AuthorKind, role: PostRole) -> ObservedPost {
        ObservedPost {
            id: id.into(),
            channel_id: "c1".into(),
            author_id: format!("id-{author}"),
            author_name: author.into(),
            author_kind: kind,
            created_at: 1,
            message: "hello".into(),
            props: None,
            role,
            turn_id: None,
            pinned: false,
            observed_at: 1,
            observed_via: ObservedVia::Live,
            files: Vec::new(),
        }
    }

    fn name(u: &str) -> String {
        match u {
            "mira" => "Mira".into(),
            other => other.into(),
        }
    }

    fn owes(answers: &[ObservedPost], addressed: &[&str], steered: Option<&str>) -> bool {
        let addressed: BTreeSet<String> = addressed.iter().map(|s| s.to_string()).collect();
        reply_owed(answers, &addressed, steered, name).is_some()
    }

    #[test]
    fn s3_15_a_persons_post_or_a_triggers_announcement_owes_a_reply() {
        let person = post("p1", "ana", AuthorKind::Person, PostRole::Post);
        let trigger = post("p2", "system", AuthorKind::SystemBot, PostRole::Post);
        assert!(owes(&[person], &[], None));
        let why = reply_owed(&[trigger], &BTreeSet::new(), None, name).expect("owed");
        assert!(why.contains("trigger's announcement"), "{why}");
    }

    #[test]
    fn s3_15_a_unit_post_or_a_plain_post_of_the_addressed_colleague_owes_none() {
        let unit_post = post("p1", "mira", AuthorKind::Agent, PostRole::UnitPost);
        let plain = post("p2", "mira", AuthorKind::Agent, PostRole::Post);
        assert!(!owes(std::slice::from_ref(&unit_post), &[], None));
        assert!(!owes(&[unit_post, plain.clone()], &["mira"], None));
        // A plain post of a colleague the unit post did not address owes.
        let why = reply_owed(&[plain], &BTreeSet::new(), None, name).expect("owed");
        assert!(why.contains("plain post of Mira"), "{why}");
    }

    #[test]
    fn s3_15_a_person_who_steered_the_turn_is_owed_a_reply() {
        assert!(owes(&[], &[], Some("ana")));
        assert!(!owes(&[], &[], None));
    }

    #[test]
    fn s3_15_end_turn_is_granted_only_on_every_condition() {
        let clean = Completion {
            asked: Some("call-1".into()),
            ..Completion::default()
        };
        assert_eq!(gate(&clean, None, None), Ok(()));
        let troubled = Completion {
            troubled: Some(("memory::write".into(), "refused".into())),
            ..clean.clone()
        };
        let why = gate(&troubled, None, None).expect_err("refused");
        assert!(
            why.contains("memory::write in the same completion was refused"),
            "{why}"
        );
        let waited = Completion {
            waited_on_person: true,
            ..clean.clone()
        };
        assert!(
            gate(&waited, None, None)
                .expect_err("refused")
                .contains("waited on a person")
        );
        assert!(
            gate(&clean, Some("Ana"), None)
                .expect_err("refused")
                .contains("Ana steered")
        );
        let why = gate(&clean, None, Some("this turn owes a reply: x")).expect_err("refused");
        assert!(
            why.contains("owes a reply") && why.contains("turn goes on"),
            "{why}"
        );
    }

    #[test]
    fn s3_15_end_turn_is_asked_only_by_a_true_flag() {
        assert!(asks_to_end(r#"{"unit":"U-1","endTurn":true}"#));
        assert!(!asks_to_end(r#"{"unit":"U-1","endTurn":false}"#));
        assert!(!asks_to_end(r#"{"unit":"U-1"}"#));
        assert!(!asks_to_end("not json"));
    }
}
