//! The one query grammar a collection answers beyond lookup by id (§3.14):
//! an AND of conditions over top-level scalar fields — equals, one of, or a
//! case-insensitive contains on a string field — with an optional limit,
//! typed from the collection's own schema. Anything else is a typed invalid
//! query. A pure function of the collection and the request (it is fuzzed):
//! what it returns are checked filters whose field paths are built only from
//! names the schema declares, and whose values the store binds.

use collegium_proto::storage::v1::{Condition, condition::Test};
use serde_json::Value;

use super::collections::{Collection, FieldType, ScalarKind};
use crate::store::{FilterTest, FilterValue, RecordFilter};

/// The most conditions one query may AND together.
pub const MAX_CONDITIONS: usize = 32;

/// The most values one `one of` may list.
pub const MAX_ONE_OF: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidQuery {
    #[error("`{field}` is not a declared field; conditions name one of: {}", declared.join(", "))]
    Undeclared {
        field: String,
        declared: Vec<String>,
    },
    #[error(
        "`{field}` reaches into a nested value, and conditions apply to top-level fields only; name one of: {}",
        declared.join(", ")
    )]
    Nested {
        field: String,
        declared: Vec<String>,
    },
    #[error(
        "`{field}` is not a scalar field (an object, an array, or a field with no scalar type); conditions test string, number, integer or boolean fields"
    )]
    NotScalar { field: String },
    #[error("the condition on `{field}` names no test; give equals, one of, or contains")]
    NoTest { field: String },
    #[error(
        "the value for `{field}` is not JSON ({detail}); send a JSON scalar such as \"text\", 3 or true"
    )]
    NotJson { field: String, detail: String },
    #[error(
        "`{field}` holds {expected}, and {value} is not one; compare it with a value of its type"
    )]
    WrongType {
        field: String,
        value: String,
        expected: String,
    },
    #[error(
        "`one of` for `{field}` is not a JSON array of scalars; send one, such as [\"a\", \"b\"]"
    )]
    NotAnArray { field: String },
    #[error("`one of` for `{field}` lists no value, which matches nothing; list at least one")]
    EmptyOneOf { field: String },
    #[error("`one of` for `{field}` lists {count} values; list at most {max}")]
    TooManyValues {
        field: String,
        count: usize,
        max: usize,
    },
    #[error(
        "contains applies to string fields only, and `{field}` holds {holds}; use equals or one of"
    )]
    ContainsOnNonString { field: String, holds: String },
    #[error("the query has {count} conditions; AND at most {max}")]
    TooManyConditions { count: usize, max: usize },
}

/// Checks `conditions` against `collection`'s declared fields and types,
/// returning the filters the store runs. `limit` passes through.
pub fn parse(
    collection: &Collection,
    conditions: &[Condition],
) -> Result<Vec<RecordFilter>, InvalidQuery> {
    if conditions.len() > MAX_CONDITIONS {
        return Err(InvalidQuery::TooManyConditions {
            count: conditions.len(),
            max: MAX_CONDITIONS,
        });
    }
    conditions
        .iter()
        .map(|condition| filter(collection, condition))
        .collect()
}

fn filter(collection: &Collection, condition: &Condition) -> Result<RecordFilter, InvalidQuery> {
    let field = condition.field.as_str();
    let kinds = match collection.field(field) {
        Some(FieldType::Scalar(kinds)) => kinds,
        Some(FieldType::NotScalar) => {
            return Err(InvalidQuery::NotScalar {
                field: field.to_owned(),
            });
        }
        None => {
            let declared = collection.field_names().map(str::to_owned).collect();
            return Err(if field.contains(['.', '[', '/']) {
                InvalidQuery::Nested {
                    field: field.to_owned(),
                    declared,
                }
            } else {
                InvalidQuery::Undeclared {
                    field: field.to_owned(),
                    declared,
                }
            });
        }
    };
    let test = match &condition.test {
        None => {
            return Err(InvalidQuery::NoTest {
                field: field.to_owned(),
            });
        }
        Some(Test::EqualsJson(text)) => {
            FilterTest::Equals(typed(field, kinds, &json(field, text)?)?)
        }
        Some(Test::OneOfJson(text)) => {
            let Value::Array(values) = json(field, text)? else {
                return Err(InvalidQuery::NotAnArray {
                    field: field.to_owned(),
                });
            };
            if values.is_empty() {
                return Err(InvalidQuery::EmptyOneOf {
                    field: field.to_owned(),
                });
            }
            if values.len() > MAX_ONE_OF {
                return Err(InvalidQuery::TooManyValues {
                    field: field.to_owned(),
                    count: values.len(),
                    max: MAX_ONE_OF,
                });
            }
            FilterTest::OneOf(
                values
                    .iter()
                    .map(|value| typed(field, kinds, value))
                    .collect::<Result<_, _>>()?,
            )
        }
        Some(Test::Contains(needle)) => {
            let strings = kinds
                .iter()
                .all(|k| matches!(k, ScalarKind::String | ScalarKind::Null));
            if !strings || !kinds.contains(&ScalarKind::String) {
                return Err(InvalidQuery::ContainsOnNonString {
                    field: field.to_owned(),
                    holds: holds(kinds),
                });
            }
            FilterTest::Contains(needle.to_lowercase())
        }
    };
    Ok(RecordFilter {
        // Quoted, so a declared name with a dot or bracket addresses the
        // top-level key it names; the collection refused names holding a
        // quote or backslash, the only characters that could end the quote.
        path: format!("$.\"{field}\""),
        test,
    })
}

fn json(field: &str, text: &str) -> Result<Value, InvalidQuery> {
    serde_json::from_str(text).map_err(|e| InvalidQuery::NotJson {
        field: field.to_owned(),
        detail: e.to_string(),
    })
}

fn holds(kinds: &std::collections::BTreeSet<ScalarKind>) -> String {
    let names: Vec<_> = kinds.iter().map(|k| k.name()).collect();
    format!("{} values", names.join(" or "))
}

/// The value as the store compares it, if it is a scalar of a type the
/// field holds. An integer fits a number field; a fraction does not fit an
/// integer one.
fn typed(
    field: &str,
    kinds: &std::collections::BTreeSet<ScalarKind>,
    value: &Value,
) -> Result<FilterValue, InvalidQuery> {
    let fits = |kind| kinds.contains(&kind);
    let converted = match value {
        Value::Null if fits(ScalarKind::Null) => Some(FilterValue::Null),
        Value::Bool(b) if fits(ScalarKind::Boolean) => Some(FilterValue::Boolean(*b)),
        Value::String(s) if fits(ScalarKind::String) => Some(FilterValue::Text(s.clone())),
        Value::Number(n) if fits(ScalarKind::Integer) || fits(ScalarKind::Number) => {
            match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Some(FilterValue::Integer(i)),
                (None, Some(f)) if fits(ScalarKind::Number) || f.fract() == 0.0 => {
                    Some(FilterValue::Real(f))
                }
                _ => None,
            }
        }
        _ => None,
    };
    converted.ok_or_else(|| InvalidQuery::WrongType {
        field: field.to_owned(),
        value: shown(value),
        expected: holds(kinds),
    })
}

/// A value as the refusal quotes it, never unbounded.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks() -> Collection {
        Collection::compile(
            "marks",
            r#"{"type":"object","properties":{
                "title":{"type":"string"},
                "stars":{"type":"integer"},
                "score":{"type":"number"},
                "read":{"type":"boolean"},
                "note":{"type":["string","null"]},
                "tags":{"type":"array"},
                "meta":{"type":"object","properties":{"a":{"type":"string"}}},
                "a.b":{"type":"string"}
            }}"#,
        )
        .expect("compiles")
    }

    fn condition(field: &str, test: Test) -> Condition {
        Condition {
            field: field.into(),
            test: Some(test),
        }
    }

    fn equals(field: &str, json: &str) -> Condition {
        condition(field, Test::EqualsJson(json.into()))
    }

    fn refused(conditions: &[Condition]) -> InvalidQuery {
        parse(&marks(), conditions).expect_err("invalid")
    }

    #[test]
    fn s3_14_conditions_on_declared_scalar_fields_become_bound_filters() {
        let filters = parse(
            &marks(),
            &[
                equals("title", r#""Rust book""#),
                equals("stars", "3"),
                equals("score", "2.5"),
                equals("read", "true"),
                equals("note", "null"),
                condition("stars", Test::OneOfJson("[1, 2]".into())),
                condition("title", Test::Contains("RUST".into())),
                equals("a.b", r#""x""#),
            ],
        )
        .expect("valid");
        let tests: Vec<_> = filters.iter().map(|f| f.test.clone()).collect();
        assert_eq!(
            tests,
            [
                FilterTest::Equals(FilterValue::Text("Rust book".into())),
                FilterTest::Equals(FilterValue::Integer(3)),
                FilterTest::Equals(FilterValue::Real(2.5)),
                FilterTest::Equals(FilterValue::Boolean(true)),
                FilterTest::Equals(FilterValue::Null),
                FilterTest::OneOf(vec![FilterValue::Integer(1), FilterValue::Integer(2)]),
                FilterTest::Contains("rust".into()),
                FilterTest::Equals(FilterValue::Text("x".into())),
            ]
        );
        assert_eq!(filters[0].path, r#"$."title""#);
        assert_eq!(filters[7].path, r#"$."a.b""#);
    }

    #[test]
    fn s3_14_an_undeclared_field_is_an_invalid_query_naming_the_declared_ones() {
        let error = refused(&[equals("author", r#""x""#)]);
        assert!(matches!(error, InvalidQuery::Undeclared { .. }));
        assert!(error.to_string().contains("title"), "{error}");
    }

    #[test]
    fn s3_14_a_nested_field_is_an_invalid_query() {
        for field in ["meta.a", "meta[0]", "meta/a"] {
            let error = refused(&[equals(field, r#""x""#)]);
            assert!(matches!(error, InvalidQuery::Nested { .. }), "{field}");
        }
    }

    #[test]
    fn s3_14_a_non_scalar_field_is_an_invalid_query() {
        for field in ["tags", "meta"] {
            assert!(matches!(
                refused(&[equals(field, "1")]),
                InvalidQuery::NotScalar { .. }
            ));
        }
    }

    #[test]
    fn s3_14_a_value_of_the_wrong_type_is_an_invalid_query() {
        for (field, value) in [
            ("title", "3"),
            ("stars", r#""3""#),
            ("stars", "2.5"),
            ("read", "1"),
            ("title", "null"),
            ("title", "[1]"),
            ("title", r#"{"a":1}"#),
        ] {
            let error = refused(&[equals(field, value)]);
            assert!(
                matches!(error, InvalidQuery::WrongType { .. }),
                "{field} {value}: {error}"
            );
        }
        assert!(matches!(
            refused(&[equals("title", "not json")]),
            InvalidQuery::NotJson { .. }
        ));
        assert!(matches!(
            refused(&[condition("stars", Test::OneOfJson("[1, \"2\"]".into()))]),
            InvalidQuery::WrongType { .. }
        ));
    }

    #[test]
    fn s3_14_contains_applies_to_string_fields_only() {
        for field in ["stars", "read", "score"] {
            assert!(matches!(
                refused(&[condition(field, Test::Contains("1".into()))]),
                InvalidQuery::ContainsOnNonString { .. }
            ));
        }
        assert!(parse(&marks(), &[condition("note", Test::Contains("x".into()))]).is_ok());
    }

    #[test]
    fn s3_14_one_of_is_a_bounded_non_empty_array() {
        assert!(matches!(
            refused(&[condition("stars", Test::OneOfJson("[]".into()))]),
            InvalidQuery::EmptyOneOf { .. }
        ));
        assert!(matches!(
            refused(&[condition("stars", Test::OneOfJson("3".into()))]),
            InvalidQuery::NotAnArray { .. }
        ));
        let many = format!("[{}]", vec!["1"; MAX_ONE_OF + 1].join(","));
        assert!(matches!(
            refused(&[condition("stars", Test::OneOfJson(many))]),
            InvalidQuery::TooManyValues { .. }
        ));
    }

    #[test]
    fn s3_14_a_condition_without_a_test_and_too_many_conditions_are_invalid() {
        let bare = Condition {
            field: "title".into(),
            test: None,
        };
        assert!(matches!(refused(&[bare]), InvalidQuery::NoTest { .. }));
        let many = vec![equals("stars", "1"); MAX_CONDITIONS + 1];
        assert!(matches!(
            refused(&many),
            InvalidQuery::TooManyConditions { .. }
        ));
    }

    #[test]
    fn s3_14_sql_in_a_field_name_is_an_undeclared_field_never_a_path() {
        let error = refused(&[equals("title\") OR 1=1 --", r#""x""#)]);
        assert!(matches!(error, InvalidQuery::Undeclared { .. }));
    }

    proptest::proptest! {
        /// Whatever a plugin sends, the grammar answers filters on declared
        /// fields or a typed refusal, and never panics.
        #[test]
        fn s3_14_the_grammar_is_total_and_paths_name_declared_fields(
            field in "[a-z.\\[\\]/\" ]{0,12}",
            value in "[0-9a-z\\[\\]\",{}:. ]{0,16}",
            which in 0u8..3,
        ) {
            let test = match which {
                0 => Test::EqualsJson(value),
                1 => Test::OneOfJson(value),
                _ => Test::Contains(value),
            };
            let collection = marks();
            if let Ok(filters) = parse(&collection, &[condition(&field, test)]) {
                let declared: Vec<String> = collection
                    .field_names()
                    .map(|f| format!("$.\"{f}\""))
                    .collect();
                proptest::prop_assert!(declared.contains(&filters[0].path));
            }
        }
    }
}
