//! One turn's live browser session (§3.4 Browsing): its own Chromium and,
//! in it, a fresh incognito context holding the one page the turn acts on.

use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::browser::BrowserContextId;
use chromiumoxide::cdp::browser_protocol::input::InsertTextParams;
use chromiumoxide::cdp::browser_protocol::page::{FrameId, NavigateParams};
use chromiumoxide::cdp::browser_protocol::target::{
    CloseTargetParams, CreateBrowserContextParams, CreateTargetParams, GetTargetsParams,
};
use collegium_web_page::certificates::from_chromium_net_error;
use collegium_web_page::{CertificateProblem, Route};
use serde::Deserialize;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use url::Url;

use super::action::{Action, Outcome};
use super::chromium::{Chromium, Group, LaunchError};
use super::config::SessionsConfig;
use super::intercept::Interception;
use super::net_error;
use super::refusal::{Holds, Refusal, naming, what};
use super::settle::settle;
use super::tabs;
use super::traffic::Traffic;
use crate::snapshot::{self, Extras, REF_ATTRIBUTE, Snapshot};

/// How long a navigation may take to commit before the page is read as it is.
const NAVIGATE_WAIT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Launch(#[from] LaunchError),
    #[error("the browser did not open a page: {0}")]
    Cdp(#[from] chromiumoxide::error::CdpError),
}

pub struct Live {
    chromium: Chromium,
    page: Page,
    _context: BrowserContextId,
    traffic: Traffic,
    interception: Interception,
    tasks: Vec<JoinHandle<()>>,
    latest: Option<Snapshot>,
    settle_wait: Duration,
}

/// What the page says of one element, read when an action is aimed at it.
#[derive(Debug, Deserialize)]
struct Element {
    present: bool,
    #[serde(default)]
    hidden: bool,
    #[serde(default)]
    tag: String,
    #[serde(default)]
    fillable: bool,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    options: Vec<OptionEntry>,
    /// A link's address.
    #[serde(default)]
    href: Option<String>,
}

#[derive(Debug, Deserialize)]
struct OptionEntry {
    label: String,
    value: String,
}

/// The session ended under the action: the browser stopped or hung.
#[derive(Debug)]
pub struct Ended(pub String);

impl Live {
    pub async fn open(config: &SessionsConfig) -> Result<Self, OpenError> {
        let chromium = Chromium::launch(config).await?;
        match Self::open_page(chromium, config).await {
            Ok(live) => Ok(live),
            Err((chromium, error)) => {
                chromium.stop().await;
                Err(error)
            }
        }
    }

    async fn open_page(
        chromium: Chromium,
        config: &SessionsConfig,
    ) -> Result<Self, (Chromium, OpenError)> {
        let opened = async {
            // A fresh anonymous context per turn (§3.4): nothing it stores
            // outlives the session.
            let context = chromium
                .browser
                .create_browser_context(CreateBrowserContextParams::default())
                .await?;
            let page = chromium
                .browser
                .new_page(
                    CreateTargetParams::builder()
                        .url("about:blank")
                        .browser_context_id(context.clone())
                        .build()
                        .map_err(chromiumoxide::error::CdpError::msg)?,
                )
                .await?;
            // The tab Chromium starts with is not the session's page.
            let targets = chromium
                .browser
                .execute(GetTargetsParams::default())
                .await?;
            for target in targets.result.target_infos {
                if target.r#type == "page" && &target.target_id != page.target_id() {
                    let _ = chromium
                        .browser
                        .execute(CloseTargetParams::new(target.target_id))
                        .await;
                }
            }
            let main = match page.mainframe().await? {
                Some(frame) => frame,
                // A top-level page's main frame carries its target's id.
                None => FrameId::new(page.target_id().inner().clone()),
            };
            let (traffic, traffic_task) = Traffic::start(&page, main.clone()).await?;
            let (interception, interception_task) = Interception::start(&page, main).await?;
            Ok::<_, chromiumoxide::error::CdpError>((
                context,
                page,
                traffic,
                interception,
                vec![traffic_task, interception_task],
            ))
        }
        .await;
        match opened {
            Ok((context, page, traffic, interception, tasks)) => Ok(Self {
                chromium,
                page,
                _context: context,
                traffic,
                interception,
                tasks,
                latest: None,
                settle_wait: config.settle_wait,
            }),
            Err(error) => Err((chromium, OpenError::Cdp(error))),
        }
    }

    pub fn group(&self) -> Group {
        self.chromium.group.clone()
    }

    pub async fn close(self) {
        for task in &self.tasks {
            task.abort();
        }
        self.chromium.stop().await;
    }

    /// Runs `action`; `Err` when the browser stopped under it.
    pub async fn act(
        &mut self,
        action: &Action,
        holds: Holds<'_>,
        config: &SessionsConfig,
    ) -> Result<Outcome, Ended> {
        if self.chromium.is_gone() {
            return Err(Ended("it had already exited".into()));
        }
        let outcome = match action {
            Action::Navigate { url } => self.navigate(url, holds, config).await,
            _ => self.on_element(action, holds, config).await,
        }?;
        if self.chromium.is_gone() {
            return Err(Ended("it exited during the action".into()));
        }
        Ok(outcome)
    }

    async fn navigate(
        &mut self,
        asked: &str,
        holds: Holds<'_>,
        config: &SessionsConfig,
    ) -> Result<Outcome, Ended> {
        let url = match openable(asked) {
            Ok(url) => url,
            Err(refusal) => return Ok(refused(refusal)),
        };
        self.begin();
        let navigation = tokio::time::timeout(
            NAVIGATE_WAIT,
            self.page.execute(NavigateParams::new(url.to_string())),
        )
        .await;
        let error = match navigation {
            Ok(Ok(response)) => response.result.error_text.clone(),
            Ok(Err(error)) => Some(error.to_string()),
            Err(_) => None,
        };
        settle(&self.page, &self.traffic, Instant::now() + self.settle_wait).await;
        self.finish(holds, config, Some((url.to_string(), error)))
            .await
    }

    async fn on_element(
        &mut self,
        action: &Action,
        holds: Holds<'_>,
        config: &SessionsConfig,
    ) -> Result<Outcome, Ended> {
        let reference = action.reference().unwrap_or_default().trim().to_string();
        let Some(latest) = &self.latest else {
            return Ok(refused(Refusal::NoPage { reference }));
        };
        let digits = reference.strip_prefix('e').unwrap_or_default();
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(refused(Refusal::NotARef { reference }));
        }
        let control = latest
            .controls
            .iter()
            .find(|c| c.reference == reference)
            .cloned();
        let known = latest.refs.contains(&reference);
        let element = self.element(&reference).await?;
        if !known || !element.present {
            let page = self.page_now().await?;
            return Ok(refused(Refusal::Stale { reference, page }));
        }
        let name = what(&reference, control.as_ref());
        if element.hidden {
            return Ok(refused(Refusal::Hidden {
                what: name,
                hover: naming(
                    holds,
                    "web::hover",
                    "web::hover the element that opens it first, then act on it.",
                ),
            }));
        }
        let select = element.tag == "SELECT";
        match action {
            Action::Fill { .. } if select => {
                return Ok(refused(Refusal::FillOnDropDown {
                    what: name,
                    select: naming(
                        holds,
                        "web::select",
                        "web::select chooses one of its options by label or value.",
                    ),
                }));
            }
            Action::Fill { .. } if !element.fillable => {
                return Ok(refused(Refusal::NotFillable { what: name }));
            }
            Action::Select { .. } if !select => {
                return Ok(refused(Refusal::NotDropDown { what: name }));
            }
            // A link to a scheme the browser does not open is refused for
            // what it is, not left to Chromium's silence (§3.4 scope).
            Action::Click { .. } => {
                if let Some(href) = &element.href
                    && let Some(scheme) = unserved_scheme(href)
                {
                    return Ok(refused(Refusal::Scheme {
                        url: href.clone(),
                        scheme,
                    }));
                }
            }
            _ => {}
        }
        // Present and visible, yet not to be acted on: the element's
        // failure, with the page still there (§3.4).
        if element.disabled && !matches!(action, Action::Hover { .. }) {
            let page = self.page_now().await?;
            return Ok(refused(Refusal::ElementFailed {
                tool: action.tool().to_string(),
                what: name,
                reason: "it is disabled or read-only, so the page takes no action on it".into(),
                page,
            }));
        }
        let selector = format!("[{REF_ATTRIBUTE}=\"{reference}\"]");
        self.begin();
        let done = match action {
            Action::Click { .. } => self.click(&selector).await,
            Action::Hover { .. } => self.hover(&selector).await,
            Action::Fill { text, .. } => self.fill(&selector, text).await,
            Action::Select { option, .. } => match choose(&element.options, option) {
                Some(index) => self.select(&selector, index).await,
                None => {
                    return Ok(refused(Refusal::NoSuchOption {
                        what: name,
                        ask: option.clone(),
                        near: near(&element.options, option),
                    }));
                }
            },
            Action::Navigate { .. } => Ok(()),
        };
        if let Err(reason) = done {
            if self.chromium.is_gone() {
                return Err(Ended(reason));
            }
            let page = self.page_now().await?;
            return Ok(refused(Refusal::ElementFailed {
                tool: action.tool().to_string(),
                what: name,
                reason,
                page,
            }));
        }
        settle(&self.page, &self.traffic, Instant::now() + self.settle_wait).await;
        self.finish(holds, config, None).await
    }

    /// Forgets what the previous action saw of the network.
    fn begin(&self) {
        self.interception.reset();
        self.traffic.reset();
    }

    async fn element(&self, reference: &str) -> Result<Element, Ended> {
        let script = format!(
            "(() => {{
                const el = document.querySelector('[{REF_ATTRIBUTE}=\"{reference}\"]');
                if (!el) return {{ present: false }};
                const r = el.getBoundingClientRect();
                const hidden = !el.checkVisibility({{ checkOpacity: true, checkVisibilityCSS: true }}) || r.width === 0 || r.height === 0;
                const t = el.tagName;
                const fillable = el.isContentEditable || t === 'TEXTAREA' ||
                    (t === 'INPUT' && !['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'hidden', 'range', 'color'].includes(el.type));
                const options = t === 'SELECT' ? Array.from(el.options).map((o) => ({{ label: (o.label || o.text).trim(), value: o.value }})) : [];
                const href = (t === 'A' || t === 'AREA') && el.hasAttribute('href') ? el.href : null;
                const disabled = el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true' || (t !== 'SELECT' && el.readOnly === true);
                return {{ present: true, hidden, tag: t, fillable, disabled, options, href }};
            }})()"
        );
        let result = self
            .page
            .evaluate(script)
            .await
            .map_err(|e| Ended(format!("its page did not answer: {e}")))?;
        result
            .into_value()
            .map_err(|e| Ended(format!("its page answered in a way not understood: {e}")))
    }

    async fn click(&self, selector: &str) -> Result<(), String> {
        let element = self
            .page
            .find_element(selector)
            .await
            .map_err(|e| e.to_string())?;
        element.click().await.map_err(|e| e.to_string())?;
        Ok(())
    }

    async fn hover(&self, selector: &str) -> Result<(), String> {
        let element = self
            .page
            .find_element(selector)
            .await
            .map_err(|e| e.to_string())?;
        element.hover().await.map_err(|e| e.to_string())?;
        Ok(())
    }

    async fn fill(&self, selector: &str, text: &str) -> Result<(), String> {
        let element = self
            .page
            .find_element(selector)
            .await
            .map_err(|e| e.to_string())?;
        element
            .scroll_into_view()
            .await
            .map_err(|e| e.to_string())?;
        // Emptied through the element's own value setter, so a framework
        // watching it sees the change, then typed as text input.
        element
            .call_js_fn(
                "function() {
                    this.focus();
                    if (this.isContentEditable) {
                        const range = document.createRange();
                        range.selectNodeContents(this);
                        const selection = getSelection();
                        selection.removeAllRanges();
                        selection.addRange(range);
                        document.execCommand('delete');
                    } else {
                        const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(this), 'value').set;
                        setter.call(this, '');
                        this.dispatchEvent(new Event('input', { bubbles: true }));
                    }
                }",
                false,
            )
            .await
            .map_err(|e| e.to_string())?;
        if !text.is_empty() {
            self.page
                .execute(InsertTextParams::new(text))
                .await
                .map_err(|e| e.to_string())?;
        }
        element
            .call_js_fn(
                "function() { this.dispatchEvent(new Event('change', { bubbles: true })); }",
                false,
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    async fn select(&self, selector: &str, index: usize) -> Result<(), String> {
        let element = self
            .page
            .find_element(selector)
            .await
            .map_err(|e| e.to_string())?;
        element
            .call_js_fn(
                format!(
                    "function() {{
                        this.selectedIndex = {index};
                        this.dispatchEvent(new Event('input', {{ bubbles: true }}));
                        this.dispatchEvent(new Event('change', {{ bubbles: true }}));
                    }}"
                ),
                false,
            )
            .await
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The page as it now is, rendered, and kept as the latest snapshot.
    async fn page_now(&mut self) -> Result<String, Ended> {
        let taken = snapshot::take(&self.page)
            .await
            .map_err(|e| Ended(e.to_string()))?;
        let text = snapshot::render(
            &taken,
            &Extras {
                closed_tabs: Vec::new(),
                previous_page: None,
            },
        );
        self.latest = Some(taken);
        Ok(text)
    }

    /// After an action settled: what stopped it, else the page.
    async fn finish(
        &mut self,
        holds: Holds<'_>,
        config: &SessionsConfig,
        navigated: Option<(String, Option<String>)>,
    ) -> Result<Outcome, Ended> {
        let closed_tabs = tabs::close_others(&self.chromium.browser, self.page.target_id()).await;
        let seen = self.interception.seen();
        if let Some(url) = seen.scheme_refused {
            let scheme = url.split(':').next().unwrap_or_default().to_string();
            return Ok(refused(Refusal::Scheme { url, scheme }));
        }
        // The proxy's refusal of a document (a script's or a meta
        // refresh's hop included) is the refusal naming the address, never
        // the text it came as (§3.4 scope).
        if let Some(url) = seen.proxy_refused {
            let text = Url::parse(&url)
                .ok()
                .and_then(|parsed| (config.refusal_for)(&parsed))
                .unwrap_or_else(|| format!("the egress proxy refused {url}"));
            return Ok(refused(Refusal::Blocked(text)));
        }
        if let Some((url, kind)) = seen.not_html {
            let kind = match kind.as_str() {
                "application/pdf" => "a PDF".to_string(),
                k if k.starts_with("text/") => format!("text ({k})"),
                k => k.to_string(),
            };
            return Ok(refused(Refusal::NotHtml {
                url,
                kind,
                fetch: naming(holds, "web::fetch", "web::fetch reads it."),
            }));
        }
        let taken = snapshot::take(&self.page)
            .await
            .map_err(|e| Ended(format!("its page could not be read: {e}")))?;
        if taken.url.starts_with("chrome-error:") || taken.url == "about:blank" {
            let failed = self.traffic.failed_documents();
            // An aborted load is what a failure leaves behind as well as a
            // failure of its own; the failure that says why comes first.
            let telling = failed
                .iter()
                .rev()
                .find(|(_, error)| !error.contains("ERR_ABORTED"))
                .or(failed.last());
            let (url, reason) = match (telling, navigated) {
                (Some((url, error)), _) => (url.clone(), error.clone()),
                (None, Some((url, Some(error)))) => (url, error),
                (None, Some((url, None))) => (url, String::new()),
                (None, None) => (taken.url.clone(), String::new()),
            };
            if let Ok(parsed) = Url::parse(&url)
                && let Some(text) = (config.refusal_for)(&parsed)
            {
                return Ok(refused(Refusal::Blocked(text)));
            }
            if let Some(problem) = from_chromium_net_error(&reason) {
                return Ok(refused(Refusal::Certificate(
                    certificate_text(problem, &url, holds, config).await,
                )));
            }
            return Ok(refused(Refusal::DidNotLoad {
                url,
                reason: net_error::words(&reason),
            }));
        }
        let previous_page = self
            .latest
            .as_ref()
            .filter(|before| before.url == taken.url)
            .map(|before| before.page.clone());
        let text = snapshot::render(
            &taken,
            &Extras {
                closed_tabs,
                previous_page,
            },
        );
        self.latest = Some(taken);
        Ok(Outcome::Page(text))
    }
}

/// The address `asked` names, if the browser opens it (§3.4: only http(s)).
pub fn openable(asked: &str) -> Result<Url, Refusal> {
    let url = Url::parse(asked.trim()).map_err(|error| Refusal::Unparsed {
        url: asked.to_string(),
        reason: error.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Refusal::Scheme {
            url: url.to_string(),
            scheme: url.scheme().to_string(),
        });
    }
    Ok(url)
}

/// The scheme of a link the browser would not follow, if it is one: a
/// script link (`javascript:`) is the page's own script, not a load.
fn unserved_scheme(href: &str) -> Option<String> {
    let scheme = href
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    (!matches!(scheme.as_str(), "http" | "https" | "javascript")).then_some(scheme)
}

fn refused(refusal: Refusal) -> Outcome {
    Outcome::Refused(refusal.to_string())
}

/// The option `ask` names, by label or value, exactly, else ignoring case.
fn choose(options: &[OptionEntry], ask: &str) -> Option<usize> {
    let ask = ask.trim();
    options
        .iter()
        .position(|o| o.label == ask)
        .or_else(|| options.iter().position(|o| o.value == ask))
        .or_else(|| {
            options
                .iter()
                .position(|o| o.label.to_lowercase() == ask.to_lowercase())
        })
}

/// The options whose labels contain `ask` (§3.4), bounded.
fn near(options: &[OptionEntry], ask: &str) -> String {
    let needle = ask.trim().to_lowercase();
    let containing: Vec<String> = options
        .iter()
        .filter(|o| !needle.is_empty() && o.label.to_lowercase().contains(&needle))
        .take(snapshot::OPTIONS_SHOWN)
        .map(|o| format!("\"{}\"", o.label))
        .collect();
    if containing.is_empty() {
        format!("No option's label contains `{}`.", ask.trim())
    } else {
        format!(
            "Options whose labels contain `{}`: {}.",
            ask.trim(),
            containing.join(", ")
        )
    }
}

/// A certificate Chromium refused, told as the fetch route tells it: where
/// Chromium's error cannot say whose fault it is, the fetch route's verifier
/// is asked about the same site (§3.4 certificates).
async fn certificate_text(
    problem: CertificateProblem,
    url: &str,
    holds: Holds<'_>,
    config: &SessionsConfig,
) -> String {
    let parsed = Url::parse(url).ok();
    let problem = match (&problem, &parsed) {
        (CertificateProblem::UntrustedIssuer, Some(parsed)) => {
            (config.check_certificate)(parsed.clone())
                .await
                .unwrap_or(problem)
        }
        _ => problem,
    };
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str().map(str::to_string))
        .unwrap_or_else(|| url.to_string());
    problem.describe(&host, Route::Browser, &|tool: &str| holds(tool))
}
