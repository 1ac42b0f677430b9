//! The adapters over recorded streams, in the exact shapes providers send
//! (fields the simulator does not emit included: `usage: null` on every
//! OpenAI chunk, OpenRouter's `reasoning_details`, `provider` and `cost`,
//! Anthropic's `ping`, redacted thinking and `output_tokens_details`),
//! decoded by the same code that reads them off the wire.

use collegium_control::config::model::ProviderKind;
use collegium_control::inference::{
    Failure, FinishReason, ReasoningReplay, TransportCause, decode,
};

const OPENAI: &str = r#"data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{"content":"Checking"},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_Xy1","type":"function","function":{"name":"web__fetch","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"url\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"https://example.com\"}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}

data: {"id":"chatcmpl-AbC","object":"chat.completion.chunk","created":1764500000,"model":"gpt-4.1-2025-04-14","service_tier":"default","system_fingerprint":"fp_abc","choices":[],"usage":{"prompt_tokens":1520,"completion_tokens":24,"total_tokens":1544,"prompt_tokens_details":{"cached_tokens":1408,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}

data: [DONE]

"#;

const OPENROUTER: &str = r#": OPENROUTER PROCESSING

data: {"id":"gen-1764500000-a","provider":"DeepSeek","model":"deepseek/deepseek-chat-v3.1","object":"chat.completion.chunk","created":1764500000,"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"Weigh it.","reasoning_details":[{"type":"reasoning.text","text":"Weigh it.","format":"unknown","index":0}]},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1764500000-a","provider":"DeepSeek","model":"deepseek/deepseek-chat-v3.1","object":"chat.completion.chunk","created":1764500000,"choices":[{"index":0,"delta":{"role":"assistant","content":"It is 12°C in Paris."},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}

data: {"id":"gen-1764500000-a","provider":"DeepSeek","model":"deepseek/deepseek-chat-v3.1","object":"chat.completion.chunk","created":1764500000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}

data: {"id":"gen-1764500000-a","provider":"DeepSeek","model":"deepseek/deepseek-chat-v3.1","object":"chat.completion.chunk","created":1764500000,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":900,"completion_tokens":40,"total_tokens":940,"cost":0.00042,"is_byok":false,"prompt_tokens_details":{"cached_tokens":640},"completion_tokens_details":{"reasoning_tokens":12}}}

data: [DONE]

"#;

const ANTHROPIC: &str = "event: message_start
data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01A\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":300,\"cache_read_input_tokens\":2048,\"output_tokens\":1,\"service_tier\":\"standard\"}}}

event: ping
data: {\"type\": \"ping\"}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"The page first.\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYa\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":0}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":1}

event: content_block_start
data: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01B\",\"name\":\"web__fetch\",\"input\":{}}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}

event: content_block_delta
data: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"url\\\": \\\"https://example.com\\\"}\"}}

event: content_block_stop
data: {\"type\":\"content_block_stop\",\"index\":2}

event: message_delta
data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":61,\"output_tokens_details\":{\"thinking_tokens\":20}}}

event: message_stop
data: {\"type\":\"message_stop\"}

";

#[test]
fn a_recorded_openai_stream_decodes_to_its_call_and_usage() {
    let completion = decode(ProviderKind::OpenaiCompatible, OPENAI.as_bytes()).expect("decodes");
    assert_eq!(completion.text, "Checking");
    assert_eq!(completion.tool_calls.len(), 1);
    assert_eq!(completion.tool_calls[0].id, "call_Xy1");
    assert_eq!(
        completion.tool_calls[0].arguments,
        r#"{"url":"https://example.com"}"#
    );
    assert_eq!(completion.finish, FinishReason::ToolCalls);
    assert_eq!(
        (
            completion.usage.prompt_tokens,
            completion.usage.cached_prompt_tokens
        ),
        (1520, 1408)
    );
    assert_eq!(completion.usage.completion_tokens, 24);
    assert!(completion.reasoning.is_none());
}

#[test]
fn a_recorded_openrouter_stream_carries_its_upstream_cost_and_reasoning_details() {
    let completion = decode(ProviderKind::Openrouter, OPENROUTER.as_bytes()).expect("decodes");
    assert_eq!(completion.text, "It is 12°C in Paris.");
    assert_eq!(completion.upstream.as_deref(), Some("DeepSeek"));
    assert_eq!(completion.usage.cost_micro_usd, Some(420));
    assert_eq!(completion.usage.reasoning_tokens, 12);
    let reasoning = completion.reasoning.expect("reasoning");
    assert_eq!(reasoning.text, "Weigh it.");
    assert!(
        matches!(reasoning.replay, ReasoningReplay::Details(ref d) if d.len() == 1 && d[0]["type"] == "reasoning.text")
    );
}

#[test]
fn a_recorded_anthropic_stream_keeps_every_thinking_block_for_handback() {
    let completion = decode(ProviderKind::Anthropic, ANTHROPIC.as_bytes()).expect("decodes");
    assert_eq!(completion.tool_calls[0].name, "web__fetch");
    assert_eq!(completion.tool_calls[0].id, "toolu_01B");
    assert_eq!(
        completion.tool_calls[0].arguments,
        r#"{"url": "https://example.com"}"#
    );
    // input 12 + cache read 2048 + cache write 300 make the prompt.
    assert_eq!(completion.usage.prompt_tokens, 2360);
    assert_eq!(completion.usage.cached_prompt_tokens, 2048);
    assert_eq!(completion.usage.cache_write_tokens, 300);
    assert_eq!(completion.usage.completion_tokens, 61);
    let reasoning = completion.reasoning.expect("reasoning");
    assert_eq!(reasoning.text, "The page first.");
    let ReasoningReplay::ThinkingBlocks(blocks) = reasoning.replay else {
        panic!("thinking blocks expected");
    };
    assert_eq!(blocks.len(), 2, "the redacted block is kept too");
    assert_eq!(blocks[0]["signature"], "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxDYa");
    assert_eq!(blocks[0]["thinking"], "The page first.");
    assert_eq!(blocks[1]["type"], "redacted_thinking");
}

#[test]
fn a_stream_that_ends_without_its_marker_is_a_cut_and_a_broken_chunk_is_malformed() {
    let cut = &OPENAI[..OPENAI.find("data: [DONE]").expect("marker")];
    assert_eq!(
        decode(ProviderKind::OpenaiCompatible, cut.as_bytes()),
        Err(Failure::Outage(TransportCause::Cut))
    );
    let broken = "data: {\"id\": \"x\", \"choices\": [\n\n";
    assert_eq!(
        decode(ProviderKind::OpenaiCompatible, broken.as_bytes()),
        Err(Failure::Malformed(1))
    );
    let anthropic_cut = &ANTHROPIC[..ANTHROPIC.find("event: message_stop").expect("marker")];
    assert_eq!(
        decode(ProviderKind::Anthropic, anthropic_cut.as_bytes()),
        Err(Failure::Outage(TransportCause::Cut))
    );
}
