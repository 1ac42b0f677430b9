//! `web::fetch` (§3.4): one plain HTTP GET, no session and no script, held
//! to the address policy on every hop and pinned to the address that passed,
//! read as markdown by `collegium_web_page`. A PDF is handed back whole for
//! the daemon to have read by the PDF worker (workers never call each
//! other).

mod client;
mod exchange;

use std::sync::Arc;

use collegium_proto::toolset::v1::{Document, ToolResult};
use collegium_web_page::{Fetched, Reading, Response};
use collegium_web_scope::Scope;

pub use client::{ClientError, Trust};
use exchange::{Exchanged, Failed};

use crate::call::WebCall;
use crate::result;
use collegium_web_page::CertificateProblem;

/// The largest body a fetch reads. A PDF past it is not read at all, since
/// a PDF cut short does not parse (§3.4); a page past it is refused whole
/// rather than read in part (nothing is silently cut).
pub const BODY_CAP: usize = 32 * 1024 * 1024;

/// How long the browser route's certificate check may take.
const CERTIFICATE_CHECK_WITHIN: std::time::Duration = std::time::Duration::from_secs(10);

pub struct Fetcher {
    scope: Arc<Scope>,
    client: client::Client,
}

impl Fetcher {
    /// A fetcher held to `scope`, trusting the system's authorities and
    /// `trust`'s.
    pub fn new(scope: Arc<Scope>, trust: &Trust) -> Result<Self, ClientError> {
        Ok(Self {
            client: client::Client::new(scope.clone(), trust)?,
            scope,
        })
    }

    /// The scope every request is held to.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The HTTP client held to the scope, for the search provider's
    /// requests too (§3.4: the search goes through the same policy).
    pub fn http(&self) -> &reqwest::Client {
        self.client.http()
    }

    /// What this route's verifier finds wrong with `url`'s certificate,
    /// asked by the browser route where Chromium's error does not say
    /// (§3.4 certificates). A HEAD request held to the scope like any
    /// fetch; `None` where the address is refused, the certificate verifies
    /// here, or the site cannot be reached.
    pub async fn certificate_problem(&self, url: &url::Url) -> Option<CertificateProblem> {
        let host = url.host_str()?.trim_matches(['[', ']']).to_string();
        let target = self.scope.judge_url(url.as_str()).ok()?;
        let sent = tokio::time::timeout(
            CERTIFICATE_CHECK_WITHIN,
            self.client.http().head(target.url.clone()).send(),
        )
        .await;
        match sent {
            Ok(Ok(_)) => None,
            _ => self.client.certificate_problem(&host),
        }
    }

    pub async fn fetch(&self, call: &WebCall) -> ToolResult {
        let Some(asked) = call.arguments.url.as_deref() else {
            return result::invalid("web::fetch needs `url`, the address to read".into());
        };
        let summary = format!("GET {}", bounded(asked, 120));
        let target = match self.scope.judge_url(asked) {
            Ok(target) => target,
            Err(refusal) => return result::refusal(refusal.to_string(), refused(&summary)),
        };
        let holds = |tool: &str| call.holds(tool);
        let exchanged = match exchange::get(&self.client, &self.scope, &target.url, call).await {
            Ok(exchanged) => exchanged,
            Err(failed) => {
                return result::refusal(failed.describe(&target.url, &holds), refused(&summary));
            }
        };
        let Exchanged {
            final_url,
            status,
            content_type,
            headers,
            body,
            retried,
        } = exchanged;
        let header_pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let reading = Reading {
            whole_page: call.arguments.whole_page.unwrap_or(false),
            offset: call.arguments.offset,
            find: call.arguments.find.clone().unwrap_or_default(),
        };
        let fetched = collegium_web_page::classify(
            &Response {
                requested: &target.url,
                final_url: &final_url,
                status,
                content_type: content_type.as_deref(),
                headers: &header_pairs,
                body: &body,
                retried,
            },
            &reading,
        );
        let summary = format!("{summary} → {status}");
        match fetched {
            Fetched::Pdf { served, bytes } => result::document(
                Document {
                    media_type: "application/pdf".into(),
                    content: bytes,
                    url: served.url.to_string(),
                    status: u32::from(served.status),
                    notes: Vec::new(),
                },
                summary,
            ),
            Fetched::Refused { .. } | Fetched::NotRead { .. } => {
                result::refusal(fetched.render(&holds), summary)
            }
            Fetched::Page(ref page) => {
                // An identical re-read is judged by what was read, at
                // whatever address served it (§3.8).
                let key = page.text.clone();
                result::success(fetched.render(&holds), Some(key), summary)
            }
            Fetched::Empty { .. } | Fetched::Status { .. } => {
                result::success(fetched.render(&holds), None, summary)
            }
        }
    }
}

fn refused(summary: &str) -> String {
    format!("{summary} — refused")
}

/// At most `limit` characters of `text`, marked where cut: a status line
/// only (the call's arguments are in the trace whole).
fn bounded(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

impl Failed {
    /// The failure as the model reads it, in the framework's words.
    fn describe(&self, asked: &url::Url, holds: &dyn collegium_web_page::Holds) -> String {
        match self {
            Failed::Scope(refusal) => refusal.to_string(),
            Failed::Certificate { host, problem } => {
                problem.describe(host, collegium_web_page::Route::Fetch, holds)
            }
            Failed::TimedOut { within } => format!(
                "{asked} did not answer within {} s; asking again may succeed",
                within.as_secs()
            ),
            Failed::Connection { host, what } => {
                format!("{host} could not be reached: {what}; asking again may succeed")
            }
            Failed::TooLarge { bytes_over } => format!(
                "{asked} served more than {} MiB ({bytes_over} bytes at least), more than a fetch reads; nothing was read. A PDF that large is not read at all, since one cut short does not parse",
                BODY_CAP >> 20
            ),
        }
    }
}
