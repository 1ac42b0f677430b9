#!/usr/bin/env python3
"""Stream completions from the model simulator with the official `openai` and
`anthropic` Python SDKs, asserting that the SDKs parse everything it sends.

Usage:
    python3 sdk_stream.py --url http://127.0.0.1:PORT

The simulator is scripted through its control interface (`POST /_sim/script`,
`GET /_sim/requests`); every completion then goes through the SDKs' own
streaming code: OpenAI's raw `stream=True` iterator, its
`ChatCompletionStreamState` accumulator and its `chat.completions.stream()`
helper; Anthropic's `messages.stream()` helper and its raw
`messages.create(stream=True)` events.  The main streaming checks run a
second time with the SDKs' strict response validation on, so a chunk that
lacks a field the SDK's schema requires fails even where the lenient default
would let it through.  Two checks read the raw SSE bytes, as a client other
than these SDKs would; two more hold the stream to `delay_ms` (chunks must be
flushed one by one).  Then the recorded requests, and injected 429 / 401
failures, which must surface as the SDKs' typed exceptions.

Every check prints one `ok: ...` line; the first failure prints
`FAIL: ...` and the script exits with status 1.  The last line is
`sdk-stream: N passed, F failed`.

Install the SDKs from requirements.txt next to this script.  Retries are off
(`max_retries=0`) so an injected failure surfaces as one exception from one
request.
"""

import argparse
import json
import sys
import time
import traceback
import urllib.error
import urllib.request
import uuid
import warnings

try:
    import anthropic
    import openai
    from openai.lib.streaming.chat import ChatCompletionStreamState
except ImportError as import_error:  # pragma: no cover - environment problem
    print(
        "FAIL: cannot import the SDKs ({}); install requirements.txt next to "
        "this script".format(import_error),
        file=sys.stderr,
    )
    sys.exit(2)


OPENAI_MODEL = "gpt-sim"
ANTHROPIC_MODEL = "claude-sim"
API_KEY = "sk-sim"

WEATHER_TEXT = "Checking the weather."
WEATHER_ARGS = {"city": "Paris", "unit": "celsius"}
WEATHER_USAGE = {"prompt_tokens": 42, "completion_tokens": 17, "cached_tokens": 10, "reasoning_tokens": 3}
OPENAI_RESPONSE = {
    "text": WEATHER_TEXT,
    "tool_calls": [{"name": "get_weather", "arguments": WEATHER_ARGS}],
    "usage": WEATHER_USAGE,
}

CLAUDE_REASONING = "The user wants weather."
CLAUDE_TEXT = "Let me look."
CLAUDE_ARGS = {"city": "Paris"}
ANTHROPIC_RESPONSE = {
    "reasoning": CLAUDE_REASONING,
    "text": CLAUDE_TEXT,
    "tool_calls": [{"name": "get_weather", "arguments": CLAUDE_ARGS}],
    "usage": WEATHER_USAGE,
}

OPENAI_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city", "unit"],
                "additionalProperties": False,
            },
            # strict: the stream helper then parses the arguments itself
            # (parsed_arguments), which exercises its accumulation further.
            "strict": True,
        },
    }
]

ANTHROPIC_TOOLS = [
    {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "input_schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    }
]


class CheckFailed(Exception):
    """An assertion about the simulator's behaviour did not hold."""


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def expect_eq(actual, expected, what):
    if actual != expected:
        raise CheckFailed("{}: expected {!r}, got {!r}".format(what, expected, actual))


def nonce():
    return "[sdk-stream {}]".format(uuid.uuid4().hex[:12])


class Sim:
    """The simulator's control interface."""

    def __init__(self, url):
        self.url = url.rstrip("/")

    def _call(self, method, path, payload=None):
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                body = response.read()
        except urllib.error.HTTPError as error:
            raise CheckFailed(
                "{} {} answered {}: {}".format(method, path, error.code, error.read()[:500].decode("utf-8", "replace"))
            )
        except OSError as error:
            raise CheckFailed("{} {} failed: {}".format(method, path, error))
        return json.loads(body) if body.strip() else None

    def script(self, model, *responses):
        self._call("POST", "/_sim/script", {"model": model, "responses": list(responses)})

    def requests(self):
        recorded = self._call("GET", "/_sim/requests")
        expect(isinstance(recorded, list), "GET /_sim/requests: expected a JSON list, got {!r}".format(recorded))
        return recorded

    def requests_with(self, marker):
        """The recorded requests whose body mentions `marker` (a nonce)."""
        found = []
        for entry in self.requests():
            body = entry.get("body")
            if isinstance(body, str):
                try:
                    body = json.loads(body)
                except ValueError:
                    pass
            if marker in json.dumps(body):
                found.append(dict(entry, body=body))
        return found


class Clients:
    def __init__(self, url):
        self.url = url.rstrip("/")

    def openai(self, strict=False):
        return openai.OpenAI(
            base_url=self.url + "/v1",
            api_key=API_KEY,
            max_retries=0,
            timeout=30,
            _strict_response_validation=strict,
        )

    def anthropic(self, strict=False):
        return anthropic.Anthropic(
            base_url=self.url,
            api_key=API_KEY,
            max_retries=0,
            timeout=30,
            _strict_response_validation=strict,
        )


def weather_messages(marker):
    return [
        {"role": "system", "content": "You are a weather assistant."},
        {"role": "user", "content": "What is the weather in Paris? " + marker},
    ]


# ------------------------------------------------------------------ OpenAI


def check_openai_usage(usage, where):
    expect(usage is not None, "{}: no usage (the final usage-only chunk is missing)".format(where))
    expect_eq(usage.prompt_tokens, 42, where + " usage.prompt_tokens")
    expect_eq(usage.completion_tokens, 17, where + " usage.completion_tokens")
    expect_eq(usage.total_tokens, 59, where + " usage.total_tokens")
    expect(usage.prompt_tokens_details is not None, where + ": usage.prompt_tokens_details missing")
    expect_eq(usage.prompt_tokens_details.cached_tokens, 10, where + " usage.prompt_tokens_details.cached_tokens")
    expect(usage.completion_tokens_details is not None, where + ": usage.completion_tokens_details missing")
    expect_eq(
        usage.completion_tokens_details.reasoning_tokens, 3, where + " usage.completion_tokens_details.reasoning_tokens"
    )


def openai_raw_stream(sim, clients, strict):
    """`create(stream=True)`: accumulate the chunks by hand, holding them to
    what the real API sends, and through the SDK's ChatCompletionStreamState."""
    where = "openai raw stream" + (" (strict)" if strict else "")
    sim.script(OPENAI_MODEL, OPENAI_RESPONSE)
    marker = nonce()
    client = clients.openai(strict)
    stream = client.chat.completions.create(
        model=OPENAI_MODEL,
        messages=weather_messages(marker),
        tools=OPENAI_TOOLS,
        stream=True,
        stream_options={"include_usage": True},
    )
    state = ChatCompletionStreamState(input_tools=OPENAI_TOOLS)
    chunks = []
    for chunk in stream:
        chunks.append(chunk)
        state.handle_chunk(chunk)
    expect(chunks, where + ": the stream yielded no chunk")

    ids, createds, text, calls, finish_reasons, roles = set(), set(), "", {}, [], []
    for position, chunk in enumerate(chunks):
        expect_eq(chunk.object, "chat.completion.chunk", where + " chunk[{}].object".format(position))
        ids.add(chunk.id)
        createds.add(chunk.created)
        expect_eq(chunk.model, OPENAI_MODEL, where + " chunk[{}].model".format(position))
        if chunk.usage is not None:
            expect(position == len(chunks) - 1, where + ": usage arrived in chunk {} of {}, not the last".format(position, len(chunks)))
        for choice in chunk.choices:
            expect_eq(choice.index, 0, where + " choices[].index")
            delta = choice.delta
            expect(delta is not None, where + ": a choice without `delta`")
            if delta.role is not None:
                roles.append(delta.role)
            if delta.content:
                text += delta.content
            for fragment in delta.tool_calls or []:
                call = calls.get(fragment.index)
                if call is None:
                    expect(fragment.id, where + ": the first fragment of tool call {} has no id".format(fragment.index))
                    expect_eq(fragment.type, "function", where + " first tool-call fragment type")
                    expect(
                        fragment.function is not None and fragment.function.name,
                        where + ": the first fragment of tool call {} has no function.name".format(fragment.index),
                    )
                    call = calls[fragment.index] = {"id": fragment.id, "name": fragment.function.name, "arguments": ""}
                else:
                    # The SDK concatenates every string it sees, so a repeated
                    # id or name would come out doubled.
                    expect(
                        not fragment.id and (fragment.function is None or not fragment.function.name),
                        where + ": a later fragment of tool call {} repeats its id or name "
                        "(the SDK would concatenate them): {}".format(fragment.index, fragment.to_json(indent=None)),
                    )
                if fragment.function is not None and fragment.function.arguments:
                    call["arguments"] += fragment.function.arguments
            if choice.finish_reason is not None:
                finish_reasons.append(choice.finish_reason)
    expect(len(ids) == 1 and "" not in ids, where + ": chunk ids differ or are empty: {}".format(sorted(ids)))
    expect(len(createds) == 1, where + ": chunks carry different `created`: {}".format(sorted(createds)))
    expect_eq(roles[:1], ["assistant"], where + " first delta.role")
    expect_eq(text, WEATHER_TEXT, where + " content")
    expect_eq(len(calls), 1, where + " number of tool calls")
    call = calls[0]
    expect_eq(call["name"], "get_weather", where + " tool call name")
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        raise CheckFailed("{}: tool call arguments are not JSON: {!r}".format(where, call["arguments"]))
    expect_eq(arguments, WEATHER_ARGS, where + " tool call arguments")
    expect(call["id"], where + ": empty tool call id")
    expect_eq(finish_reasons, ["tool_calls"], where + " finish_reason(s)")
    last = chunks[-1]
    expect_eq(last.choices, [], where + " choices of the final usage chunk")
    check_openai_usage(last.usage, where)

    final = state.get_final_completion()
    message = final.choices[0].message
    expect_eq(message.content, WEATHER_TEXT, where + " ChatCompletionStreamState content")
    expect_eq(len(message.tool_calls or []), 1, where + " ChatCompletionStreamState tool calls")
    expect_eq(message.tool_calls[0].id, call["id"], where + " ChatCompletionStreamState tool call id")
    expect_eq(message.tool_calls[0].function.name, "get_weather", where + " ChatCompletionStreamState tool name")
    expect_eq(message.tool_calls[0].function.parsed_arguments, WEATHER_ARGS, where + " ChatCompletionStreamState parsed_arguments")
    expect_eq(final.choices[0].finish_reason, "tool_calls", where + " ChatCompletionStreamState finish_reason")
    check_openai_usage(final.usage, where + " ChatCompletionStreamState")
    return "{}: {} chunks, text, one get_weather call (id {}), finish tool_calls, usage 42/17 cached 10 reasoning 3".format(
        where, len(chunks), call["id"]
    )


def openai_stream_helper(sim, clients, strict):
    """`chat.completions.stream()` -> `get_final_completion()`."""
    where = "openai stream helper" + (" (strict)" if strict else "")
    sim.script(OPENAI_MODEL, OPENAI_RESPONSE)
    marker = nonce()
    client = clients.openai(strict)
    event_types = []
    with client.chat.completions.stream(
        model=OPENAI_MODEL,
        messages=weather_messages(marker),
        tools=OPENAI_TOOLS,
        stream_options={"include_usage": True},
    ) as stream:
        for event in stream:
            event_types.append(event.type)
        final = stream.get_final_completion()
    for wanted in (
        "chunk",
        "content.delta",
        "content.done",
        "tool_calls.function.arguments.delta",
        "tool_calls.function.arguments.done",
    ):
        expect(wanted in event_types, "{}: the helper fired no `{}` event (fired: {})".format(where, wanted, sorted(set(event_types))))
    expect(final.id, where + ": completion has no id")
    expect_eq(final.model, OPENAI_MODEL, where + " model")
    expect_eq(len(final.choices), 1, where + " number of choices")
    choice = final.choices[0]
    message = choice.message
    expect_eq(message.role, "assistant", where + " role")
    expect_eq(message.content, WEATHER_TEXT, where + " content")
    calls = message.tool_calls or []
    expect_eq(len(calls), 1, where + " number of tool calls")
    call = calls[0]
    expect(call.id, where + ": empty tool call id")
    expect_eq(call.type, "function", where + " tool call type")
    expect_eq(call.function.name, "get_weather", where + " tool call name")
    try:
        arguments = json.loads(call.function.arguments)
    except ValueError:
        raise CheckFailed("{}: tool call arguments are not JSON: {!r}".format(where, call.function.arguments))
    expect_eq(arguments, WEATHER_ARGS, where + " tool call arguments")
    expect_eq(call.function.parsed_arguments, WEATHER_ARGS, where + " parsed_arguments")
    expect_eq(choice.finish_reason, "tool_calls", where + " finish_reason")
    check_openai_usage(final.usage, where)
    return "{}: get_final_completion has the text, one get_weather call {}, finish tool_calls, usage".format(where, call.id)


def openai_reasoning(sim, clients):
    """`reasoning` streams as `reasoning_content` deltas, which the SDK keeps
    as an extra field and which break neither accumulator."""
    where = "openai reasoning_content"
    reasoning = "First think, then answer briefly."
    sim.script(OPENAI_MODEL, {"reasoning": reasoning, "text": "Sunny."})
    client = clients.openai(strict=True)
    stream = client.chat.completions.create(
        model=OPENAI_MODEL,
        messages=weather_messages(nonce()),
        stream=True,
        stream_options={"include_usage": True},
    )
    state = ChatCompletionStreamState()
    streamed, finish = "", None
    for chunk in stream:
        state.handle_chunk(chunk)
        for choice in chunk.choices:
            streamed += getattr(choice.delta, "reasoning_content", None) or ""
            finish = choice.finish_reason or finish
    expect_eq(streamed, reasoning, where + " concatenated delta.reasoning_content")
    expect_eq(finish, "stop", where + " finish_reason")
    message = state.get_final_completion().choices[0].message
    expect_eq(message.content, "Sunny.", where + " ChatCompletionStreamState content")
    expect_eq(getattr(message, "reasoning_content", None), reasoning, where + " ChatCompletionStreamState reasoning_content")

    sim.script(OPENAI_MODEL, {"reasoning": reasoning, "text": "Sunny."})
    with client.chat.completions.stream(
        model=OPENAI_MODEL, messages=weather_messages(nonce()), stream_options={"include_usage": True}
    ) as helper:
        final = helper.get_final_completion()
    expect_eq(final.choices[0].message.content, "Sunny.", where + " stream helper content")
    expect_eq(final.choices[0].finish_reason, "stop", where + " stream helper finish_reason")
    return where + ": reasoning arrives as delta.reasoning_content; both accumulators keep it; finish stop"


def openai_incremental(sim, clients):
    """With `delay_ms`, chunks reach the SDK one by one, not in one burst."""
    where = "openai incremental streaming"
    delay_ms = 100
    sim.script(OPENAI_MODEL, {"text": "One, two, three, four, five.", "delay_ms": delay_ms})
    client = clients.openai()
    stream = client.chat.completions.create(
        model=OPENAI_MODEL, messages=weather_messages(nonce()), stream=True, stream_options={"include_usage": True}
    )
    arrivals = []
    for _ in stream:
        arrivals.append(time.monotonic())
    expect(len(arrivals) >= 3, "{}: only {} chunks".format(where, len(arrivals)))
    spread = arrivals[-1] - arrivals[0]
    expect(
        spread >= 2 * 0.9 * delay_ms / 1000.0,
        "{}: {} chunks arrived within {:.3f}s of the first, though delay_ms={} (the stream is buffered, "
        "not flushed per chunk)".format(where, len(arrivals), spread, delay_ms),
    )
    return "{}: {} chunks spread over {:.2f}s with delay_ms={}".format(where, len(arrivals), spread, delay_ms)


def openai_models(sim, clients):
    where = "openai models.list (strict)"
    page = clients.openai(strict=True).models.list()
    ids = [model.id for model in page.data]
    for model in page.data:
        expect_eq(model.object, "model", where + " object")
    expect(OPENAI_MODEL in ids, "{}: {} is scripted but not listed: {}".format(where, OPENAI_MODEL, ids))
    return "{}: {} models, including {}".format(where, len(ids), OPENAI_MODEL)


# --------------------------------------------------------------- Anthropic


def check_anthropic_message(message, where):
    expect(message.id, where + ": message has no id")
    expect_eq(message.type, "message", where + " type")
    expect_eq(message.role, "assistant", where + " role")
    expect_eq(message.model, ANTHROPIC_MODEL, where + " model")
    kinds = [block.type for block in message.content]
    expect_eq(kinds, ["thinking", "text", "tool_use"], where + " content block types")
    thinking, text, tool = message.content
    expect_eq(thinking.thinking, CLAUDE_REASONING, where + " thinking text")
    expect(isinstance(thinking.signature, str) and thinking.signature, where + ": thinking block has no signature")
    expect_eq(text.text, CLAUDE_TEXT, where + " text")
    expect(tool.id, where + ": tool_use block has no id")
    expect_eq(tool.name, "get_weather", where + " tool_use name")
    expect_eq(tool.input, CLAUDE_ARGS, where + " tool_use input")
    expect_eq(message.stop_reason, "tool_use", where + " stop_reason")
    # Anthropic counts cache reads apart from input_tokens: 42 scripted, 10 cached.
    expect_eq(message.usage.input_tokens, 32, where + " usage.input_tokens")
    expect_eq(message.usage.output_tokens, 17, where + " usage.output_tokens")
    expect_eq(message.usage.cache_read_input_tokens, 10, where + " usage.cache_read_input_tokens")
    return tool.id


def anthropic_stream_helper(sim, clients, strict):
    """`messages.stream()` -> `get_final_message()`, thinking enabled."""
    where = "anthropic messages.stream" + (" (strict)" if strict else "")
    sim.script(ANTHROPIC_MODEL, ANTHROPIC_RESPONSE)
    marker = nonce()
    client = clients.anthropic(strict)
    event_types = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with client.messages.stream(
            model=ANTHROPIC_MODEL,
            max_tokens=1024,
            system="You are a weather assistant.",
            messages=[{"role": "user", "content": "What is the weather in Paris? " + marker}],
            tools=ANTHROPIC_TOOLS,
            thinking={"type": "enabled", "budget_tokens": 1024},
        ) as stream:
            for event in stream:
                event_types.append(event.type)
            message = stream.get_final_message()
    for wanted in ("message_start", "content_block_start", "thinking", "signature", "text", "input_json",
                   "content_block_stop", "message_delta", "message_stop"):
        expect(wanted in event_types, "{}: the helper fired no `{}` event (fired: {})".format(where, wanted, sorted(set(event_types))))
    tool_id = check_anthropic_message(message, where)
    return "{}: thinking (signed), text, tool_use {} {}; stop tool_use; usage in 42 out 17 cache-read 10".format(
        where, tool_id, json.dumps(CLAUDE_ARGS)
    )


def anthropic_raw_events(sim, clients):
    """`messages.create(stream=True)`: the event sequence, block by block."""
    where = "anthropic raw events (strict)"
    sim.script(ANTHROPIC_MODEL, ANTHROPIC_RESPONSE)
    client = clients.anthropic(strict=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        events = list(
            client.messages.create(
                model=ANTHROPIC_MODEL,
                max_tokens=1024,
                messages=[{"role": "user", "content": "What is the weather in Paris? " + nonce()}],
                tools=ANTHROPIC_TOOLS,
                thinking={"type": "enabled", "budget_tokens": 1024},
                stream=True,
            )
        )
    types = [event.type for event in events]
    expect(types and types[0] == "message_start", "{}: first event is not message_start: {}".format(where, types[:3]))
    expect(types[-1] == "message_stop", "{}: last event is not message_stop: {}".format(where, types[-3:]))
    start = events[0].message
    expect_eq(start.content, [], where + " message_start content")
    expect(start.usage is not None, where + ": message_start has no usage")
    expect_eq(start.usage.input_tokens, 32, where + " message_start usage.input_tokens (cache reads apart)")
    blocks, open_index, deltas = [], None, []
    for event in events[1:-1]:
        if event.type == "content_block_start":
            expect(open_index is None, "{}: block {} starts while block {} is open".format(where, event.index, open_index))
            expect_eq(event.index, len(blocks), where + " content_block_start index")
            block = event.content_block.to_dict()
            blocks.append({"start": block, "text": "", "thinking": "", "signature": "", "json": ""})
            open_index = event.index
        elif event.type == "content_block_delta":
            expect_eq(event.index, open_index, where + " content_block_delta index")
            current = blocks[open_index]
            kind = current["start"]["type"]
            delta = event.delta
            allowed = {"text_delta": "text", "thinking_delta": "thinking", "signature_delta": "thinking",
                       "input_json_delta": "tool_use"}
            expect_eq(allowed.get(delta.type), kind, "{} block kind for a {}".format(where, delta.type))
            if delta.type == "text_delta":
                current["text"] += delta.text
            elif delta.type == "thinking_delta":
                current["thinking"] += delta.thinking
            elif delta.type == "signature_delta":
                current["signature"] = delta.signature
            else:
                current["json"] += delta.partial_json
        elif event.type == "content_block_stop":
            expect_eq(event.index, open_index, where + " content_block_stop index")
            open_index = None
        elif event.type == "message_delta":
            expect(open_index is None, "{}: message_delta while block {} is open".format(where, open_index))
            deltas.append(event)
        else:
            raise CheckFailed("{}: unexpected event {} mid-stream".format(where, event.type))
    expect(open_index is None, where + ": a block was never stopped")
    expect_eq([b["start"]["type"] for b in blocks], ["thinking", "text", "tool_use"], where + " block kinds")
    thinking, text, tool = blocks
    expect_eq(thinking["start"].get("thinking"), "", where + " thinking block's initial `thinking`")
    expect_eq(thinking["thinking"], CLAUDE_REASONING, where + " thinking deltas")
    expect(thinking["signature"], where + ": no signature_delta in the thinking block")
    expect_eq(text["start"].get("text"), "", where + " text block's initial `text`")
    expect_eq(text["text"], CLAUDE_TEXT, where + " text deltas")
    expect_eq(tool["start"].get("input"), {}, where + " tool_use block's initial `input`")
    expect(tool["start"].get("id") and tool["start"].get("name") == "get_weather", where + ": tool_use start lacks id/name")
    expect_eq(json.loads(tool["json"] or "{}"), CLAUDE_ARGS, where + " input_json_delta partial_json concatenated")
    expect_eq(len(deltas), 1, where + " number of message_delta events")
    expect_eq(deltas[0].delta.stop_reason, "tool_use", where + " message_delta stop_reason")
    expect_eq(deltas[0].usage.output_tokens, 17, where + " message_delta usage.output_tokens")
    return "{}: message_start, 3 blocks start/delta/stop in order, message_delta tool_use, message_stop".format(where)


def anthropic_incremental(sim, clients):
    where = "anthropic incremental streaming"
    delay_ms = 100
    sim.script(ANTHROPIC_MODEL, {"text": "One, two, three, four, five.", "delay_ms": delay_ms})
    client = clients.anthropic()
    arrivals = []
    with client.messages.stream(
        model=ANTHROPIC_MODEL, max_tokens=256, messages=[{"role": "user", "content": "Count. " + nonce()}]
    ) as stream:
        for _ in stream:
            arrivals.append(time.monotonic())
        message = stream.get_final_message()
    expect_eq([b.type for b in message.content], ["text"], where + " content")
    expect_eq(message.stop_reason, "end_turn", where + " stop_reason")
    spread = arrivals[-1] - arrivals[0]
    expect(
        spread >= 2 * 0.9 * delay_ms / 1000.0,
        "{}: {} events arrived within {:.3f}s of the first, though delay_ms={} (buffered, not flushed "
        "per event)".format(where, len(arrivals), spread, delay_ms),
    )
    return "{}: {} events spread over {:.2f}s with delay_ms={}; plain text ends end_turn".format(
        where, len(arrivals), spread, delay_ms
    )


# --------------------------------------------------------------- raw bytes


def raw_sse(url, path, headers, payload):
    request = urllib.request.Request(url + path, data=json.dumps(payload).encode(), method="POST")
    request.add_header("Content-Type", "application/json")
    for name, value in headers.items():
        request.add_header(name, value)
    with urllib.request.urlopen(request, timeout=30) as response:
        content_type = response.headers.get("Content-Type", "")
        body = response.read().decode("utf-8")
    # Split as the SSE spec does: lines end in CRLF, LF or CR; a blank line
    # ends an event; a line starting with `:` is a comment; `field: value`
    # loses one leading space from the value.
    events, current = [], []
    for line in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if current:
                events.append(current)
                current = []
        elif not line.startswith(":"):
            field, _, value = line.partition(":")
            current.append((field, value[1:] if value.startswith(" ") else value))
    if current:
        events.append(current)
    return content_type, body, events


def openai_raw_bytes(sim, clients):
    where = "openai raw SSE bytes"
    sim.script(OPENAI_MODEL, OPENAI_RESPONSE)
    content_type, body, events = raw_sse(
        clients.url,
        "/v1/chat/completions",
        {"Authorization": "Bearer " + API_KEY},
        {"model": OPENAI_MODEL, "messages": weather_messages(nonce()), "stream": True,
         "stream_options": {"include_usage": True}},
    )
    expect(content_type.startswith("text/event-stream"), "{}: Content-Type is {!r}".format(where, content_type))
    expect(body.endswith(("\n\n", "\r\n\r\n", "\r\r")), where + ": the body does not end with a blank line")
    payloads = []
    for event in events:
        fields = [field for field, _ in event]
        expect(fields == ["data"], "{}: every event should be one `data:` line, got {!r}".format(where, event))
        payloads.append(event[0][1])
    expect_eq(payloads[-1], "[DONE]", where + " last event")
    for payload in payloads[:-1]:
        try:
            json.loads(payload)
        except ValueError:
            raise CheckFailed("{}: an event is not JSON: {!r}".format(where, payload))
    return "{}: {} `data:` events, text/event-stream, ends with data: [DONE]".format(where, len(payloads))


def anthropic_raw_bytes(sim, clients):
    where = "anthropic raw SSE bytes"
    sim.script(ANTHROPIC_MODEL, ANTHROPIC_RESPONSE)
    content_type, body, events = raw_sse(
        clients.url,
        "/v1/messages",
        {"x-api-key": API_KEY, "anthropic-version": "2023-06-01"},
        {"model": ANTHROPIC_MODEL, "max_tokens": 1024, "stream": True,
         "messages": [{"role": "user", "content": "Weather? " + nonce()}],
         "tools": ANTHROPIC_TOOLS, "thinking": {"type": "enabled", "budget_tokens": 1024}},
    )
    expect(content_type.startswith("text/event-stream"), "{}: Content-Type is {!r}".format(where, content_type))
    names = []
    for event in events:
        fields = [field for field, _ in event]
        expect(
            fields == ["event", "data"],
            "{}: every event should be an `event:` line then a `data:` line, got {!r}".format(where, event),
        )
        name = event[0][1]
        try:
            data = json.loads(event[1][1])
        except ValueError:
            raise CheckFailed("{}: an event's data is not JSON: {!r}".format(where, event[1]))
        expect_eq(data.get("type"), name, where + " data.type against the event name")
        names.append(name)
    expect_eq(names[0], "message_start", where + " first event")
    expect_eq(names[-1], "message_stop", where + " last event")
    return "{}: {} event/data pairs, each event name equal to its data.type".format(where, len(names))


# ----------------------------------------------------- recording, failures


def requests_recorded(sim, clients):
    """`GET /_sim/requests` holds the bodies the SDKs sent."""
    where = "requests recorded"
    sim.script(OPENAI_MODEL, {"text": "Plain answer."})
    marker = nonce()
    messages = weather_messages(marker)
    client = clients.openai()
    stream = client.chat.completions.create(
        model=OPENAI_MODEL, messages=messages, tools=OPENAI_TOOLS, stream=True, stream_options={"include_usage": True}
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    expect_eq(text, "Plain answer.", where + " plain text reply")
    found = sim.requests_with(marker)
    expect_eq(len(found), 1, where + " requests carrying this check's marker")
    entry = found[0]
    expect_eq(entry.get("path"), "/v1/chat/completions", where + " path")
    expect_eq(entry.get("model"), OPENAI_MODEL, where + " model")
    body = entry.get("body")
    expect(isinstance(body, dict), "{}: body is not a JSON object: {!r}".format(where, body))
    expect_eq(body.get("model"), OPENAI_MODEL, where + " body.model")
    expect_eq(body.get("messages"), messages, where + " body.messages")
    expect_eq(body.get("tools"), OPENAI_TOOLS, where + " body.tools")
    expect_eq(body.get("stream"), True, where + " body.stream")
    expect_eq(body.get("stream_options"), {"include_usage": True}, where + " body.stream_options")

    sim.script(ANTHROPIC_MODEL, {"text": "Plain answer."})
    marker = nonce()
    messages = [{"role": "user", "content": "Weather? " + marker}]
    with clients.anthropic().messages.stream(
        model=ANTHROPIC_MODEL, max_tokens=512, system="Be brief.", messages=messages, tools=ANTHROPIC_TOOLS
    ) as stream:
        expect_eq(stream.get_final_text(), "Plain answer.", where + " anthropic plain text reply")
    found = sim.requests_with(marker)
    expect_eq(len(found), 1, where + " anthropic requests carrying the marker")
    entry = found[0]
    expect_eq(entry.get("path"), "/v1/messages", where + " anthropic path")
    expect_eq(entry.get("model"), ANTHROPIC_MODEL, where + " anthropic model")
    body = entry.get("body")
    expect(isinstance(body, dict), "{}: anthropic body is not a JSON object: {!r}".format(where, body))
    expect_eq(body.get("messages"), messages, where + " anthropic body.messages")
    expect_eq(body.get("tools"), ANTHROPIC_TOOLS, where + " anthropic body.tools")
    expect_eq(body.get("system"), "Be brief.", where + " anthropic body.system")
    expect_eq(body.get("max_tokens"), 512, where + " anthropic body.max_tokens")
    expect_eq(body.get("stream"), True, where + " anthropic body.stream")
    return where + ": both SDKs' bodies (model, messages, tools, system, stream) are in GET /_sim/requests"


def openai_rate_limited(sim, clients):
    where = "openai 429"
    sim.script(OPENAI_MODEL, {"fail": {"status": 429, "retry_after": 1}})
    marker = nonce()
    try:
        stream = clients.openai().chat.completions.create(
            model=OPENAI_MODEL, messages=weather_messages(marker), stream=True, stream_options={"include_usage": True}
        )
        list(stream)
    except openai.RateLimitError as error:
        expect_eq(error.status_code, 429, where + " status_code")
        expect_eq(error.response.headers.get("retry-after"), "1", where + " Retry-After header")
        expect(
            isinstance(error.body, dict) and isinstance(error.body.get("message"), str) and error.body.get("message"),
            "{}: the body's `error` object has no message: {!r}".format(where, error.body),
        )
        expect(isinstance(error.body.get("type"), str), "{}: the body's error has no `type`: {!r}".format(where, error.body))
    else:
        raise CheckFailed(where + ": the SDK raised nothing")
    expect_eq(len(sim.requests_with(marker)), 1, where + " requests received (max_retries=0: no retry)")
    return where + ": openai.RateLimitError, status 429, Retry-After 1, error.message set, one request"


def openai_unauthorized(sim, clients):
    where = "openai 401"
    sim.script(OPENAI_MODEL, {"fail": {"status": 401}})
    try:
        list(clients.openai().chat.completions.create(model=OPENAI_MODEL, messages=weather_messages(nonce()), stream=True))
    except openai.AuthenticationError as error:
        expect_eq(error.status_code, 401, where + " status_code")
        expect(isinstance(error.body, dict) and error.body.get("message"), "{}: no error.message in {!r}".format(where, error.body))
    else:
        raise CheckFailed(where + ": the SDK raised nothing")
    return where + ": openai.AuthenticationError"


def anthropic_unauthorized(sim, clients):
    where = "anthropic 401"
    sim.script(ANTHROPIC_MODEL, {"fail": {"status": 401}})
    marker = nonce()
    try:
        with clients.anthropic().messages.stream(
            model=ANTHROPIC_MODEL, max_tokens=256, messages=[{"role": "user", "content": "Hi " + marker}]
        ) as stream:
            stream.get_final_message()
    except anthropic.AuthenticationError as error:
        expect_eq(error.status_code, 401, where + " status_code")
        expect(isinstance(error.body, dict), "{}: the body is not JSON: {!r}".format(where, error.body))
        expect_eq(error.body.get("type"), "error", where + " body.type")
        expect_eq(error.type, "authentication_error", where + " body.error.type")
        expect(error.api_message, "{}: no body.error.message in {!r}".format(where, error.body))
    else:
        raise CheckFailed(where + ": the SDK raised nothing")
    expect_eq(len(sim.requests_with(marker)), 1, where + " requests received")
    return where + ": anthropic.AuthenticationError, body {type: error, error: {type: authentication_error, message}}"


def anthropic_rate_limited(sim, clients):
    where = "anthropic 429"
    sim.script(ANTHROPIC_MODEL, {"fail": {"status": 429, "retry_after": 1}})
    try:
        with clients.anthropic().messages.stream(
            model=ANTHROPIC_MODEL, max_tokens=256, messages=[{"role": "user", "content": "Hi " + nonce()}]
        ) as stream:
            stream.get_final_message()
    except anthropic.RateLimitError as error:
        expect_eq(error.status_code, 429, where + " status_code")
        expect_eq(error.type, "rate_limit_error", where + " body.error.type")
        expect_eq(error.response.headers.get("retry-after"), "1", where + " Retry-After header")
    else:
        raise CheckFailed(where + ": the SDK raised nothing")
    return where + ": anthropic.RateLimitError, error.type rate_limit_error, Retry-After 1"


CHECKS = [
    ("openai raw stream", lambda s, c: openai_raw_stream(s, c, strict=False)),
    ("openai stream helper", lambda s, c: openai_stream_helper(s, c, strict=False)),
    ("openai raw stream (strict)", lambda s, c: openai_raw_stream(s, c, strict=True)),
    ("openai stream helper (strict)", lambda s, c: openai_stream_helper(s, c, strict=True)),
    ("openai reasoning_content", openai_reasoning),
    ("openai incremental streaming", openai_incremental),
    ("openai models.list", openai_models),
    ("anthropic messages.stream", lambda s, c: anthropic_stream_helper(s, c, strict=False)),
    ("anthropic messages.stream (strict)", lambda s, c: anthropic_stream_helper(s, c, strict=True)),
    ("anthropic raw events", anthropic_raw_events),
    ("anthropic incremental streaming", anthropic_incremental),
    ("openai raw SSE bytes", openai_raw_bytes),
    ("anthropic raw SSE bytes", anthropic_raw_bytes),
    ("requests recorded", requests_recorded),
    ("openai 429", openai_rate_limited),
    ("openai 401", openai_unauthorized),
    ("anthropic 401", anthropic_unauthorized),
    ("anthropic 429", anthropic_rate_limited),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", required=True, help="the simulator's base URL, e.g. http://127.0.0.1:8080")
    args = parser.parse_args()
    sim = Sim(args.url)
    clients = Clients(args.url)
    passed = 0
    for name, check in CHECKS:
        try:
            print("ok: " + check(sim, clients), flush=True)
            passed += 1
        except CheckFailed as failure:
            print("FAIL: {}".format(failure), flush=True)
        except Exception as error:  # an SDK that could not parse what it got
            traceback.print_exc(file=sys.stderr)
            print("FAIL: {}: the SDK raised {}: {}".format(name, type(error).__name__, error), flush=True)
        else:
            continue
        print("sdk-stream: {} passed, 1 failed".format(passed), flush=True)
        sys.exit(1)
    print("sdk-stream: {} passed, 0 failed".format(passed), flush=True)


if __name__ == "__main__":
    main()
