//! Brave's Web Search wire (`GET /res/v1/web/search`): bodies shaped after
//! Brave's documented `WebSearchApiResponse` and `ErrorResponse`.

use std::collections::HashMap;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::script::{Scripted, SimHit};
use crate::{Sim, Wire};

/// Brave's documented bounds on a query and on `count`.
const MAX_QUERY_CHARS: usize = 400;
const MAX_QUERY_WORDS: usize = 50;
const MAX_COUNT: usize = 20;

pub async fn search(sim: &Sim, params: HashMap<String, String>, headers: &HeaderMap) -> Response {
    let query = params.get("q").cloned().unwrap_or_default();
    let token = headers
        .get("x-subscription-token")
        .and_then(|v| v.to_str().ok());
    let expected = sim.config().brave_key;
    if token.is_none() || token != expected.as_deref() {
        return error(
            StatusCode::UNAUTHORIZED,
            "SUBSCRIPTION_TOKEN_INVALID",
            "The provided subscription token is invalid.",
        );
    }
    if query.trim().is_empty() {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "Unable to validate request parameter(s): q is required",
        );
    }
    if query.chars().count() > MAX_QUERY_CHARS || query.split_whitespace().count() > MAX_QUERY_WORDS
    {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "VALIDATION",
            "Unable to validate request parameter(s): q must be at most 400 characters and 50 words",
        );
    }
    let count = match params.get("count").map(|c| c.parse::<usize>()) {
        None => MAX_COUNT,
        Some(Ok(count)) if (1..=MAX_COUNT).contains(&count) => count,
        Some(_) => {
            return error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "VALIDATION",
                "Unable to validate request parameter(s): count must be between 1 and 20",
            );
        }
    };
    match sim.next_answer(Wire::Brave, &query) {
        Scripted::Results { hits } => {
            let hits: Vec<_> = hits.into_iter().take(count).collect();
            axum::Json(body(&query, &hits)).into_response()
        }
        Scripted::Throttle {
            remaining,
            reset,
            retry_after,
        } => {
            let mut response = error(
                StatusCode::TOO_MANY_REQUESTS,
                "RATE_LIMITED",
                "Request rate limit exceeded for plan.",
            );
            let headers = response.headers_mut();
            headers.insert("X-RateLimit-Limit", HeaderValue::from_static("1, 2000"));
            headers.insert(
                "X-RateLimit-Policy",
                HeaderValue::from_static("1;w=1, 2000;w=2592000"),
            );
            for (name, value) in [
                ("X-RateLimit-Remaining", remaining),
                ("X-RateLimit-Reset", reset),
                ("Retry-After", retry_after),
            ] {
                if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
                    headers.insert(name, value);
                }
            }
            response
        }
        Scripted::Status { status } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            error(
                status,
                "INTERNAL_ERROR",
                status.canonical_reason().unwrap_or("Error"),
            )
        }
        Scripted::Hang => crate::hang().await,
        Scripted::Malformed { body, content_type } => crate::malformed(body, content_type),
    }
}

/// Brave's `ErrorResponse`.
fn error(status: StatusCode, code: &str, detail: &str) -> Response {
    let body = json!({
        "type": "ErrorResponse",
        "error": {
            "id": "4f1a2c0e-1b6d-4c8e-9a57-0d9f3e8b2a61",
            "status": status.as_u16(),
            "code": code,
            "detail": detail,
            "meta": {"component": "search-sim"}
        },
        "time": 1_796_000_000
    });
    (status, axum::Json(body)).into_response()
}

/// A `WebSearchApiResponse`: `query`, `mixed`, `type` and, when any page
/// matched, `web` with its `results`.
fn body(query: &str, hits: &[SimHit]) -> Value {
    let mut body = json!({
        "query": {
            "original": query,
            "show_strict_warning": false,
            "is_navigational": false,
            "is_news_breaking": false,
            "spellcheck_off": true,
            "country": "us",
            "bad_results": false,
            "should_fallback": false,
            "postal_code": "",
            "city": "",
            "header_country": "",
            "more_results_available": !hits.is_empty(),
            "state": ""
        },
        "mixed": {
            "type": "mixed",
            "main": hits.iter().enumerate().map(|(i, _)| json!({"type": "web", "index": i, "all": false})).collect::<Vec<_>>(),
            "top": [],
            "side": []
        },
        "type": "search"
    });
    if !hits.is_empty() {
        body["web"] = json!({
            "type": "search",
            "results": hits.iter().map(|hit| result(query, hit)).collect::<Vec<_>>(),
            "family_friendly": true
        });
    }
    body
}

fn result(query: &str, hit: &SimHit) -> Value {
    let parsed = url::Url::parse(&hit.url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .unwrap_or_default()
        .to_string();
    let scheme = parsed.as_ref().map(|u| u.scheme()).unwrap_or("https");
    let path = parsed
        .as_ref()
        .map(|u| u.path().trim_matches('/').replace('/', " › "))
        .unwrap_or_default();
    json!({
        "title": escape(&hit.title),
        "url": hit.url,
        "is_source_local": false,
        "is_source_both": false,
        "description": decorate(&hit.snippet, query),
        "page_age": "2026-11-02T09:00:00",
        "profile": {
            "name": host,
            "url": hit.url,
            "long_name": host,
            "img": "https://imgs.search.brave.com/sim/favicon.png"
        },
        "language": "en",
        "family_friendly": true,
        "type": "search_result",
        "subtype": "generic",
        "is_live": false,
        "meta_url": {
            "scheme": scheme,
            "netloc": host,
            "hostname": host,
            "favicon": "https://imgs.search.brave.com/sim/favicon.png",
            "path": if path.is_empty() { String::new() } else { format!("› {path}") }
        },
        "age": "November 2, 2026"
    })
}

/// HTML-escapes as Brave's display strings are escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            c => out.push(c),
        }
    }
    out
}

/// The snippet escaped, with each word of the query in `<strong>`: Brave's
/// default text decorations.
fn decorate(snippet: &str, query: &str) -> String {
    let terms: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut out = String::new();
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        if terms.contains(&word.to_lowercase()) {
            out.push_str(&format!("<strong>{}</strong>", escape(word)));
        } else {
            out.push_str(&escape(word));
        }
        word.clear();
    };
    for c in snippet.chars() {
        if c.is_alphanumeric() {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push_str(&escape(&c.to_string()));
        }
    }
    flush(&mut word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_escaped_with_the_query_s_words_marked() {
        assert_eq!(
            decorate("Tokio's async <runtime> for Rust", "rust ASYNC"),
            "Tokio&#x27;s <strong>async</strong> &lt;runtime&gt; for <strong>Rust</strong>"
        );
    }

    #[test]
    fn no_match_leaves_out_web() {
        let empty = body("q", &[]);
        assert!(empty.get("web").is_none());
        assert_eq!(empty["type"], "search");
        let one = body("q", &[SimHit::new("T", "https://a.example/x/y", "s")]);
        assert_eq!(one["web"]["results"][0]["meta_url"]["path"], "› x › y");
    }
}
