//! One provider and its completions (§7.2): every completion streams under an
//! idle timeout (time with nothing received) and a wall-clock limit; the
//! transport is retried invisibly with bounded backoff, a rate limit's wait
//! honoured up to the policy's longest; a request whose turn was killed, or
//! whose completion a steer or a fold aborted, is never retried.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderValue};
use tokio::sync::watch;
use tokio::time::Instant;

use super::anthropic::{self, AnthropicWire};
use super::assemble::Assembler;
use super::failure::{Failure, TransportCause};
use super::openai::{self, Broken, OpenAiWire, Step};
use super::request::CompletionRequest;
use super::retry::{RetryPolicy, retry_after};
use super::sse::SseParser;
use super::{Completion, FinishReason, StreamEvent};
use crate::config::model::ProviderKind;
use collegium_worker_kit::redact::Redacted;

/// How to reach one model.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// The API's base URL, ending before `chat/completions` or `messages`.
    pub base_url: String,
    /// Never printed: this struct's `Debug` shows `[redacted]` for it.
    pub api_key: Option<Redacted<String>>,
    /// The provider's own name for the model.
    pub model: String,
    pub max_output_tokens: Option<u32>,
    /// The model ref's reasoning effort in the provider's own vocabulary,
    /// stated on every request (§3.12); unset, the provider's default
    /// stands.
    pub reasoning_effort: Option<String>,
}

impl ProviderConfig {
    /// The configuration of a model, with its key already read.
    pub fn from_model(
        model: &crate::config::model::Model,
        api_key: Option<Redacted<String>>,
    ) -> Self {
        Self {
            kind: model.provider,
            base_url: model
                .base_url
                .clone()
                .unwrap_or_else(|| Self::default_base_url(model.provider).to_string()),
            api_key,
            model: model.model.clone(),
            max_output_tokens: model.max_output_tokens,
            reasoning_effort: model.reasoning_effort.clone(),
        }
    }

    /// The public base URL of each provider kind.
    pub fn default_base_url(kind: ProviderKind) -> &'static str {
        match kind {
            ProviderKind::OpenaiCompatible => "https://api.openai.com/v1",
            ProviderKind::Openrouter => "https://openrouter.ai/api/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com/v1",
        }
    }
}

/// The two limits every completion runs under (§7.2).
#[derive(Debug, Clone, Copy)]
pub struct CallLimits {
    /// How long the provider may send nothing.
    pub idle_timeout: Duration,
    /// How long one completion may run, however it keeps going.
    pub wall_clock: Duration,
}

/// The receiving end of an abort: set when a steer, a fold or a kill ends
/// the completion in flight.
#[derive(Debug, Clone)]
pub struct Cancel(watch::Receiver<bool>);

/// The sending end of an abort.
#[derive(Debug)]
pub struct CancelHandle(watch::Sender<bool>);

impl Cancel {
    pub fn new() -> (CancelHandle, Cancel) {
        let (tx, rx) = watch::channel(false);
        (CancelHandle(tx), Cancel(rx))
    }

    /// An abort that never comes.
    pub fn never() -> Cancel {
        let (handle, cancel) = Self::new();
        // Keep the sender alive for as long as the receiver may ask.
        std::mem::forget(handle);
        cancel
    }

    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    async fn cancelled(&mut self) {
        while !*self.0.borrow() {
            if self.0.changed().await.is_err() {
                // The handle is gone: nothing can abort now.
                std::future::pending::<()>().await;
            }
        }
    }
}

impl CancelHandle {
    pub fn cancel(&self) {
        let _ = self.0.send(true);
    }
}

pub struct Provider {
    config: ProviderConfig,
    http: reqwest::Client,
    policy: RetryPolicy,
}

/// How one attempt ended, short of a completion.
enum AttemptError {
    Retry {
        cause: TransportCause,
        wait: Option<Duration>,
    },
    Malformed,
    Final(Failure),
}

impl Provider {
    pub fn new(config: ProviderConfig, policy: RetryPolicy) -> Result<Self, reqwest::Error> {
        // No proxy from the environment: a provider is reached as configured.
        let http = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(policy.connect_timeout)
            .build()?;
        Ok(Self {
            config,
            http,
            policy,
        })
    }

    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn endpoint(&self) -> String {
        let base = self.config.base_url.trim_end_matches('/');
        match self.config.kind {
            ProviderKind::Anthropic => format!("{base}/messages"),
            _ => format!("{base}/chat/completions"),
        }
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let key = self
            .config
            .api_key
            .as_ref()
            .map_or("", |k| k.expose().as_str());
        // A key header is marked sensitive: the HTTP client's own `Debug`
        // and logs then hide it too.
        let sensitive = |mut value: HeaderValue| {
            value.set_sensitive(true);
            value
        };
        match self.config.kind {
            ProviderKind::Anthropic => {
                if let Ok(value) = HeaderValue::from_str(key) {
                    headers.insert("x-api-key", sensitive(value));
                }
                headers.insert(
                    "anthropic-version",
                    HeaderValue::from_static(anthropic::API_VERSION),
                );
            }
            _ if !key.is_empty() => {
                if let Ok(value) = HeaderValue::from_str(&format!("Bearer {key}")) {
                    headers.insert(reqwest::header::AUTHORIZATION, sensitive(value));
                }
            }
            _ => {}
        }
        headers
    }

    fn body(&self, request: &CompletionRequest) -> serde_json::Value {
        let model = &self.config.model;
        // The configured effort holds for every completion of this model; a
        // request that names its own overrides it (§3.12).
        let effort = request
            .reasoning_effort
            .as_deref()
            .or(self.config.reasoning_effort.as_deref());
        match self.config.kind {
            ProviderKind::Anthropic => {
                AnthropicWire::default().body(model, request, self.config.max_output_tokens, effort)
            }
            _ => OpenAiWire::for_provider(&self.config).body(
                model,
                request,
                self.config.max_output_tokens,
                effort,
            ),
        }
    }

    /// Streams one completion, retrying the transport as §7.2 allows.
    /// `observe` sees every event as it arrives, and `StreamEvent` order is
    /// the provider's; an attempt that is retried is followed by the next
    /// attempt's events from its start.
    pub async fn complete(
        &self,
        request: &CompletionRequest,
        limits: CallLimits,
        mut cancel: Cancel,
        observe: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Completion, Failure> {
        let deadline = Instant::now() + limits.wall_clock;
        let body = self.body(request);
        let mut last = TransportCause::Connection;
        let mut malformed = 0;
        let mut last_was_malformed = false;
        let mut wait = None;
        for attempt in 0..self.policy.attempts {
            if attempt > 0 {
                let pause = wait.take().unwrap_or_else(|| self.policy.backoff(attempt));
                // A pause the lane cannot afford is an outage now, not a time
                // limit later: the model never spoke (§7.1).
                if Instant::now() + pause >= deadline {
                    return Err(Failure::Outage(last));
                }
                tokio::select! {
                    _ = tokio::time::sleep(pause) => {}
                    _ = cancel.cancelled() => return Err(Failure::Aborted { estimated: super::Usage::default() }),
                }
                observe(&StreamEvent::Restart);
            }
            if cancel.is_cancelled() {
                return Err(Failure::Aborted {
                    estimated: super::Usage::default(),
                });
            }
            match self
                .attempt(&body, limits, deadline, &mut cancel, observe)
                .await
            {
                Ok(mut completion) => {
                    completion.retries = attempt;
                    return Ok(completion);
                }
                Err(AttemptError::Final(failure)) => return Err(failure),
                Err(AttemptError::Malformed) => {
                    malformed += 1;
                    last_was_malformed = true;
                    tracing::debug!(attempt, "the completion arrived malformed; retrying");
                }
                Err(AttemptError::Retry { cause, wait: asked }) => {
                    last_was_malformed = false;
                    match (&cause, asked) {
                        // A wait that long is the silent stall A4 rejects.
                        (TransportCause::RateLimited(_), Some(asked))
                            if asked > self.policy.longest_wait =>
                        {
                            return Err(Failure::Outage(TransportCause::RateLimited(Some(asked))));
                        }
                        (TransportCause::RateLimited(_), asked) => {
                            last = TransportCause::RateLimited(asked);
                            wait = asked;
                        }
                        // Any other asked wait is honoured within the same bound.
                        (_, asked) => {
                            last = cause.clone();
                            wait = asked.filter(|w| *w <= self.policy.longest_wait);
                        }
                    }
                    tracing::debug!(attempt, cause = %last.phrase(), "completion attempt failed; retrying");
                }
            }
        }
        // Still malformed once the retries are spent: a semantic error (§7.2).
        if last_was_malformed {
            Err(Failure::Malformed(malformed))
        } else {
            Err(Failure::Outage(last))
        }
    }

    async fn attempt(
        &self,
        body: &serde_json::Value,
        limits: CallLimits,
        deadline: Instant,
        cancel: &mut Cancel,
        observe: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Completion, AttemptError> {
        let assembler = Assembler::default();
        let send = self
            .http
            .post(self.endpoint())
            .headers(self.headers())
            .json(body)
            .send();
        // Until the connection stands, the connect timeout bounds the wait
        // and names its own cause; the idle timeout counts from there, so a
        // connection still being made is never "the provider went quiet"
        // (§7.1). The connect phase is not visible from here, so the idle
        // wait for the response's head starts with the connect timeout.
        let head_wait = limits.idle_timeout + self.policy.connect_timeout;
        let response = tokio::select! {
            result = tokio::time::timeout(head_wait, send) => match result {
                Err(_) => return Err(AttemptError::Retry { cause: TransportCause::Quiet, wait: None }),
                Ok(Err(error)) => return Err(AttemptError::Retry { cause: transport_cause(&error), wait: None }),
                Ok(Ok(response)) => response,
            },
            _ = tokio::time::sleep_until(deadline) => return Ok(time_limited(assembler)),
            _ = cancel.cancelled() => return Err(AttemptError::Final(Failure::Aborted { estimated: assembler.estimate() })),
        };
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let asked = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| retry_after(v, chrono::Utc::now()));
            let text = tokio::time::timeout(limits.idle_timeout, response.text())
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_default();
            let classed = match self.config.kind {
                ProviderKind::Anthropic => anthropic::classify(status, &text),
                _ => openai::classify(status, &text),
            };
            return match classed {
                Ok(cause) => Err(AttemptError::Retry { cause, wait: asked }),
                Err(failure) => Err(AttemptError::Final(failure)),
            };
        }
        self.read_stream(response, limits, deadline, cancel, observe, assembler)
            .await
    }

    async fn read_stream(
        &self,
        mut response: reqwest::Response,
        limits: CallLimits,
        deadline: Instant,
        cancel: &mut Cancel,
        observe: &mut (dyn FnMut(&StreamEvent) + Send),
        assembler: Assembler,
    ) -> Result<Completion, AttemptError> {
        let mut decoder = StreamDecoder::new(self.config.kind, assembler);
        loop {
            let chunk = tokio::select! {
                result = tokio::time::timeout(limits.idle_timeout, response.chunk()) => match result {
                    Err(_) => return Err(AttemptError::Retry { cause: TransportCause::Quiet, wait: None }),
                    Ok(Err(_)) | Ok(Ok(None)) => return Err(AttemptError::Retry { cause: TransportCause::Cut, wait: None }),
                    Ok(Ok(Some(bytes))) => bytes,
                },
                _ = tokio::time::sleep_until(deadline) => return Ok(time_limited(decoder.assembler)),
                _ = cancel.cancelled() => {
                    return Err(AttemptError::Final(Failure::Aborted { estimated: decoder.assembler.estimate() }));
                }
            };
            if let Some(completion) = decoder.feed(&chunk, observe)? {
                return Ok(completion);
            }
        }
    }
}

/// Reads one wire's SSE bytes into events and, at the end marker, a
/// completion: the adapter's parsing, apart from the transport.
struct StreamDecoder {
    kind: ProviderKind,
    parser: SseParser,
    openai: OpenAiWire,
    anthropic: AnthropicWire,
    assembler: Assembler,
}

impl StreamDecoder {
    fn new(kind: ProviderKind, assembler: Assembler) -> Self {
        Self {
            kind,
            parser: SseParser::default(),
            openai: OpenAiWire {
                openrouter: kind == ProviderKind::Openrouter,
                openai_itself: false,
            },
            anthropic: AnthropicWire::default(),
            assembler,
        }
    }

    fn feed(
        &mut self,
        bytes: &[u8],
        observe: &mut (dyn FnMut(&StreamEvent) + Send),
    ) -> Result<Option<Completion>, AttemptError> {
        for event in self.parser.feed(bytes) {
            let mut events = Vec::new();
            let step = match self.kind {
                ProviderKind::Anthropic => {
                    self.anthropic
                        .parse(&event, &mut self.assembler, &mut events)
                }
                _ => self.openai.parse(&event, &mut self.assembler, &mut events),
            };
            for event in &events {
                self.assembler.push(event);
                observe(event);
            }
            match step {
                Ok(Step::Continue) => {}
                Ok(Step::Done) => {
                    let assembler = std::mem::take(&mut self.assembler);
                    return assembler
                        .finish()
                        .map(Some)
                        .map_err(|_| AttemptError::Malformed);
                }
                Err(Broken::Malformed) => return Err(AttemptError::Malformed),
                Err(Broken::Failed(failure)) => return Err(AttemptError::Final(failure)),
                Err(Broken::Retry(cause)) => return Err(AttemptError::Retry { cause, wait: None }),
            }
        }
        Ok(None)
    }
}

/// Decodes a whole recorded stream of `kind` into its completion, as the
/// adapter would read it off the wire (for recorded-stream tests and the
/// parsing benchmark).
pub fn decode(kind: ProviderKind, stream: &[u8]) -> Result<Completion, Failure> {
    let mut decoder = StreamDecoder::new(kind, Assembler::default());
    let mut ignore = |_: &StreamEvent| {};
    match decoder.feed(stream, &mut ignore) {
        Ok(Some(completion)) => Ok(completion),
        Ok(None) => Err(Failure::Outage(TransportCause::Cut)),
        Err(AttemptError::Final(failure)) => Err(failure),
        Err(AttemptError::Malformed) => Err(Failure::Malformed(1)),
        Err(AttemptError::Retry { cause, .. }) => Err(Failure::Outage(cause)),
    }
}

/// A completion the wall-clock limit cut: what streamed, its usage an
/// estimate, never retried (§7.1 output cut, §7.2).
fn time_limited(assembler: Assembler) -> Completion {
    let estimated = assembler.estimate();
    let mut completion = assembler.finish().unwrap_or_else(|_| Completion {
        text: String::new(),
        tool_calls: Vec::new(),
        reasoning: None,
        usage: estimated,
        usage_estimated: true,
        finish: FinishReason::TimeLimit,
        upstream: None,
        leaked: None,
        retries: 0,
    });
    // A call still streaming when the limit struck did not finish.
    completion.tool_calls.clear();
    completion.usage = estimated;
    completion.usage_estimated = true;
    completion.finish = FinishReason::TimeLimit;
    completion
}

/// The cause of a request that failed before any answer.
fn transport_cause(error: &reqwest::Error) -> TransportCause {
    let chain = {
        let mut text = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            text.push_str(": ");
            text.push_str(&inner.to_string());
            source = inner.source();
        }
        text.to_lowercase()
    };
    if error.is_connect() && error.is_timeout() {
        TransportCause::ConnectTimeout
    } else if error.is_timeout() {
        TransportCause::Quiet
    } else if chain.contains("dns error")
        || chain.contains("failed to lookup address")
        || chain.contains("name or service not known")
    {
        TransportCause::Unresolved
    } else if chain.contains("connection refused") {
        TransportCause::Refused
    } else {
        TransportCause::Connection
    }
}
