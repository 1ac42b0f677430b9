//! Server-Sent Events framing, parsed incrementally from the bytes as they
//! arrive. Written here rather than taken from a crate because the whole of
//! it is the loop below, and reading raw chunks is what lets the idle timeout
//! (§7.2) see every byte the provider sends.

/// One dispatched event: its `event:` name (if any) and its joined `data:`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the events they completed. Each byte is looked
    /// at once: lines are cut from a moving start, and the consumed prefix
    /// is dropped once per call.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[start..].iter().position(|b| *b == b'\n') {
            let end = start + offset;
            let line = String::from_utf8_lossy(&self.buffer[start..end]).into_owned();
            start = end + 1;
            self.line(line.trim_end_matches('\r'), &mut events);
        }
        self.buffer.drain(..start);
        events
    }

    fn line(&mut self, line: &str, events: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if !self.data.is_empty() || self.event.is_some() {
                events.push(SseEvent {
                    event: self.event.take(),
                    data: std::mem::take(&mut self.data).join("\n"),
                });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_framed_across_chunk_boundaries() {
        let mut parser = SseParser::default();
        assert!(parser.feed(b"event: message_start\nda").is_empty());
        let events = parser.feed(b"ta: {\"a\":1}\n\n: comment\ndata: x\r\ndata: y\n\n");
        assert_eq!(
            events,
            vec![
                SseEvent {
                    event: Some("message_start".into()),
                    data: "{\"a\":1}".into()
                },
                SseEvent {
                    event: None,
                    data: "x\ny".into()
                },
            ]
        );
    }
}
