//! Server-sent events and the leaked-call recogniser (§7.1, §7.2;
//! control/src/inference/sse.rs, leaked.rs): the framing yields the same
//! events however the bytes are cut into chunks (the wire cuts them
//! anywhere); a whole recorded stream decodes under each provider's adapter
//! without panicking; the recogniser reads any text a model sends.

use collegium_control::config::model::ProviderKind;
use collegium_control::inference::sse::SseParser;
use collegium_control::inference::{decode, leaked};

use crate::split;

pub fn run(data: &[u8]) {
    let (cut, stream) = split::selector(data);
    let whole = SseParser::default().feed(stream);
    let mut chunked = SseParser::default();
    let mut events = Vec::new();
    // Chunk sizes from the selector byte, varying along the stream.
    let mut size = usize::from(cut % 17) + 1;
    let mut rest = stream;
    while !rest.is_empty() {
        let (chunk, after) = rest.split_at(size.min(rest.len()));
        events.extend(chunked.feed(chunk));
        rest = after;
        size = size * 7 % 23 + 1;
    }
    assert_eq!(events, whole, "the events depend on how the bytes were cut");

    for kind in [
        ProviderKind::OpenaiCompatible,
        ProviderKind::Openrouter,
        ProviderKind::Anthropic,
    ] {
        // Whatever completes carries a leaked call or none; reading its
        // name is the recogniser's answer as the runner reads it.
        if let Ok(completion) = decode(kind, stream)
            && let Some(leak) = &completion.leaked
        {
            let _ = leak.name.as_deref();
        }
    }
    let text = String::from_utf8_lossy(stream);
    let _ = leaked::recognise(&text);
    for event in &whole {
        let _ = leaked::recognise(&event.data);
    }
}
