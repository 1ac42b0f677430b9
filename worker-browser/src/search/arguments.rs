//! What the model passes to web::search: the query, and how many hits it
//! wants. The provider and key are never among them (§3.4).

use serde::Deserialize;

/// Hits returned when the model does not say.
pub const DEFAULT_COUNT: u8 = 10;
/// The most hits one search returns (Brave's own ceiling, §3.4).
pub const MAX_COUNT: u8 = super::brave::MAX_COUNT;
/// Brave refuses longer queries; SearXNG passes them on to engines that
/// would cut them anyway.
pub const MAX_QUERY_CHARS: usize = 400;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchArguments {
    pub query: String,
    #[serde(default)]
    pub count: Option<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ArgumentsError {
    #[error("web::search takes {{\"query\": string, \"count\": 1-{MAX_COUNT}}}: {0}")]
    Shape(serde_json::Error),
    #[error("the query is empty")]
    EmptyQuery,
    #[error("the query is {0} characters long; web::search takes at most {MAX_QUERY_CHARS}")]
    LongQuery(usize),
    #[error("`count` must be between 1 and {MAX_COUNT}, not {0}")]
    Count(u8),
}

impl SearchArguments {
    /// The call's arguments, checked; `InvalidArguments` on refusal (§7.2).
    pub fn parse(arguments_json: &str) -> Result<SearchArguments, ArgumentsError> {
        let mut arguments: SearchArguments =
            serde_json::from_str(arguments_json).map_err(ArgumentsError::Shape)?;
        arguments.query = arguments.query.trim().to_string();
        if arguments.query.is_empty() {
            return Err(ArgumentsError::EmptyQuery);
        }
        let chars = arguments.query.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(ArgumentsError::LongQuery(chars));
        }
        match arguments.count {
            Some(count) if count == 0 || count > MAX_COUNT => Err(ArgumentsError::Count(count)),
            _ => Ok(arguments),
        }
    }

    pub fn count(&self) -> u8 {
        self.count.unwrap_or(DEFAULT_COUNT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_and_an_optional_count() {
        let plain = SearchArguments::parse(r#"{"query": "  rust async  "}"#).expect("parse");
        assert_eq!(plain.query, "rust async");
        assert_eq!(plain.count(), DEFAULT_COUNT);
        let five = SearchArguments::parse(r#"{"query": "q", "count": 5}"#).expect("parse");
        assert_eq!(five.count(), 5);
    }

    #[test]
    fn a_provider_or_key_from_the_model_is_refused() {
        for bad in [
            r#"{"query": "q", "provider": "brave"}"#,
            r#"{"query": "q", "api_key": "k"}"#,
            r#"{"count": 3}"#,
        ] {
            assert!(
                matches!(SearchArguments::parse(bad), Err(ArgumentsError::Shape(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn empty_long_queries_and_counts_out_of_range_are_refused() {
        assert!(matches!(
            SearchArguments::parse(r#"{"query": " "}"#),
            Err(ArgumentsError::EmptyQuery)
        ));
        let long = serde_json::json!({"query": "x".repeat(401)}).to_string();
        assert!(matches!(
            SearchArguments::parse(&long),
            Err(ArgumentsError::LongQuery(401))
        ));
        for count in [0, 21] {
            let args = format!(r#"{{"query": "q", "count": {count}}}"#);
            assert!(matches!(
                SearchArguments::parse(&args),
                Err(ArgumentsError::Count(_))
            ));
        }
    }
}
