//! A block of "Key: value" lines naming a quoted message — Outlook's From/Sent/To/Subject,
//! a forward's From/Date/Subject/To, Thunderbird's header table (§3.13). Values are kept as
//! written.

use crate::lines::Line;

/// The fields a header block carried and where it ends.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HeaderBlock {
    pub from: Option<String>,
    pub date: Option<String>,
    pub subject: Option<String>,
    pub has_to: bool,
    /// The index of the first line after the block.
    pub end: usize,
}

impl HeaderBlock {
    /// Outlook's block names the sender, when it was sent, and at least one of the
    /// recipients or the subject; less than that is a sentence beginning "From:".
    pub fn is_outlook_shaped(&self) -> bool {
        self.from.is_some() && self.date.is_some() && (self.has_to || self.subject.is_some())
    }

    /// A forward's header lines: at least the sender and one other field.
    pub fn is_forward_shaped(&self) -> bool {
        self.from.is_some() && (self.date.is_some() || self.subject.is_some() || self.has_to)
    }
}

#[derive(Clone, Copy)]
enum Key {
    From,
    Date,
    Subject,
    To,
    Other,
}

/// "From:", "*From:*", "**From:**", "From:\t" — the key of a header line, and its value.
fn header_line(text: &str) -> Option<(Key, &str)> {
    let (key, value) = text.split_once(':')?;
    let key = key.trim_start_matches('*').trim_end();
    let value = value.trim_start_matches('*').trim();
    let key = match key.to_ascii_lowercase().as_str() {
        "from" => Key::From,
        "sent" | "date" => Key::Date,
        "subject" => Key::Subject,
        "to" => Key::To,
        "cc" | "bcc" | "reply-to" | "importance" | "attachments" => Key::Other,
        _ => return None,
    };
    Some((key, value))
}

/// Reads the header block starting at `start`, if one starts there.
pub(crate) fn read(lines: &[Line], start: usize) -> Option<HeaderBlock> {
    let mut block = HeaderBlock::default();
    let mut i = start;
    // The field a folded line continues; none after a field the block does not keep.
    let mut folding: Option<Key> = None;
    while let Some(line) = lines.get(i) {
        if line.marker.is_some() {
            break;
        }
        let continues = i > start && line.text.starts_with([' ', '\t']) && !line.is_blank();
        if continues {
            let field = match folding {
                Some(Key::From) => block.from.as_mut(),
                Some(Key::Date) => block.date.as_mut(),
                Some(Key::Subject) => block.subject.as_mut(),
                _ => None,
            };
            if let Some(field) = field {
                field.push(' ');
                field.push_str(line.text.trim());
            }
        } else {
            let Some((key, value)) = header_line(&line.text) else {
                break;
            };
            let value = Some(value.to_string());
            match key {
                Key::From if block.from.is_none() => block.from = value,
                Key::Date if block.date.is_none() => block.date = value,
                Key::Subject if block.subject.is_none() => block.subject = value,
                Key::To => block.has_to = true,
                // A second From starts another message's block.
                Key::From | Key::Date | Key::Subject => break,
                Key::Other => {}
            }
            folding = Some(key);
        }
        i += 1;
    }
    block.end = i;
    (i > start).then_some(block)
}
