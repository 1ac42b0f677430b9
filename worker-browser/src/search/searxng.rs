//! A SearXNG instance's JSON API: `GET {base}/search?q=…&format=json`; hits
//! at `results[]` (`title`, `url`, `content`), plain text. SearXNG has no
//! keys of its own: an instance that needs one sits behind a proxy, so an
//! optional key is sent as `Authorization: Bearer`.

use reqwest::header::{ACCEPT, AUTHORIZATION};
use serde_json::Value;

use super::error::SearchError;
use super::exchange::{self, Answer};
use super::hit::Hit;
use super::settings::{Provider, SearchSettings};

const PROVIDER: Provider = Provider::Searxng;

pub fn request(
    client: &reqwest::Client,
    settings: &SearchSettings,
    query: &str,
) -> reqwest::RequestBuilder {
    let mut url = settings.endpoint.clone();
    url.query_pairs_mut()
        .append_pair("q", query)
        .append_pair("format", "json");
    let mut request = client.get(url).header(ACCEPT, "application/json");
    if let Some(key) = &settings.key {
        request = request.header(AUTHORIZATION, key.header("Bearer "));
    }
    request
}

/// SearXNG returns one page of results whatever is asked; `count` keeps the
/// first of them, in its ranking.
pub fn read(answer: &Answer, key_sent: bool, count: usize) -> Result<Vec<Hit>, SearchError> {
    // SearXNG answers 403 to a format its settings do not enable
    // (`search.formats`): a configuration refusal, not a key's.
    if answer.status.as_u16() == 403 {
        return Err(SearchError::SearxngForbidden {
            status: answer.status,
            key_sent,
        });
    }
    exchange::classify(
        PROVIDER,
        answer,
        exchange::retry_after(&answer.headers),
        None,
    )?;
    let body = exchange::json(PROVIDER, &answer.body)?;
    let results = body
        .get("results")
        .and_then(Value::as_array)
        .ok_or_else(|| malformed("`results` is not a list"))?;
    exchange::ranked(PROVIDER, results, count, |result, url| {
        Hit::new(
            exchange::field(result, "title"),
            url,
            exchange::field(result, "content"),
        )
    })
}

fn malformed(reason: &str) -> SearchError {
    SearchError::Malformed {
        provider: PROVIDER,
        reason: reason.to_string(),
    }
}
