//! A fuzz target for the trigger route's body (§6.4), run as a property
//! test so every build runs it: whatever bytes a sender posts, reading them
//! never panics, an item it accepts has every field it needs, and a refusal
//! says what is wrong rather than nothing.

use collegium_control::callbacks::trigger::parse;
use proptest::prelude::*;
use serde_json::{Map, Value};

fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<String>().prop_map(Value::String),
        "[a-z ]{0,12}".prop_map(Value::String),
        any::<i64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::Bool),
        Just(Value::Null),
        prop::collection::vec(any::<String>().prop_map(Value::String), 0..3).prop_map(Value::Array),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("agent".to_string()),
        Just("channel".to_string()),
        Just("sender".to_string()),
        Just("subject".to_string()),
        Just("reference".to_string()),
        Just("body".to_string()),
        "[a-z_]{1,8}",
    ]
}

fn object() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::btree_map(key(), field_value(), 0..8).prop_map(|fields| {
        Value::Object(fields.into_iter().collect::<Map<String, Value>>())
            .to_string()
            .into_bytes()
    })
}

fn checked(bytes: &[u8]) {
    match parse(bytes) {
        Ok(item) => {
            for value in [&item.agent, &item.channel, &item.sender, &item.subject] {
                assert!(!value.trim().is_empty(), "accepted an empty field");
            }
        }
        Err(why) => assert!(why.len() > 10, "a refusal says what is wrong: {why:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn s6_4_any_bytes_are_read_or_refused_with_a_reason(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        checked(&bytes);
    }

    #[test]
    fn s6_4_any_object_is_read_or_refused_naming_what_is_wrong(bytes in object()) {
        checked(&bytes);
        let value: Value = serde_json::from_slice(&bytes).expect("an object");
        let known = ["agent", "channel", "sender", "subject", "reference", "body"];
        let object = value.as_object().expect("an object");
        if let Err(why) = parse(&bytes) {
            let named = known.iter().chain(object.keys().map(String::as_str).collect::<Vec<_>>().iter())
                .any(|field| why.contains(&format!("`{field}`")));
            prop_assert!(named, "a refusal of an object names its field: {why}");
        }
    }
}
