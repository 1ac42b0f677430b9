//! The decision route's authentication (§6.4): Mattermost carries no
//! signature on a click, so each button carries an HMAC over what it does —
//! its approval or question, its action, and for an offered answer its index
//! ([`button`]) — keyed with Mattermost's secret (the `/collegium` command's
//! token). The secret itself never appears in a post; a signature answers one
//! button of one prompt and no other, so the signature a client saw on "Deny
//! with reason" cannot be replayed as "Approve".

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// What one button's signature covers. Prompt ids, actions and indexes
/// never hold the separator, so two buttons never share a subject.
pub fn button(approval: &str, action: &str, choice: Option<usize>) -> String {
    let choice = choice.map(|c| c.to_string()).unwrap_or_default();
    format!("{approval}\u{1f}{action}\u{1f}{choice}")
}

/// The hex signature of `approval` under `key`.
pub fn sign(key: &str, approval: &str) -> String {
    let mut mac =
        HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(approval.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether `signature` is `approval`'s under `key`, compared in constant time.
pub fn verify(key: &str, approval: &str, signature: &str) -> bool {
    let Some(bytes) = hex(signature) else {
        return false;
    };
    let mut mac =
        HmacSha256::new_from_slice(key.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(approval.as_bytes());
    mac.verify_slice(&bytes).is_ok()
}

fn hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_4_a_signature_answers_one_approval_under_one_key() {
        let signature = sign("mattermost-secret", "approval-1");
        assert!(verify("mattermost-secret", "approval-1", &signature));
        assert!(
            !verify("mattermost-secret", "approval-2", &signature),
            "another approval"
        );
        assert!(
            !verify("another-secret", "approval-1", &signature),
            "another key"
        );
        assert!(!verify("mattermost-secret", "approval-1", "zz"), "not hex");
        assert!(!signature.contains("mattermost-secret"));
    }

    #[test]
    fn s6_4_a_buttons_signature_covers_its_action_and_its_answer() {
        let key = "mattermost-secret";
        let reason = sign(key, &button("approval-1", "reason", None));
        assert!(verify(key, &button("approval-1", "reason", None), &reason));
        assert!(
            !verify(key, &button("approval-1", "approve", None), &reason),
            "Deny with reason's signature replayed as Approve"
        );
        let first = sign(key, &button("q1", "choose", Some(0)));
        assert!(
            !verify(key, &button("q1", "choose", Some(1)), &first),
            "one offered answer's signature replayed as another's"
        );
    }
}
