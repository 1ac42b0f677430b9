//! A call's arguments through schema validation (§7.2,
//! control/src/tools/arguments.rs), against the parameter schema of every
//! tool this build declares (the selector byte picks one): arguments either
//! pass or are refused with a reason; what passed, sent again, passes as it
//! is with nothing left to ignore (the check is idempotent, so what a tool
//! runs with is exactly what was accepted). Any JSON the model sends is
//! also read as a schema by the provider rewrite, which must not panic.

use std::sync::OnceLock;

use collegium_control::tools::arguments::{ArgumentError, accept, provider_schema};
use collegium_control::tools::framework::declarations;
use serde_json::Value;

use crate::split;

fn schemas() -> &'static [(String, Value)] {
    static SCHEMAS: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    SCHEMAS.get_or_init(|| {
        declarations()
            .into_iter()
            .flat_map(|toolset| {
                let namespace = toolset.namespace.clone();
                toolset.tools.into_iter().filter_map(move |tool| {
                    tool.parameters
                        .map(|p| (format!("{namespace}::{}", tool.name), p))
                })
            })
            .collect()
    })
}

pub fn run(data: &[u8]) {
    let (pick, arguments) = split::selector(data);
    let schemas = schemas();
    assert!(!schemas.is_empty(), "the build declares no tool schema");
    let (tool, schema) = &schemas[usize::from(pick) % schemas.len()];
    let arguments = String::from_utf8_lossy(arguments);
    match accept(schema, &arguments) {
        Ok(accepted) => {
            let again = accept(schema, &accepted.value.to_string());
            match again {
                Ok(again) => {
                    assert_eq!(
                        again.value, accepted.value,
                        "{tool}: accepted twice differs"
                    );
                    assert!(
                        again.ignored.is_empty(),
                        "{tool}: accepted arguments still carry ignored keys {:?}",
                        again.ignored
                    );
                }
                Err(e) => panic!("{tool}: accepted arguments refused when sent again: {e}"),
            }
        }
        Err(ArgumentError::Unparseable) => {
            assert!(
                serde_json::from_str::<Value>(&arguments).is_err(),
                "{tool}: JSON called unparseable"
            );
        }
        Err(ArgumentError::Refused(reasons)) => {
            assert!(!reasons.is_empty(), "{tool}: refused without a reason");
        }
    }
    if let Ok(value) = serde_json::from_str::<Value>(&arguments) {
        let _ = provider_schema(&value);
    }
}
