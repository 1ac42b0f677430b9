//! The Brave Web Search API: `GET {endpoint}?q=…&count=…` with the key in
//! `X-Subscription-Token`; hits at `web.results[]`, snippets in
//! `description` with the query's words in `<strong>`.

use std::time::Duration;

use reqwest::header::{ACCEPT, HeaderMap};
use serde_json::Value;

use super::error::SearchError;
use super::exchange::{self, Answer};
use super::hit::Hit;
use super::markup;
use super::settings::{Provider, SearchSettings};

/// Brave's documented ceiling for `count`.
pub const MAX_COUNT: u8 = 20;

const PROVIDER: Provider = Provider::Brave;

pub fn request(
    client: &reqwest::Client,
    settings: &SearchSettings,
    query: &str,
    count: u8,
) -> reqwest::RequestBuilder {
    let mut url = settings.endpoint.clone();
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("count", &count.to_string());
    let mut request = client.get(url).header(ACCEPT, "application/json");
    if let Some(key) = &settings.key {
        request = request.header("X-Subscription-Token", key.header(""));
    }
    request
}

pub fn read(answer: &Answer, count: usize) -> Result<Vec<Hit>, SearchError> {
    exchange::classify(
        PROVIDER,
        answer,
        reset(&answer.headers).or_else(|| exchange::retry_after(&answer.headers)),
        error_detail(&answer.body),
    )?;
    let body = exchange::json(PROVIDER, &answer.body)?;
    if body.get("type").and_then(Value::as_str) != Some("search") {
        return Err(malformed("its `type` is not \"search\""));
    }
    // Brave leaves `web` out when no web page matched.
    let Some(web) = body.get("web") else {
        return Ok(Vec::new());
    };
    let results = web
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("`web.results` is not a list"))?;
    exchange::ranked(PROVIDER, results, count, |result, url| {
        Hit::new(
            &markup::strip_tags(exchange::field(result, "title")),
            url,
            &markup::strip_tags(exchange::field(result, "description")),
        )
    })
}

fn malformed(reason: &str) -> SearchError {
    SearchError::Malformed {
        provider: PROVIDER,
        reason: reason.to_string(),
    }
}

/// When the exhausted limit resets. Brave lists one value per limit of the
/// plan, per second first and per month after (`X-RateLimit-Remaining: 0,
/// 1000` with `X-RateLimit-Reset: 1, 1419704`): the limit with nothing left
/// is the one that throttled, and the longest of those is the wait.
fn reset(headers: &HeaderMap) -> Option<Duration> {
    let list = |name: &str| -> Option<Vec<u64>> {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .split(',')
            .map(|v| v.trim().parse().ok())
            .collect()
    };
    let resets = list("X-RateLimit-Reset")?;
    let exhausted = list("X-RateLimit-Remaining")
        .map(|remaining| {
            resets
                .iter()
                .zip(remaining)
                .filter(|(_, left)| *left == 0)
                .map(|(reset, _)| *reset)
                .max()
        })
        .unwrap_or(None);
    exhausted
        .or_else(|| resets.first().copied())
        .map(Duration::from_secs)
}

/// Brave's own words from its error body (`error.detail`), one line, bounded.
fn error_detail(body: &[u8]) -> Option<String> {
    let body: Value = serde_json::from_slice(body).ok()?;
    let detail = body.get("error")?.get("detail")?.as_str()?;
    let detail = markup::bounded(&markup::one_line(detail), 300);
    (!detail.is_empty()).then_some(detail)
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn the_exhausted_limit_sets_the_wait() {
        let per_second = headers(&[
            ("X-RateLimit-Remaining", "0, 1000"),
            ("X-RateLimit-Reset", "1, 1419704"),
        ]);
        assert_eq!(reset(&per_second), Some(Duration::from_secs(1)));
        let per_month = headers(&[
            ("X-RateLimit-Remaining", "1, 0"),
            ("X-RateLimit-Reset", "1, 1419704"),
        ]);
        assert_eq!(reset(&per_month), Some(Duration::from_secs(1_419_704)));
        let no_remaining = headers(&[("X-RateLimit-Reset", "3, 99")]);
        assert_eq!(reset(&no_remaining), Some(Duration::from_secs(3)));
        assert_eq!(reset(&headers(&[("X-RateLimit-Reset", "x")])), None);
    }

    #[test]
    fn the_error_detail_is_brave_s_words() {
        let body = br#"{"type":"ErrorResponse","error":{"id":"1","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."},"time":1}"#;
        assert_eq!(
            error_detail(body).as_deref(),
            Some("The provided subscription token is invalid.")
        );
        assert_eq!(error_detail(b"<html>"), None);
    }
}
