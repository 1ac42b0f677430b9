//! What tests script: per query, a queue of answers, each consumed by the
//! next search for that query, the last one standing for every search after.

use std::collections::{HashMap, VecDeque};

use serde::{Deserialize, Serialize};

/// One result as a test writes it; each wire renders it in its own shape.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimHit {
    pub title: String,
    pub url: String,
    /// Plain text: Brave's wire escapes it as HTML and marks the query's
    /// words in `<strong>`, as Brave does; SearXNG's carries it as it is.
    pub snippet: String,
}

impl SimHit {
    pub fn new(title: &str, url: &str, snippet: &str) -> SimHit {
        SimHit {
            title: title.into(),
            url: url.into(),
            snippet: snippet.into(),
        }
    }
}

/// One scripted answer.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Scripted {
    /// A successful answer with these results, best first.
    Results { hits: Vec<SimHit> },
    /// 429 with the provider's throttling headers: Brave's `X-RateLimit-*`
    /// (one value per limit, per second first, e.g. `"0, 1000"` and
    /// `"1, 1419704"`), and `Retry-After` when given.
    Throttle {
        #[serde(default)]
        remaining: Option<String>,
        #[serde(default)]
        reset: Option<String>,
        #[serde(default)]
        retry_after: Option<String>,
    },
    /// This status with the wire's error body (a 5xx, a 404).
    Status { status: u16 },
    /// Never answers: the request is held open until the client gives up.
    Hang,
    /// A 200 whose body is not the wire's shape.
    Malformed {
        body: String,
        #[serde(default)]
        content_type: Option<String>,
    },
}

#[derive(Default)]
pub struct Scripts {
    by_query: HashMap<String, VecDeque<Scripted>>,
}

impl Scripts {
    pub fn add(&mut self, query: &str, answers: Vec<Scripted>) {
        self.by_query
            .entry(query.to_string())
            .or_default()
            .extend(answers);
    }

    /// The next answer for the query: the head of its queue, which stays
    /// when it is the last. `None` for a query nothing was scripted for.
    pub fn next(&mut self, query: &str) -> Option<Scripted> {
        let queue = self.by_query.get_mut(query)?;
        if queue.len() > 1 {
            queue.pop_front()
        } else {
            queue.front().cloned()
        }
    }

    pub fn clear(&mut self) {
        self.by_query.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_consumed_in_order_and_the_last_stands() {
        let mut scripts = Scripts::default();
        scripts.add(
            "q",
            vec![
                Scripted::Status { status: 503 },
                Scripted::Results { hits: Vec::new() },
            ],
        );
        assert!(matches!(
            scripts.next("q"),
            Some(Scripted::Status { status: 503 })
        ));
        assert!(matches!(scripts.next("q"), Some(Scripted::Results { .. })));
        assert!(matches!(scripts.next("q"), Some(Scripted::Results { .. })));
        assert!(scripts.next("other").is_none());
    }
}
