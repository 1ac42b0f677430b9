//! Where a worker lets a call through (ARCHITECTURE §4): every admitted
//! call leaves its line, even one dropped without a result.

use std::collections::BTreeSet;

use collegium_proto::toolset::v1::{
    Call, DescribeRequest, InvokeRequest, Success, ToolResult, tool_result,
};
use collegium_worker_kit::admission::{Admission, now_ms};
use collegium_worker_kit::audit::{AuditLog, verify};
use collegium_worker_kit::grant::{GrantSigner, GrantVerifier};
use serde_json::Value;

fn admission(log: &std::path::Path, signer: &GrantSigner) -> Admission {
    let admission = Admission::new(
        "fixture",
        GrantVerifier::new("fixture", BTreeSet::from(["read".into()]), BTreeSet::new()),
        AuditLog::open(log, "fixture").expect("log"),
    );
    admission
        .handshake(&DescribeRequest {
            protocol_version: collegium_proto::PROTOCOL_VERSION,
            boot_id: signer.boot_id().into(),
            grant_public_key: signer.public_key().to_vec(),
        })
        .expect("handshake");
    admission
}

fn request(signer: &GrantSigner, id: &str) -> InvokeRequest {
    let call = Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: id.into(),
        tool: "read".into(),
        arguments_json: b"{}".to_vec(),
        ..Call::default()
    };
    let grant = signer.sign("fixture", &call, "", now_ms());
    InvokeRequest {
        call: Some(call),
        grant: Some(grant),
    }
}

fn outcomes(log: &std::path::Path) -> Vec<(String, String)> {
    std::fs::read_to_string(log)
        .expect("log")
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("json");
            (
                v["call"].as_str().unwrap_or_default().to_string(),
                v["outcome"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn arch4_a_closed_call_is_logged_with_its_outcome_and_anchored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let signer = GrantSigner::generate("boot-1");
    let admission = admission(&log, &signer);
    let admitted = admission.admit(&request(&signer, "c1")).expect("admitted");
    let mut result = ToolResult {
        outcome: Some(tool_result::Outcome::Success(Success::default())),
        ..ToolResult::default()
    };
    admission.close(admitted, &mut result).expect("closed");
    assert_eq!(result.audit.expect("anchor").seq, 1);
    assert_eq!(outcomes(&log), [("c1".to_string(), "success".to_string())]);
}

#[test]
fn arch4_an_admitted_call_dropped_without_a_result_is_logged_as_abandoned() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("audit.jsonl");
    let signer = GrantSigner::generate("boot-1");
    let admission = admission(&log, &signer);
    let admitted = admission.admit(&request(&signer, "c1")).expect("admitted");
    drop(admitted);
    assert_eq!(
        outcomes(&log),
        [("c1".to_string(), "abandoned".to_string())]
    );
    assert_eq!(verify(&log, None).expect("chained").lines, 1);
}
