//! The daemon's inference adapters against the model simulator over real
//! HTTP: each wire's round trip, reasoning handed back unaltered (§3.12),
//! OpenRouter's routing and cost, Anthropic's cache breakpoints (§3.8), every
//! retry rule (§7.2) and every failure class with its fixed phrase (§7.1).

use std::time::Duration;

use collegium_control::config::model::ProviderKind;
use collegium_control::inference::verify::{Verification, verify};
use collegium_control::inference::{
    AssistantMessage, CallLimits, Cancel, Completion, CompletionRequest, Failure, FinishReason,
    LeakForm, Message, Provider, ProviderConfig, ReasoningReplay, RetryPolicy, StreamEvent,
    ToolSpec, TransportCause,
};
use model_sim::script::{Failure as Inject, Scripted, ScriptedCall, Usage};
use serde_json::json;

const MODEL: &str = "sim-model";

/// A model simulator on a free loopback port.
async fn start_sim() -> model_sim::Running {
    model_sim::start("127.0.0.1:0".parse().expect("addr"), false)
        .await
        .expect("start the model simulator")
}

fn policy() -> RetryPolicy {
    RetryPolicy {
        attempts: 3,
        base_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        longest_wait: Duration::from_secs(5),
        connect_timeout: Duration::from_secs(2),
    }
}

fn limits() -> CallLimits {
    CallLimits {
        idle_timeout: Duration::from_millis(500),
        wall_clock: Duration::from_secs(10),
    }
}

fn provider(kind: ProviderKind, url: &str) -> Provider {
    let base_url = match kind {
        ProviderKind::Openrouter => format!("{url}/api/v1"),
        _ => format!("{url}/v1"),
    };
    let config = ProviderConfig {
        kind,
        base_url,
        api_key: Some("sk-test".into()),
        model: MODEL.into(),
        max_output_tokens: Some(1024),
        reasoning_effort: None,
    };
    Provider::new(config, policy()).expect("provider")
}

fn request() -> CompletionRequest {
    CompletionRequest {
        system: "You are Mira.".into(),
        tools: vec![ToolSpec {
            name: "web__fetch".into(),
            description: "Fetch a page.".into(),
            parameters: json!({"type": "object", "properties": {"url": {"type": "string"}}}),
        }],
        messages: vec![Message::User("What is on example.com?".into())],
        ..CompletionRequest::default()
    }
}

async fn complete(
    provider: &Provider,
    request: &CompletionRequest,
) -> (Result<Completion, Failure>, Vec<StreamEvent>) {
    let mut events = Vec::new();
    let mut observe = |e: &StreamEvent| events.push(e.clone());
    let result = provider
        .complete(request, limits(), Cancel::never(), &mut observe)
        .await;
    (result, events)
}

fn text_and_call() -> Scripted {
    Scripted {
        text: Some("Let me fetch it.".into()),
        tool_calls: vec![ScriptedCall {
            name: "web__fetch".into(),
            arguments: json!({"url": "https://example.com"}),
            raw_arguments: None,
        }],
        usage: Some(Usage {
            prompt_tokens: 120,
            completion_tokens: 30,
            cached_tokens: 100,
            cache_write_tokens: 20,
            reasoning_tokens: 7,
        }),
        ..Scripted::default()
    }
}

fn failing(fail: Inject) -> Scripted {
    Scripted {
        fail: Some(fail),
        ..Scripted::default()
    }
}

const KINDS: [ProviderKind; 3] = [
    ProviderKind::OpenaiCompatible,
    ProviderKind::Openrouter,
    ProviderKind::Anthropic,
];

#[tokio::test]
async fn each_wire_streams_text_a_tool_call_and_usage() {
    for kind in KINDS {
        let sim = start_sim().await;
        sim.sim.script(MODEL, vec![text_and_call()]);
        let (result, events) = complete(&provider(kind, &sim.url), &request()).await;
        let completion = result.unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(completion.text, "Let me fetch it.", "{kind:?}");
        assert_eq!(completion.tool_calls.len(), 1, "{kind:?}");
        let call = &completion.tool_calls[0];
        assert_eq!(call.name, "web__fetch");
        assert!(!call.id.is_empty());
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&call.arguments).expect("json"),
            json!({"url": "https://example.com"})
        );
        assert_eq!(completion.finish, FinishReason::ToolCalls, "{kind:?}");
        assert_eq!(completion.usage.prompt_tokens, 120, "{kind:?}");
        assert_eq!(completion.usage.completion_tokens, 30, "{kind:?}");
        assert_eq!(completion.usage.cached_prompt_tokens, 100, "{kind:?}");
        assert!(!completion.usage_estimated);
        assert_eq!(completion.retries, 0);
        assert!(
            events.iter().any(|e| matches!(e, StreamEvent::Text(_))),
            "{kind:?}: text arrives as deltas"
        );
        assert!(
            events
                .iter()
                .filter(|e| matches!(e, StreamEvent::ToolCallDelta { .. }))
                .count()
                > 1,
            "{kind:?}: arguments arrive in fragments"
        );
        match kind {
            ProviderKind::Anthropic => assert_eq!(completion.usage.cache_write_tokens, 20),
            _ => assert_eq!(completion.usage.reasoning_tokens, 7, "{kind:?}"),
        }
    }
}

#[tokio::test]
async fn reasoning_is_kept_and_handed_back_unaltered_in_each_wires_form() {
    for kind in KINDS {
        let sim = start_sim().await;
        let mut first = text_and_call();
        first.reasoning = Some("The user wants the page; fetch it first.".into());
        sim.sim.script(
            MODEL,
            vec![
                first,
                Scripted {
                    text: Some("Done.".into()),
                    ..Scripted::default()
                },
            ],
        );
        let provider = provider(kind, &sim.url);
        let (result, events) = complete(&provider, &request()).await;
        let completion = result.expect("first");
        let reasoning = completion.reasoning.clone().expect("reasoning kept");
        assert_eq!(
            reasoning.text, "The user wants the page; fetch it first.",
            "{kind:?}"
        );
        assert!(
            events
                .iter()
                .any(|e| matches!(e, StreamEvent::Reasoning(_)))
        );

        // The next round of the same turn hands it back.
        let mut next = request();
        next.messages.push(Message::Assistant(AssistantMessage {
            text: completion.text.clone(),
            tool_calls: completion.tool_calls.clone(),
            reasoning: Some(reasoning.clone()),
        }));
        next.messages.push(Message::ToolResult {
            call_id: completion.tool_calls[0].id.clone(),
            name: "web__fetch".into(),
            content: "<html>Example Domain</html>".into(),
        });
        let (second, _) = complete(&provider, &next).await;
        assert_eq!(second.expect("second").text, "Done.");
        let sent = &sim.sim.requests()[1].body;
        match (kind, &reasoning.replay) {
            (ProviderKind::Anthropic, ReasoningReplay::ThinkingBlocks(blocks)) => {
                let assistant = &sent["messages"][1]["content"];
                assert_eq!(
                    assistant[0], blocks[0],
                    "the thinking block goes back byte for byte"
                );
                assert_eq!(assistant[0]["type"], "thinking");
                // The simulator signs with the reasoning's length, sent in two
                // deltas the adapter must join.
                let issued = format!(
                    "sim-signature-{}",
                    "The user wants the page; fetch it first.".len()
                );
                assert_eq!(assistant[0]["signature"], issued.as_str());
                assert_eq!(assistant[1]["type"], "text");
                assert_eq!(assistant[2]["type"], "tool_use");
                assert_eq!(sent["messages"][2]["content"][0]["type"], "tool_result");
            }
            (ProviderKind::Openrouter, ReasoningReplay::Details(details)) => {
                assert_eq!(&sent["messages"][2]["reasoning_details"], &json!(details));
            }
            (ProviderKind::OpenaiCompatible, ReasoningReplay::Content) => {
                assert_eq!(
                    sent["messages"][2]["reasoning_content"],
                    reasoning.text.as_str()
                );
            }
            other => panic!("unexpected replay form {other:?}"),
        }
    }
}

#[tokio::test]
async fn openrouter_routes_by_preferred_upstreams_and_reports_the_upstream_and_cost() {
    let sim = start_sim().await;
    let mut scripted = text_and_call();
    scripted.cost = Some(0.001_234);
    sim.sim.script(MODEL, vec![scripted]);
    let mut req = request();
    req.preferred_upstreams = vec!["deepseek".into(), "fireworks".into()];
    req.reasoning_effort = Some("high".into());
    let (result, _) = complete(&provider(ProviderKind::Openrouter, &sim.url), &req).await;
    let completion = result.expect("completion");
    assert_eq!(completion.upstream.as_deref(), Some("deepseek"));
    assert_eq!(completion.usage.cost_micro_usd, Some(1234));
    let sent = &sim.sim.requests()[0].body;
    assert_eq!(sent["provider"]["order"], json!(["deepseek", "fireworks"]));
    assert_eq!(sent["reasoning"]["effort"], "high");
    assert_eq!(sent["usage"]["include"], true);
    assert_eq!(
        sim.sim.requests()[0].authorization.as_deref(),
        Some("Bearer sk-test")
    );
}

#[tokio::test]
async fn s3_12_a_models_reasoning_effort_reaches_every_wire_in_its_own_vocabulary() {
    let cases = [
        (
            ProviderKind::OpenaiCompatible,
            "high",
            "/reasoning_effort",
            json!("high"),
        ),
        (
            ProviderKind::Openrouter,
            "high",
            "/reasoning/effort",
            json!("high"),
        ),
        (
            ProviderKind::Anthropic,
            "4096",
            "/thinking/budget_tokens",
            json!(4096),
        ),
    ];
    for (kind, effort, pointer, expected) in cases {
        let sim = start_sim().await;
        sim.sim.script(MODEL, vec![text_and_call()]);
        let base_url = match kind {
            ProviderKind::Openrouter => format!("{}/api/v1", sim.url),
            _ => format!("{}/v1", sim.url),
        };
        // Configured on the model, never on the request: every completion
        // the runner asks for states it (§3.12).
        let provider = Provider::new(
            ProviderConfig {
                kind,
                base_url,
                api_key: Some("sk-test".into()),
                model: MODEL.into(),
                max_output_tokens: Some(1024),
                reasoning_effort: Some(effort.into()),
            },
            policy(),
        )
        .expect("provider");
        let (result, _) = complete(&provider, &request()).await;
        result.expect("completion");
        let sent = &sim.sim.requests()[0].body;
        assert_eq!(sent.pointer(pointer), Some(&expected), "{kind:?}: {sent}");
        if kind == ProviderKind::Anthropic {
            assert!(
                sent["max_tokens"].as_u64() > Some(4096),
                "max_tokens must exceed the thinking budget: {sent}"
            );
        }
    }
}

#[tokio::test]
async fn anthropic_caches_the_system_prompt_and_the_windows_stable_prefix() {
    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![Scripted {
            text: Some("ok".into()),
            ..Scripted::default()
        }],
    );
    let mut req = request();
    req.messages = vec![
        Message::User("first window post".into()),
        Message::Assistant(AssistantMessage {
            text: "an earlier reply".into(),
            ..AssistantMessage::default()
        }),
        Message::User("the framework's message after the window".into()),
    ];
    // The window ends at message 1; the message after it changes every turn.
    req.cache_breakpoints = vec![1];
    let (result, _) = complete(&provider(ProviderKind::Anthropic, &sim.url), &req).await;
    result.expect("completion");
    let recorded = &sim.sim.requests()[0];
    let sent = &recorded.body;
    assert_eq!(
        sent["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        sent["messages"][1]["content"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert!(
        sent["messages"][2]["content"][0]
            .get("cache_control")
            .is_none(),
        "the changing message is not cached"
    );
    assert!(
        sent["messages"][0]["content"][0]
            .get("cache_control")
            .is_none()
    );
    assert_eq!(recorded.api_key.as_deref(), Some("sk-test"));
    assert_eq!(sent["tools"][0]["input_schema"]["type"], "object");
}

#[tokio::test]
async fn transport_errors_are_retried_invisibly() {
    for kind in KINDS {
        let sim = start_sim().await;
        sim.sim.script(
            MODEL,
            vec![
                failing(Inject {
                    status: Some(503),
                    ..Inject::default()
                }),
                failing(Inject {
                    cut_after_chunks: Some(3),
                    ..Inject::default()
                }),
                text_and_call(),
            ],
        );
        let (result, _) = complete(&provider(kind, &sim.url), &request()).await;
        let completion = result.unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(completion.retries, 2, "{kind:?}");
        assert_eq!(completion.text, "Let me fetch it.");
        assert_eq!(sim.sim.requests().len(), 3);
    }
}

#[tokio::test]
async fn a_malformed_chunk_and_a_call_without_an_id_are_retried_then_fail_as_malformed() {
    for kind in KINDS {
        let sim = start_sim().await;
        let mut no_id = text_and_call();
        no_id.fail = Some(Inject {
            drop_call_id: true,
            ..Inject::default()
        });
        let mut no_name = text_and_call();
        no_name.fail = Some(Inject {
            drop_call_name: true,
            ..Inject::default()
        });
        sim.sim.script(
            MODEL,
            vec![
                failing(Inject {
                    malformed_after_chunks: Some(2),
                    ..Inject::default()
                }),
                no_id,
                no_name,
            ],
        );
        let (result, _) = complete(&provider(kind, &sim.url), &request()).await;
        assert_eq!(
            result.expect_err("malformed"),
            Failure::Malformed(3),
            "{kind:?}"
        );
        assert_eq!(sim.sim.requests().len(), 3);
    }
}

#[tokio::test]
async fn rate_limits_honour_retry_after_up_to_the_longest_wait() {
    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![
            failing(Inject {
                status: Some(429),
                retry_after: Some(1),
                ..Inject::default()
            }),
            text_and_call(),
        ],
    );
    let started = std::time::Instant::now();
    let (result, _) = complete(
        &provider(ProviderKind::OpenaiCompatible, &sim.url),
        &request(),
    )
    .await;
    assert_eq!(result.expect("retried after the asked wait").retries, 1);
    // The backoff alone is 10 ms; the provider asked for a second.
    assert!(
        started.elapsed() >= Duration::from_millis(950),
        "the asked wait was not honoured"
    );

    // A wait longer than the policy's longest is an outage at once, naming it.
    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![
            failing(Inject {
                status: Some(429),
                retry_after: Some(120),
                ..Inject::default()
            }),
            text_and_call(),
        ],
    );
    let (result, _) = complete(&provider(ProviderKind::Anthropic, &sim.url), &request()).await;
    let failure = result.expect_err("outage");
    assert_eq!(
        failure,
        Failure::Outage(TransportCause::RateLimited(Some(Duration::from_secs(120))))
    );
    assert_eq!(
        failure.phrase(),
        "provider outage: the provider rate-limited the request and asked to wait 120 s"
    );
    assert_eq!(sim.sim.requests().len(), 1, "not retried");
}

#[tokio::test]
async fn rejections_are_never_retried_and_each_has_its_phrase() {
    let cases: [(u16, Option<&str>, Failure, &str); 6] = [
        (
            401,
            None,
            Failure::Credential,
            "provider rejection: the provider refused the credential",
        ),
        (
            402,
            None,
            Failure::Balance,
            "provider rejection: the provider account's balance is exhausted",
        ),
        (
            403,
            None,
            Failure::Refused,
            "provider rejection: the provider refused the request on permission or moderation grounds",
        ),
        (
            404,
            None,
            Failure::Status(404),
            "provider rejection: the provider refused the request with status 404",
        ),
        (
            400,
            Some("context_length_exceeded"),
            Failure::ContextExhausted,
            "context exhausted: the request is longer than the model's context window",
        ),
        (
            429,
            Some("insufficient_quota"),
            Failure::Balance,
            "provider rejection: the provider account's balance is exhausted",
        ),
    ];
    for (status, code, expected, phrase) in cases {
        let sim = start_sim().await;
        let message = if code == Some("context_length_exceeded") {
            Some("This model's maximum context length is 8192 tokens".to_string())
        } else {
            None
        };
        sim.sim.script(
            MODEL,
            vec![failing(Inject {
                status: Some(status),
                code: code.map(str::to_string),
                message,
                ..Inject::default()
            })],
        );
        let (result, _) = complete(
            &provider(ProviderKind::OpenaiCompatible, &sim.url),
            &request(),
        )
        .await;
        let failure = result.expect_err("rejected");
        assert_eq!(failure, expected, "status {status}");
        assert_eq!(failure.phrase(), phrase);
        assert_eq!(sim.sim.requests().len(), 1, "status {status} was retried");
    }
}

#[tokio::test]
async fn a_provider_that_goes_quiet_is_cut_retried_and_named() {
    let sim = start_sim().await;
    let stall = || {
        failing(Inject {
            stall_after_chunks: Some(1),
            stall_ms: 5_000,
            ..Inject::default()
        })
    };
    sim.sim.script(MODEL, vec![stall(), stall(), stall()]);
    let (result, _) = complete(
        &provider(ProviderKind::OpenaiCompatible, &sim.url),
        &request(),
    )
    .await;
    let failure = result.expect_err("quiet");
    assert_eq!(failure, Failure::Outage(TransportCause::Quiet));
    assert_eq!(failure.phrase(), "provider outage: the provider went quiet");
    assert_eq!(sim.sim.requests().len(), 3);
}

#[tokio::test]
async fn connection_failures_are_named_by_their_cause() {
    // A port nothing listens on.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr")
    };
    let (result, _) = complete(
        &provider(ProviderKind::OpenaiCompatible, &format!("http://{closed}")),
        &request(),
    )
    .await;
    let failure = result.expect_err("refused");
    assert_eq!(failure, Failure::Outage(TransportCause::Refused));
    assert_eq!(
        failure.phrase(),
        "provider outage: the provider refused the connection"
    );

    let (result, _) = complete(
        &provider(ProviderKind::Anthropic, "http://collegium-provider.invalid"),
        &request(),
    )
    .await;
    assert_eq!(
        result.expect_err("unresolved"),
        Failure::Outage(TransportCause::Unresolved)
    );
}

#[tokio::test]
async fn s7_1_connecting_that_times_out_is_named_as_such_not_as_a_quiet_provider() {
    // A listener whose accept queue is full: the kernel drops further
    // connection attempts, so connecting hangs until its timeout.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("addr"))
        .expect("bind");
    let listener = socket.listen(0).expect("listen");
    let address = listener.local_addr().expect("addr");
    let mut fillers = Vec::new();
    for _ in 0..4 {
        if let Ok(Ok(stream)) = tokio::time::timeout(
            Duration::from_millis(200),
            tokio::net::TcpStream::connect(address),
        )
        .await
        {
            fillers.push(stream);
        }
    }
    let config = ProviderConfig {
        kind: ProviderKind::OpenaiCompatible,
        base_url: format!("http://{address}/v1"),
        api_key: Some("sk-test".into()),
        model: MODEL.into(),
        max_output_tokens: Some(1024),
        reasoning_effort: None,
    };
    // The idle timeout is shorter than the connect timeout: connecting is
    // still under way when a quiet provider would have been cut.
    let policy = RetryPolicy {
        attempts: 2,
        connect_timeout: Duration::from_millis(600),
        ..policy()
    };
    let provider = Provider::new(config, policy).expect("provider");
    let limits = CallLimits {
        idle_timeout: Duration::from_millis(200),
        wall_clock: Duration::from_secs(10),
    };
    let mut ignore = |_: &StreamEvent| {};
    let failure = provider
        .complete(&request(), limits, Cancel::never(), &mut ignore)
        .await
        .expect_err("connecting timed out");
    assert_eq!(failure, Failure::Outage(TransportCause::ConnectTimeout));
    assert_eq!(
        failure.phrase(),
        "provider outage: connecting to the provider timed out"
    );
    drop((fillers, listener));
}

#[tokio::test]
async fn s7_2_an_empty_completion_is_retried_as_transport_then_a_semantic_error() {
    for kind in KINDS {
        let sim = start_sim().await;
        sim.sim
            .script(MODEL, vec![Scripted::default(), text_and_call()]);
        let (result, events) = complete(&provider(kind, &sim.url), &request()).await;
        let completion = result.expect("the retry's completion");
        assert!(!completion.is_empty(), "{kind:?}");
        assert_eq!(sim.sim.requests().len(), 2, "{kind:?}: retried once");
        assert!(events.contains(&StreamEvent::Restart), "{kind:?}");

        let sim = start_sim().await;
        sim.sim.script(
            MODEL,
            vec![
                Scripted::default(),
                Scripted::default(),
                Scripted::default(),
            ],
        );
        let (result, _) = complete(&provider(kind, &sim.url), &request()).await;
        assert_eq!(
            result.expect_err("malformed"),
            Failure::Malformed(3),
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn filtered_output_is_a_rejection_and_length_is_a_cut() {
    for kind in KINDS {
        let sim = start_sim().await;
        let mut filtered = text_and_call();
        filtered.fail = Some(Inject {
            filtered: true,
            ..Inject::default()
        });
        let mut long = text_and_call();
        long.tool_calls.clear();
        long.fail = Some(Inject {
            length: true,
            ..Inject::default()
        });
        sim.sim.script(MODEL, vec![filtered, long]);
        let provider = provider(kind, &sim.url);
        let (result, _) = complete(&provider, &request()).await;
        assert_eq!(result.expect_err("filtered"), Failure::Filtered, "{kind:?}");
        let (result, _) = complete(&provider, &request()).await;
        assert_eq!(
            result.expect("cut").finish,
            FinishReason::Length,
            "{kind:?}"
        );
    }
}

#[tokio::test]
async fn the_time_limit_cuts_a_completion_and_estimates_what_streamed() {
    let sim = start_sim().await;
    let mut slow = text_and_call();
    slow.text = Some("A long answer that streams slowly, chunk by chunk, for a while.".into());
    slow.delay_ms = 150;
    sim.sim.script(MODEL, vec![slow]);
    let limits = CallLimits {
        idle_timeout: Duration::from_secs(2),
        wall_clock: Duration::from_millis(600),
    };
    let mut ignore = |_: &StreamEvent| {};
    let completion = provider(ProviderKind::OpenaiCompatible, &sim.url)
        .complete(&request(), limits, Cancel::never(), &mut ignore)
        .await
        .expect("cut, not failed");
    assert_eq!(completion.finish, FinishReason::TimeLimit);
    assert!(completion.usage_estimated);
    assert!(completion.usage.completion_tokens > 0);
    assert!(
        completion.tool_calls.is_empty(),
        "a call still streaming did not finish"
    );
    assert_eq!(sim.sim.requests().len(), 1, "never retried");
}

#[tokio::test]
async fn an_aborted_completion_is_never_retried() {
    let sim = start_sim().await;
    let mut held = text_and_call();
    held.hold = Some("forever".into());
    sim.sim.script(MODEL, vec![held, text_and_call()]);
    let provider = provider(ProviderKind::Anthropic, &sim.url);
    let (handle, cancel) = Cancel::new();
    let limits = CallLimits {
        idle_timeout: Duration::from_secs(5),
        wall_clock: Duration::from_secs(10),
    };
    let aborting = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        handle.cancel();
    };
    let mut ignore = |_: &StreamEvent| {};
    let asked = request();
    let (result, ()) = tokio::join!(
        provider.complete(&asked, limits, cancel, &mut ignore),
        aborting
    );
    assert!(matches!(result, Err(Failure::Aborted { .. })), "{result:?}");
    assert_eq!(sim.sim.requests().len(), 1);
}

#[tokio::test]
async fn leaked_markup_is_handed_over_as_a_leaked_call() {
    let sim = start_sim().await;
    let leak = "<tool_call>{\"name\": \"web__fetch\", \"arguments\": {\"url\": \"https://x\"}}</tool_call>";
    sim.sim.script(
        MODEL,
        vec![Scripted {
            text: Some(leak.into()),
            ..Scripted::default()
        }],
    );
    let (result, _) = complete(
        &provider(ProviderKind::OpenaiCompatible, &sim.url),
        &request(),
    )
    .await;
    let leaked = result.expect("completion").leaked.expect("leaked call");
    assert_eq!(leaked.form, LeakForm::ToolCallWrapper);
    assert_eq!(leaked.name.as_deref(), Some("web__fetch"));
}

#[tokio::test]
async fn boot_verification_tells_verified_unauthorized_and_unverified_apart() {
    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![Scripted {
            text: Some("OK".into()),
            standing: true,
            ..Scripted::default()
        }],
    );
    assert_eq!(
        verify(
            &provider(ProviderKind::Anthropic, &sim.url),
            Duration::from_secs(5)
        )
        .await,
        Verification::Verified
    );

    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![failing(Inject {
            status: Some(401),
            ..Inject::default()
        })],
    );
    assert_eq!(
        verify(
            &provider(ProviderKind::OpenaiCompatible, &sim.url),
            Duration::from_secs(5)
        )
        .await,
        Verification::Unauthorized
    );

    let sim = start_sim().await;
    sim.sim.script(
        MODEL,
        vec![Scripted {
            hold: Some("never".into()),
            standing: true,
            ..Scripted::default()
        }],
    );
    let answer = verify(
        &provider(ProviderKind::Openrouter, &sim.url),
        Duration::from_millis(400),
    )
    .await;
    assert!(
        matches!(answer, Verification::Unverified(ref why) if why.contains("no answer")),
        "{answer:?}"
    );
}

#[tokio::test]
async fn reasoning_never_reaches_a_log_line() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);
    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lock").extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let secret = "PRIVATE-REASONING-7f3a: weigh the user's motives";
    let sim = start_sim().await;
    let mut with_reasoning = text_and_call();
    with_reasoning.reasoning = Some(secret.into());
    // A retry on the way makes the adapter log.
    sim.sim.script(
        MODEL,
        vec![
            failing(Inject {
                status: Some(500),
                ..Inject::default()
            }),
            with_reasoning,
        ],
    );
    let (result, _) = complete(&provider(ProviderKind::Anthropic, &sim.url), &request()).await;
    let completion = result.expect("completion");
    assert_eq!(completion.reasoning.expect("kept").text, secret);
    let logs = String::from_utf8(captured.0.lock().expect("lock").clone()).expect("utf-8");
    assert!(logs.contains("retrying"), "the adapter logged: {logs}");
    assert!(
        !logs.contains("PRIVATE-REASONING"),
        "reasoning reached a log line:\n{logs}"
    );
}
