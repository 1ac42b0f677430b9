//! The confirmation dialog that stands before a clear (§8.5), and what its
//! state signs (§6.4): a one-use nonce, the channel, the invoker and the
//! `--memories` flag, under the same key and HMAC as a decision's buttons
//! (`approvals::sign`). Mattermost fills a submission's `user_id` and
//! `channel_id` itself, so a state replayed by another person or in another
//! channel does not verify; the nonce settles once in the store, so a
//! replay, or a cancel dressed as a confirmation, changes nothing.

use mattermost_wire::model::Dialog;

use crate::approvals::sign;
use crate::store::Millis;

/// The dialog's callback id: what the route is answering.
pub const CALLBACK: &str = "collegium-clear";

/// How long a confirmation may stand open: longer than anyone reads two
/// sentences, short enough that a forgotten dialog does not clear a channel
/// that has moved on.
pub const LIFETIME_MS: Millis = 15 * 60 * 1000;

/// What the state's signature covers.
fn subject(nonce: &str, channel_id: &str, invoker_id: &str, memories: bool) -> String {
    format!(
        "clear\u{1f}{nonce}\u{1f}{channel_id}\u{1f}{invoker_id}\u{1f}{}",
        u8::from(memories)
    )
}

/// The dialog's state: `nonce.memories.signature`.
pub fn state(key: &str, nonce: &str, channel_id: &str, invoker_id: &str, memories: bool) -> String {
    let signature = sign::sign(key, &subject(nonce, channel_id, invoker_id, memories));
    format!("{nonce}.{}.{signature}", u8::from(memories))
}

/// The nonce and flag a state carries, if its signature holds for the
/// submitting person in the submitting channel.
pub fn verified(key: &str, state: &str, channel_id: &str, user_id: &str) -> Option<(String, bool)> {
    let mut parts = state.split('.');
    let (nonce, flag, signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let memories = match flag {
        "0" => false,
        "1" => true,
        _ => return None,
    };
    sign::verify(
        key,
        &subject(nonce, channel_id, user_id, memories),
        signature,
    )
    .then(|| (nonce.to_string(), memories))
}

/// The two sentences: what goes, and what stays (§8.5).
pub fn introduction(memories: bool) -> String {
    let memories_go = if memories {
        ", and the memories agents' turns here wrote"
    } else {
        ""
    };
    let memories_stay = if memories { "" } else { "memories, " };
    format!(
        "Every post in this channel, pinned ones too, is deleted from Mattermost, and every agent's record of it — trace events, approvals and questions, work units, queued posts and triggers already posted{memories_go} — is deleted from the store, for good. What stays is the accounting of turns (their cost and timing), files agents wrote, {memories_stay}plugin storage, mail, schedules and triggers still pending."
    )
}

/// The confirmation dialog.
pub fn dialog(state: String, memories: bool) -> Dialog {
    Dialog {
        callback_id: CALLBACK.into(),
        title: "Clear this channel?".into(),
        introduction_text: introduction(memories),
        elements: Vec::new(),
        submit_label: "Clear".into(),
        notify_on_cancel: true,
        state,
        ..Dialog::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_4_a_clear_state_answers_one_person_in_one_channel() {
        let state = state("k", "n1", "c1", "u1", true);
        assert_eq!(verified("k", &state, "c1", "u1"), Some(("n1".into(), true)));
        assert_eq!(verified("k", &state, "c2", "u1"), None, "another channel");
        assert_eq!(verified("k", &state, "c1", "u2"), None, "another person");
        assert_eq!(verified("other", &state, "c1", "u1"), None, "another key");
        let flipped = state.replacen(".1.", ".0.", 1);
        assert_eq!(
            verified("k", &flipped, "c1", "u1"),
            None,
            "the flag is signed"
        );
        assert_eq!(verified("k", "junk", "c1", "u1"), None);
    }

    #[test]
    fn s8_5_the_dialog_says_what_goes_and_what_stays_in_two_sentences() {
        for memories in [false, true] {
            let text = introduction(memories);
            assert_eq!(text.matches(". ").count() + 1, 2, "{text}");
            assert!(text.contains("deleted from Mattermost"));
            assert_eq!(text.contains("memories, plugin storage"), !memories);
        }
        assert!(dialog(String::new(), false).title.chars().count() <= 24);
    }
}
