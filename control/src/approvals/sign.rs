//! The decision route's authentication (§6.4): Mattermost carries no
//! signature on a click, so each approval's buttons carry an HMAC over the
//! approval id, keyed with Mattermost's secret (the `/collegium` command's
//! token). The secret itself never appears in a post; a signature answers one
//! approval and no other.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

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
}
