//! One request to a provider and its answer read whole, bounded in size and
//! time, classified by status into hits or the reason there are none.

use std::time::{Duration, SystemTime};

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

use super::error::SearchError;
use super::hit::Hit;
use super::settings::{Provider, SearchSettings};

/// A search answer is a page of summaries, well under this; a larger body is
/// not one, and is not read past this.
pub const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// What came back, before the provider's shape is read.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// Sends the request and reads the answer within the settings' timeout; an
/// answer that does not come is the provider not answering (§3.4).
pub async fn send(
    settings: &SearchSettings,
    request: reqwest::RequestBuilder,
) -> Result<Answer, SearchError> {
    let provider = settings.provider;
    let exchange = async {
        let mut response = request.send().await.map_err(|e| unanswered(provider, e))?;
        let status = response.status();
        let headers = response.headers().clone();
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| unanswered(provider, e))?
        {
            if body.len() + chunk.len() > BODY_LIMIT {
                return Err(SearchError::Malformed {
                    provider,
                    reason: format!("the answer is larger than {} MiB", BODY_LIMIT >> 20),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            body,
        })
    };
    match tokio::time::timeout(settings.timeout, exchange).await {
        Ok(answer) => answer,
        Err(_) => Err(SearchError::Unanswered {
            provider,
            reason: format!("no answer within {} s", settings.timeout.as_secs_f64()),
            source: None,
        }),
    }
}

/// The client's error in words, without the URL (it is the operator's, and
/// the reason is what matters), with its causes.
fn unanswered(provider: Provider, error: reqwest::Error) -> SearchError {
    // The scoped client's resolver and redirect policy refuse inside
    // reqwest's error; the refusal, not a failed connection, is the reason.
    if let Some(refusal) = collegium_web_scope::Refusal::find_in(&error) {
        return SearchError::OutOfScope {
            provider,
            refusal: refusal.clone(),
        };
    }
    let what = if error.is_connect() {
        "the connection failed"
    } else if error.is_timeout() {
        "the request timed out"
    } else if error.is_redirect() {
        "it redirected too often"
    } else {
        "the exchange failed"
    };
    let mut causes = Vec::new();
    let mut cause = std::error::Error::source(&error);
    while let Some(next) = cause {
        let line = next.to_string();
        if !causes.contains(&line) {
            causes.push(line);
        }
        cause = next.source();
    }
    let reason = if causes.is_empty() {
        what.to_string()
    } else {
        format!("{what}: {}", causes.join(": "))
    };
    SearchError::Unanswered {
        provider,
        reason,
        source: Some(error.without_url()),
    }
}

/// The statuses both providers share; `Ok` for a success, whose body the
/// provider's module reads. Provider-specific readings (Brave's rate-limit
/// headers and error body, SearXNG's 403) come in through the arguments.
pub fn classify(
    provider: Provider,
    answer: &Answer,
    retry_after: Option<Duration>,
    detail: Option<String>,
) -> Result<(), SearchError> {
    let status = answer.status;
    match status.as_u16() {
        200..=299 => Ok(()),
        429 => Err(SearchError::Throttled {
            provider,
            status,
            retry_after,
        }),
        401 | 403 => Err(SearchError::CredentialsRefused {
            provider,
            status,
            detail,
        }),
        400 | 422 => Err(SearchError::QueryRejected {
            provider,
            status,
            detail,
        }),
        500..=599 => Err(SearchError::Unanswered {
            provider,
            reason: format!("it answered {status}"),
            source: None,
        }),
        _ => Err(SearchError::UnexpectedStatus { provider, status }),
    }
}

/// `Retry-After` as delay-seconds or an HTTP date (RFC 9110 §10.2.3).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let when = httpdate::parse_http_date(value).ok()?;
    Some(
        when.duration_since(SystemTime::now())
            .unwrap_or(Duration::ZERO),
    )
}

/// The body parsed as JSON, or why it is not.
pub fn json(provider: Provider, body: &[u8]) -> Result<serde_json::Value, SearchError> {
    serde_json::from_slice(body).map_err(|e| SearchError::Malformed {
        provider,
        reason: format!("it is not JSON ({e})"),
    })
}

/// The first `count` results in the provider's rank, each required to carry
/// a `url`; `hit` makes a result's hit from the result and its address.
pub fn ranked(
    provider: Provider,
    results: &[serde_json::Value],
    count: usize,
    hit: impl Fn(&serde_json::Value, &str) -> Hit,
) -> Result<Vec<Hit>, SearchError> {
    results
        .iter()
        .take(count)
        .enumerate()
        .map(|(i, result)| {
            let url = result
                .get("url")
                .and_then(serde_json::Value::as_str)
                .ok_or_else(|| SearchError::Malformed {
                    provider,
                    reason: format!("result {} has no `url`", i + 1),
                })?;
            Ok(hit(result, url))
        })
        .collect()
}

/// A result's string field; an absent one reads as empty.
pub fn field<'a>(result: &'a serde_json::Value, name: &str) -> &'a str {
    result
        .get(name)
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        let later = SystemTime::now() + Duration::from_secs(120);
        let date = httpdate::fmt_http_date(later);
        headers.insert(RETRY_AFTER, HeaderValue::from_str(&date).expect("header"));
        let after = retry_after(&headers).expect("a date");
        assert!(after <= Duration::from_secs(120) && after >= Duration::from_secs(100));
        headers.insert(RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&headers), None);
    }
}
