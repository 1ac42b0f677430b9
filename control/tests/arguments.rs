//! A call's arguments against its tool's schema (§7.2).

use collegium_control::tools::arguments::{ArgumentError, accept, provider_schema};
use serde_json::json;

fn schema() -> serde_json::Value {
    json!({
        "type": "object",
        "required": ["to", "body"],
        "properties": {
            "to": {"type": "string", "description": "The recipient."},
            "body": {"type": "string", "maxLength": 20},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "maxLength": {"type": "integer"}
        }
    })
}

fn refused(arguments: &str) -> Vec<String> {
    match accept(&schema(), arguments) {
        Err(ArgumentError::Refused(problems)) => problems,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn s7_2_arguments_that_fit_are_accepted() {
    let accepted = accept(&schema(), r#"{"to": "ana", "body": "hello"}"#).expect("fits");
    assert_eq!(accepted.value, json!({"to": "ana", "body": "hello"}));
    assert!(accepted.ignored.is_empty());
}

#[test]
fn s7_2_an_undeclared_argument_is_ignored_and_named() {
    let accepted =
        accept(&schema(), r#"{"to": "ana", "body": "hi", "cc": "bo"}"#).expect("accepted");
    assert_eq!(accepted.value, json!({"to": "ana", "body": "hi"}));
    assert_eq!(accepted.ignored, ["cc"]);
}

#[test]
fn s7_2_a_schema_that_refuses_undeclared_keys_refuses_them() {
    let closed = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {"title": {"type": "string"}}
    });
    match accept(&closed, r#"{"title": "x", "colour": "red"}"#) {
        Err(ArgumentError::Refused(problems)) => {
            assert_eq!(problems, ["`colour` is not accepted by this tool"]);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn s7_2_a_refused_size_states_the_size_received() {
    assert_eq!(
        refused(&format!(r#"{{"to": "ana", "body": "{}"}}"#, "é".repeat(25))),
        ["`body` is 25 characters long; at most 20 are accepted"]
    );
    assert_eq!(
        refused(r#"{"to": "ana", "body": "x", "tags": ["a", "b", "c"]}"#),
        ["`tags` has 3 items; at most 2 are accepted"]
    );
}

#[test]
fn s7_2_every_refusal_is_named() {
    let problems = refused(r#"{"to": 7}"#);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(
        problems.contains(&"`body` is required".to_string()),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with("`to`: ")),
        "{problems:?}"
    );
}

#[test]
fn s7_1_text_that_is_not_json_is_unparseable_and_never_echoed() {
    assert_eq!(
        accept(&schema(), "{to: ana"),
        Err(ArgumentError::Unparseable)
    );
    assert_eq!(
        ArgumentError::Unparseable.to_string(),
        "the arguments are not valid JSON"
    );
}

#[test]
fn s7_2_size_bounds_reach_the_provider_as_words_not_as_schema_bounds() {
    let sent = provider_schema(&schema());
    let text = sent.to_string();
    assert!(!text.contains("\"maxLength\":20"), "{text}");
    assert!(!text.contains("maxItems"), "{text}");
    assert_eq!(
        sent["properties"]["body"]["description"],
        "At most 20 characters."
    );
    assert_eq!(
        sent["properties"]["tags"]["description"],
        "At most 2 items."
    );
    assert_eq!(sent["properties"]["to"]["description"], "The recipient.");
    assert_eq!(
        sent["properties"]["maxLength"],
        json!({"type": "integer"}),
        "a property named like a bound is a property"
    );
}
