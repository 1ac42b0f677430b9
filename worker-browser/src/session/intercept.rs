//! CDP request interception of documents (§3.4 Browsing). It is not the
//! boundary — the egress proxy is — but it gives early, clear refusals: a
//! scheme the browser does not serve, a `file:` load, a main-frame resource
//! that is not HTML. Every paused request is answered at once or failed at a
//! deadline, and a request Chromium pauses twice is answered twice.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::fetch::{
    ContinueRequestParams, EnableParams, EventRequestPaused, FailRequestParams, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::network::{ErrorReason, ResourceType};
use chromiumoxide::cdp::browser_protocol::page::FrameId;
use futures::StreamExt;
use tokio::task::JoinHandle;

use crate::proxy::REFUSAL_HEADER;

/// How long a paused request may wait for its answer before it is failed.
const PAUSE_DEADLINE: Duration = Duration::from_secs(5);

/// What interception saw of the main frame's documents since the last reset.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    /// A main-frame load refused for its scheme.
    pub scheme_refused: Option<String>,
    /// A main-frame response that is not HTML: its address and type.
    pub not_html: Option<(String, String)>,
    /// A main-frame request the egress proxy refused, known by the header
    /// only the proxy's own refusals carry (it strips the header from every
    /// site's answer): its address.
    pub proxy_refused: Option<String>,
}

#[derive(Clone)]
pub struct Interception {
    seen: Arc<Mutex<Seen>>,
}

impl Interception {
    /// Starts intercepting `page`'s documents; `main` is its main frame.
    pub async fn start(
        page: &Page,
        main: FrameId,
    ) -> Result<(Self, JoinHandle<()>), chromiumoxide::error::CdpError> {
        let mut paused = page.event_listener::<EventRequestPaused>().await?;
        let patterns = [RequestStage::Request, RequestStage::Response]
            .into_iter()
            .map(|stage| {
                RequestPattern::builder()
                    .url_pattern("*")
                    .resource_type(ResourceType::Document)
                    .request_stage(stage)
                    .build()
            })
            .collect::<Vec<_>>();
        page.execute(EnableParams::builder().patterns(patterns).build())
            .await?;
        let seen = Arc::new(Mutex::new(Seen::default()));
        let this = Self { seen: seen.clone() };
        let page = page.clone();
        let task = tokio::spawn(async move {
            while let Some(event) = paused.next().await {
                let verdict = judge(&event, &main, &seen);
                let page = page.clone();
                // Answered apart, so one slow answer never holds the next.
                tokio::spawn(async move { answer(&page, &event, verdict).await });
            }
        });
        Ok((this, task))
    }

    pub fn reset(&self) {
        *lock(&self.seen) = Seen::default();
    }

    pub fn seen(&self) -> Seen {
        lock(&self.seen).clone()
    }
}

fn lock(seen: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    // A panic while holding this lock leaves only a record behind; the
    // record is still readable.
    seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

enum Verdict {
    Continue,
    Fail(ErrorReason),
}

fn judge(event: &EventRequestPaused, main: &FrameId, seen: &Mutex<Seen>) -> Verdict {
    let url = &event.request.url;
    let main_frame = &event.frame_id == main;
    let at_response = event.response_status_code.is_some() || event.response_error_reason.is_some();
    let scheme = url
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if !at_response {
        // Only http(s) is opened (§3.4 scope); file: above all.
        if scheme != "http" && scheme != "https" {
            if main_frame {
                lock(seen).scheme_refused = Some(url.clone());
            }
            return Verdict::Fail(ErrorReason::BlockedByClient);
        }
        return Verdict::Continue;
    }
    if !main_frame || event.response_status_code.is_none() {
        return Verdict::Continue;
    }
    let content_type = event
        .response_headers
        .iter()
        .flatten()
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| h.value.clone())
        .unwrap_or_default();
    let essence = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    // The proxy answers an http request itself; an https one goes through
    // a tunnel where only the site answers, so there the header is the
    // site's and means nothing.
    let from_proxy = scheme == "http"
        && event
            .response_headers
            .iter()
            .flatten()
            .any(|h| h.name.eq_ignore_ascii_case(REFUSAL_HEADER));
    if from_proxy {
        lock(seen).proxy_refused = Some(url.clone());
        return Verdict::Fail(ErrorReason::BlockedByResponse);
    }
    let status = event.response_status_code.unwrap_or_default();
    let redirect = (300..400).contains(&status);
    // No type at all is sniffed by the browser as HTML would be.
    let html = essence.is_empty() || essence == "text/html" || essence == "application/xhtml+xml";
    if !html && !redirect {
        lock(seen).not_html = Some((url.clone(), essence));
        return Verdict::Fail(ErrorReason::BlockedByResponse);
    }
    Verdict::Continue
}

async fn answer(page: &Page, event: &EventRequestPaused, verdict: Verdict) {
    let id = event.request_id.clone();
    let answered = match verdict {
        Verdict::Continue => tokio::time::timeout(
            PAUSE_DEADLINE,
            page.execute(ContinueRequestParams::new(id.clone())),
        )
        .await
        .map(|r| r.is_ok()),
        Verdict::Fail(reason) => tokio::time::timeout(
            PAUSE_DEADLINE,
            page.execute(FailRequestParams::new(id.clone(), reason)),
        )
        .await
        .map(|r| r.is_ok()),
    };
    // A request answered already (a double pause) is refused by Chromium
    // and needs nothing more; one whose answer never came is failed, never
    // left paused to hang the page.
    if answered.is_err() {
        let _ = page
            .execute(FailRequestParams::new(id, ErrorReason::TimedOut))
            .await;
    }
}
