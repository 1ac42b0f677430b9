//! Requests the server makes to integrations (button clicks, slash commands,
//! dialog submissions), through one guarded client (contract §C.5, §C.6):
//! reserved and private addresses are refused unless
//! `AllowedUntrustedInternalConnections` allows them, by CIDR or by exact host
//! name, and every request is recorded for tests to read back.

use std::net::IpAddr;
use std::time::Duration;

use mattermost_wire::untrusted;

use crate::state::{OutgoingRecord, Sim};

/// What an outgoing request carries.
pub enum Body {
    Json(serde_json::Value),
    Form(Vec<(String, String)>),
    Query(Vec<(String, String)>),
}

pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub body: String,
}

#[derive(Debug, thiserror::Error)]
pub enum OutgoingError {
    #[error(
        "address forbidden, you may need to set AllowedUntrustedInternalConnections to allow an integration access to your internal network"
    )]
    Forbidden,
    #[error("invalid URL {0}")]
    BadUrl(String),
    #[error("{0}")]
    Failed(String),
}

pub async fn send(
    sim: &Sim,
    kind: &str,
    url: &str,
    body: Body,
    headers: &[(&str, String)],
) -> Result<Reply, OutgoingError> {
    let result = attempt(sim, url, &body, headers).await;
    let (status, response, error) = match &result {
        Ok(reply) => (Some(reply.status), reply.body.clone(), None),
        Err(error) => (None, String::new(), Some(error.to_string())),
    };
    let body_text = match &body {
        Body::Json(value) => value.to_string(),
        Body::Form(fields) | Body::Query(fields) => serde_urlencoded(fields),
    };
    sim.transient().outgoing.push(OutgoingRecord {
        kind: kind.to_string(),
        url: url.to_string(),
        headers: headers
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
        body: body_text,
        status,
        response,
        error,
    });
    result
}

fn serde_urlencoded(fields: &[(String, String)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .finish()
}

async fn attempt(
    sim: &Sim,
    url: &str,
    body: &Body,
    headers: &[(&str, String)],
) -> Result<Reply, OutgoingError> {
    let parsed = url::Url::parse(url).map_err(|_| OutgoingError::BadUrl(url.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(OutgoingError::BadUrl(url.to_string()));
    }
    let host = parsed
        .host_str()
        .ok_or_else(|| OutgoingError::BadUrl(url.to_string()))?
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(80);
    let (allowlist, timeout) = {
        let data = sim.data();
        (
            data.settings.allowed_untrusted_internal_connections.clone(),
            Duration::from_secs(
                data.settings
                    .outgoing_integration_requests_timeout_secs
                    .max(1),
            ),
        )
    };
    // Judge every address the name resolves to, as the server does at dial.
    let lookup_host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let addresses: Vec<IpAddr> = tokio::net::lookup_host((lookup_host.as_str(), port))
        .await
        .map_err(|e| OutgoingError::Failed(format!("cannot resolve {host}: {e}")))?
        .map(|a| a.ip())
        .collect();
    if addresses.is_empty()
        || addresses
            .iter()
            .any(|ip| !untrusted::may_connect(&allowlist, &lookup_host, *ip))
    {
        return Err(OutgoingError::Forbidden);
    }
    let mut request = match body {
        Body::Json(value) => sim.http.post(url).json(value),
        Body::Form(fields) => sim.http.post(url).form(fields),
        Body::Query(fields) => {
            let mut with_query = parsed.clone();
            with_query
                .query_pairs_mut()
                .extend_pairs(fields.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            sim.http.get(with_query.as_str())
        }
    };
    request = request
        .timeout(timeout)
        .header("Accept", "application/json");
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    let response = request
        .send()
        .await
        .map_err(|e| OutgoingError::Failed(e.to_string()))?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response
        .text()
        .await
        .map_err(|e| OutgoingError::Failed(e.to_string()))?;
    Ok(Reply {
        status,
        content_type,
        body,
    })
}

/// Issues a trigger id bound to `user_id` (contract §C.4).
pub fn issue_trigger(sim: &Sim, user_id: &str) -> String {
    let id = crate::ids::new_id();
    let now = sim.clock.now();
    sim.transient().triggers.insert(
        id.clone(),
        crate::state::Trigger {
            user_id: user_id.to_string(),
            issued_at: now,
        },
    );
    id
}
