//! Signed dispatch grants (ARCHITECTURE §4): the worker acts only on a grant
//! the daemon signed this boot, for these exact argument bytes, this call
//! id once, before it expires, for a tool it serves.

use std::collections::BTreeSet;

use collegium_proto::toolset::v1::Call;
use collegium_worker_kit::grant::{GrantRefusal, GrantSigner, GrantVerifier, LIFETIME_MS};

const NOW: u64 = 1_800_000_000_000;

fn call(id: &str, tool: &str, arguments: &str) -> Call {
    Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: id.into(),
        tool: tool.into(),
        arguments_json: arguments.as_bytes().to_vec(),
        ..Call::default()
    }
}

fn verifier(signer: &GrantSigner) -> GrantVerifier {
    let mut verifier = GrantVerifier::new(
        "fixture",
        BTreeSet::from(["read".to_string(), "write".to_string()]),
        BTreeSet::from(["write".to_string()]),
    );
    verifier
        .accept_key(signer.boot_id(), &signer.public_key())
        .expect("key");
    verifier
}

#[test]
fn arch4_a_good_grant_is_accepted_once() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let c = call("c1", "write", r#"{"path":"a.txt"}"#);
    let grant = signer.sign("fixture", &c, "decision-9", NOW);
    let claims = verifier.check(Some(&grant), &c, NOW + 5).expect("accepted");
    assert_eq!(claims.decision_id, "decision-9");
    assert_eq!(claims.tool, "fixture::write");
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW + 6),
        Err(GrantRefusal::Replayed("c1".into()))
    );
}

#[test]
fn arch4_a_signature_from_another_key_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let forger = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let c = call("c1", "read", "{}");
    let grant = forger.sign("fixture", &c, "", NOW);
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::BadSignature)
    );
}

#[test]
fn arch4_edited_claims_break_the_signature() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let c = call("c1", "read", "{}");
    let mut grant = signer.sign("fixture", &c, "", NOW);
    let last = grant.claims.len() - 1;
    grant.claims[last] ^= 1;
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::BadSignature)
    );
}

#[test]
fn arch4_one_changed_argument_byte_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let approved = call("c1", "write", r#"{"path":"a.txt"}"#);
    let grant = signer.sign("fixture", &approved, "decision-9", NOW);
    let sent = call("c1", "write", r#"{"path":"b.txt"}"#);
    assert_eq!(
        verifier.check(Some(&grant), &sent, NOW),
        Err(GrantRefusal::ArgumentsChanged)
    );
}

#[test]
fn arch4_an_expired_grant_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let c = call("c1", "read", "{}");
    let grant = signer.sign("fixture", &c, "", NOW);
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW + LIFETIME_MS + 7),
        Err(GrantRefusal::Expired { late_ms: 7 })
    );
}

#[test]
fn arch4_a_grant_for_another_call_tool_or_agent_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let granted = call("c1", "read", "{}");
    let grant = signer.sign("fixture", &granted, "", NOW);
    let mut other = granted.clone();
    other.call_id = "c2".into();
    assert!(matches!(
        verifier.check(Some(&grant), &other, NOW),
        Err(GrantRefusal::Mismatch { field: "call", .. })
    ));
    let mut other = granted.clone();
    other.tool = "write".into();
    assert!(matches!(
        verifier.check(Some(&grant), &other, NOW),
        Err(GrantRefusal::Mismatch { field: "tool", .. })
    ));
    let mut other = granted;
    other.agent = "theo".into();
    assert!(matches!(
        verifier.check(Some(&grant), &other, NOW),
        Err(GrantRefusal::Mismatch { field: "agent", .. })
    ));
}

#[test]
fn arch4_a_grant_of_an_earlier_boot_is_refused() {
    let old = GrantSigner::generate("boot-1");
    let new = GrantSigner::generate("boot-2");
    let mut verifier = verifier(&old);
    verifier
        .accept_key(new.boot_id(), &new.public_key())
        .expect("new key");
    let c = call("c1", "read", "{}");
    let grant = old.sign("fixture", &c, "", NOW);
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::BadSignature),
        "the old boot's key is gone"
    );
}

#[test]
fn arch4_a_tool_not_served_or_a_gated_tool_without_a_decision_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let mut verifier = verifier(&signer);
    let c = call("c1", "delete", "{}");
    let grant = signer.sign("fixture", &c, "d", NOW);
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::NotServed("fixture::delete".into()))
    );
    let c = call("c2", "write", "{}");
    let grant = signer.sign("fixture", &c, "", NOW);
    assert_eq!(
        verifier.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::NoDecision("fixture::write".into()))
    );
}

#[test]
fn arch4_no_grant_or_no_key_is_refused() {
    let signer = GrantSigner::generate("boot-1");
    let c = call("c1", "read", "{}");
    let mut keyless =
        GrantVerifier::new("fixture", BTreeSet::from(["read".into()]), BTreeSet::new());
    let grant = signer.sign("fixture", &c, "", NOW);
    assert_eq!(
        keyless.check(Some(&grant), &c, NOW),
        Err(GrantRefusal::NoKey)
    );
    let mut verifier = verifier(&signer);
    assert_eq!(verifier.check(None, &c, NOW), Err(GrantRefusal::Missing));
}
