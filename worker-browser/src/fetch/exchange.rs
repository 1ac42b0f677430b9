//! One GET and its answer, read whole up to the body cap: a 429 or a 503 is
//! asked once more when the site names a wait (or after a second for a 429
//! that names none) and the wait leaves the retry time to answer (§3.4).

use std::time::Duration;

use collegium_web_page::{CertificateProblem, Retried, retry_wait};
use collegium_web_scope::{Refusal, Scope};
use url::Url;

use super::BODY_CAP;
use super::client::Client;
use crate::call::WebCall;

/// What came back, read.
pub struct Exchanged {
    pub final_url: Url,
    pub status: u16,
    pub content_type: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub retried: Option<Retried>,
}

/// Why nothing came back to read.
pub enum Failed {
    /// The address policy stopped a hop or a name (§3.4).
    Scope(Refusal),
    Certificate {
        host: String,
        problem: CertificateProblem,
    },
    TimedOut {
        within: Duration,
    },
    Connection {
        host: String,
        what: String,
    },
    TooLarge {
        bytes_over: usize,
    },
}

pub async fn get(
    client: &Client,
    scope: &Scope,
    url: &Url,
    call: &WebCall,
) -> Result<Exchanged, Failed> {
    let first = send(client, scope, url, call).await?;
    let remaining = call.time_left();
    let retry_after = header(&first.headers, "retry-after");
    let Some(wait) = retry_wait(
        first.status,
        retry_after.as_deref(),
        chrono::Utc::now(),
        remaining,
    ) else {
        return Ok(first);
    };
    tokio::time::sleep(wait).await;
    let mut second = send(client, scope, url, call).await?;
    second.retried = Some(Retried {
        first_status: first.status,
        after: wait,
    });
    Ok(second)
}

fn header(headers: &[(String, String)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.clone())
}

async fn send(
    client: &Client,
    scope: &Scope,
    url: &Url,
    call: &WebCall,
) -> Result<Exchanged, Failed> {
    let within = call.time_left();
    let exchange = async {
        let mut response = client
            .http()
            .get(url.clone())
            .send()
            .await
            .map_err(|e| failed(client, url, &e))?;
        // A redirect reqwest could not follow (to `file:`) comes back as
        // the 3xx itself: the hop is judged and refused all the same.
        if let Some(refusal) = collegium_web_scope::unfollowed_redirect(scope, &response) {
            return Err(Failed::Scope(refusal));
        }
        let final_url = response.url().clone();
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let content_type = header(&headers, "content-type");
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| failed(client, &final_url, &e))?
        {
            if body.len() + chunk.len() > BODY_CAP {
                return Err(Failed::TooLarge {
                    bytes_over: body.len() + chunk.len(),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Exchanged {
            final_url,
            status,
            content_type,
            headers,
            body,
            retried: None,
        })
    };
    match tokio::time::timeout(within, exchange).await {
        Ok(exchanged) => exchanged,
        Err(_) => Err(Failed::TimedOut { within }),
    }
}

/// The client's error in the framework's words: the scope's refusal where a
/// hop or name was stopped, the certificate's problem where one failed,
/// else what the connection met, never the runtime's advice (§3.4).
fn failed(client: &Client, asked: &Url, error: &reqwest::Error) -> Failed {
    if let Some(refusal) = Refusal::find_in(error) {
        return Failed::Scope(refusal.clone());
    }
    let at = error.url().unwrap_or(asked);
    let host = at.host_str().unwrap_or_default().to_string();
    if let Some(problem) = client.certificate_problem(&host) {
        return Failed::Certificate { host, problem };
    }
    let what = if error.is_timeout() {
        "the connection timed out"
    } else if error.is_connect() {
        "the connection was refused or did not open"
    } else if error.is_body() || error.is_decode() {
        "the answer broke off before its end"
    } else if error.is_request() {
        "the request could not be sent"
    } else {
        "the exchange failed"
    };
    Failed::Connection {
        host,
        what: what.into(),
    }
}
