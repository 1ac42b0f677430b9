//! SearXNG's search API (`GET /search?q=…&format=json`, also mounted under
//! `/searx`): the JSON output of its `search` endpoint, its 403 for a format
//! its settings do not enable, and its limiter's 429. SearXNG has no keys; a
//! key configured here is checked as the bearer token a proxy in front of it
//! would check.

use std::collections::HashMap;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::script::{Scripted, SimHit};
use crate::{Sim, Wire};

pub async fn search(sim: &Sim, params: HashMap<String, String>, headers: &HeaderMap) -> Response {
    let config = sim.config();
    if let Some(key) = &config.searxng_key {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok());
        if presented != Some(format!("Bearer {key}").as_str()) {
            let mut response = (StatusCode::UNAUTHORIZED, "401 Unauthorized\n").into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"searxng\""),
            );
            return response;
        }
    }
    let query = params.get("q").cloned().unwrap_or_default();
    match params.get("format").map(String::as_str) {
        Some("json") if config.searxng_json => {}
        // SearXNG aborts with 403 for a format missing from
        // `search.formats` in its settings.yml.
        Some(_) => return forbidden(),
        None => {
            return (
                [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
                "<!DOCTYPE html><html><head><title>SearXNG</title></head><body>results page</body></html>",
            )
                .into_response();
        }
    }
    if query.trim().is_empty() {
        return (
            StatusCode::BAD_REQUEST,
            axum::Json(json!({"error": "search error: query is empty"})),
        )
            .into_response();
    }
    match sim.next_answer(Wire::Searxng, &query) {
        Scripted::Results { hits } => axum::Json(body(&query, &hits)).into_response(),
        Scripted::Throttle { retry_after, .. } => {
            let mut response = (StatusCode::TOO_MANY_REQUESTS, "Too Many Requests").into_response();
            if let Some(value) = retry_after.and_then(|v| HeaderValue::from_str(&v).ok()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            response
        }
        Scripted::Status { status } => {
            let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            (status, html_error(status)).into_response()
        }
        Scripted::Hang => crate::hang().await,
        Scripted::Malformed { body, content_type } => crate::malformed(body, content_type),
    }
}

fn forbidden() -> Response {
    (StatusCode::FORBIDDEN, html_error(StatusCode::FORBIDDEN)).into_response()
}

/// The web framework's own error page, as SearXNG serves it.
fn html_error(status: StatusCode) -> ([(header::HeaderName, &'static str); 1], String) {
    let reason = status.canonical_reason().unwrap_or("Error");
    (
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        format!(
            "<!doctype html>\n<html lang=en>\n<title>{code} {reason}</title>\n<h1>{reason}</h1>\n",
            code = status.as_u16()
        ),
    )
}

/// SearXNG's JSON output: the query, the results with their engines and
/// scores, and the answer, correction, infobox and suggestion lists.
fn body(query: &str, hits: &[SimHit]) -> Value {
    json!({
        "query": query,
        "number_of_results": 0,
        "results": hits.iter().enumerate().map(|(i, hit)| result(i, hit)).collect::<Vec<_>>(),
        "answers": [],
        "corrections": [],
        "infoboxes": [],
        "suggestions": [],
        "unresponsive_engines": []
    })
}

fn result(rank: usize, hit: &SimHit) -> Value {
    let parsed = url::Url::parse(&hit.url).ok();
    let parsed_url = match &parsed {
        Some(u) => json!([
            u.scheme(),
            u.host_str().unwrap_or_default(),
            u.path(),
            "",
            u.query().unwrap_or_default(),
            u.fragment().unwrap_or_default()
        ]),
        None => json!(["", "", hit.url, "", "", ""]),
    };
    json!({
        "url": hit.url,
        "title": hit.title,
        "content": hit.snippet,
        "thumbnail": "",
        "engine": "duckduckgo",
        "template": "default.html",
        "parsed_url": parsed_url,
        "img_src": "",
        "priority": "",
        "engines": ["duckduckgo", "brave"],
        "positions": [rank + 1, rank + 1],
        "score": 4.0 / (rank as f64 + 1.0),
        "category": "general",
        "publishedDate": null
    })
}
