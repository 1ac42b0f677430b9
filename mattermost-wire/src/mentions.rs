//! Who a post mentions, decided as the Mattermost server decides it (contract
//! §E): the text is parsed as Markdown, adjacent plain-text nodes are joined
//! into runs (code spans and blocks are never text), and each run is split
//! into words and matched against the channel's keywords by the server's word
//! algorithm. Detection and stripping share this one grammar (§4.5).

use std::collections::BTreeSet;
use std::ops::Range;

use pulldown_cmark::{Event, Options, Parser};

/// A channel-wide mention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChannelWide {
    Channel,
    All,
    Here,
}

impl ChannelWide {
    fn from_keyword(lowercase: &str) -> Option<Self> {
        match lowercase {
            "@channel" => Some(Self::Channel),
            "@all" => Some(Self::All),
            "@here" => Some(Self::Here),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Channel => "channel",
            Self::All => "all",
            Self::Here => "here",
        }
    }
}

/// One matched mention: the username (lowercase, without `@`) and, where the
/// source text maps onto the parsed text, the byte range of its `@handle` in
/// the scanned text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    pub username: String,
    pub span: Option<Range<usize>>,
}

/// What a scan of one text found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MentionScan {
    /// Matched keywords, in text order, repeats included.
    pub mentions: Vec<Mention>,
    /// `@words` that named no keyword (lowercase as written, without `@`): the
    /// server's "other potential mentions", notified as not in the channel
    /// when they name a user.
    pub potential: Vec<String>,
    pub channel_wide: BTreeSet<ChannelWide>,
}

impl MentionScan {
    /// The distinct usernames mentioned.
    pub fn usernames(&self) -> BTreeSet<String> {
        self.mentions.iter().map(|m| m.username.clone()).collect()
    }

    /// Everyone the post notifies: the keywords matched, every member for
    /// `@channel` and `@all`, and the members `online` for `@here` — as the
    /// server decides for members on default notification settings — less
    /// the author, who is never mentioned by their own post.
    pub fn recipients(
        &self,
        members: &[String],
        online: &dyn Fn(&str) -> bool,
        author: &str,
    ) -> BTreeSet<String> {
        let mut recipients = self.usernames();
        let everyone = self.channel_wide.contains(&ChannelWide::Channel)
            || self.channel_wide.contains(&ChannelWide::All);
        for member in members {
            if everyone || (self.channel_wide.contains(&ChannelWide::Here) && online(member)) {
                recipients.insert(member.clone());
            }
        }
        recipients.remove(author);
        recipients
    }

    fn merge(&mut self, other: MentionScan) {
        self.mentions.extend(other.mentions);
        self.potential.extend(other.potential);
        self.channel_wide.extend(other.channel_wide);
    }
}

/// The longest text the server scans for mentions (twice the largest post a
/// database column holds); a longer one mentions nobody.
pub const MAX_SCANNED_LEN: usize = 1024 * 64 * 2;

/// Scans `text` as Markdown. `is_keyword` answers for a lowercase username
/// (without `@`) whether `@username` is a keyword here: in Mattermost, whether
/// that user is a member of the channel.
pub fn scan(text: &str, is_keyword: &dyn Fn(&str) -> bool) -> MentionScan {
    let mut scan = MentionScan::default();
    if text.len() > MAX_SCANNED_LEN {
        return scan;
    }
    for run in text_runs(text) {
        for part in run.split_at_holes() {
            scan_words(&part, is_keyword, &mut scan);
        }
    }
    scan
}

/// Scans a post the way the server does: its message, then each attachment
/// text (pretext, text, field values), each as Markdown. Spans refer to the
/// message only; an attachment's mentions carry none.
pub fn scan_post(
    message: &str,
    attachment_texts: &[&str],
    is_keyword: &dyn Fn(&str) -> bool,
) -> MentionScan {
    let mut result = scan(message, is_keyword);
    for text in attachment_texts {
        let mut other = scan(text, is_keyword);
        for mention in &mut other.mentions {
            mention.span = None;
        }
        result.merge(other);
    }
    result
}

/// `text` with every mention of a keyword the grammar reads rewritten by
/// `name_for` (given the lowercase username), so that quoting it mentions
/// none of them (§4.5). A mention the source cannot be cut at (an escape or
/// an entity spelled it) leaves the whole text disarmed instead: each `@` a
/// full-width `＠` and each `&` an entity of its own, so that nothing in it
/// reads as a mention.
pub fn replace_mentions(
    text: &str,
    is_keyword: &dyn Fn(&str) -> bool,
    name_for: &dyn Fn(&str) -> String,
) -> String {
    let found = scan(text, is_keyword);
    let mut spans: Vec<(Range<usize>, &str)> = Vec::new();
    for mention in &found.mentions {
        match &mention.span {
            Some(span) => spans.push((span.clone(), mention.username.as_str())),
            None => return disarmed(text),
        }
    }
    spans.sort_by_key(|(span, _)| span.start);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (span, username) in spans {
        if span.start < at {
            continue;
        }
        out.push_str(&text[at..span.start]);
        out.push_str(&name_for(username));
        at = span.end;
    }
    out.push_str(&text[at..]);
    // A replacement can join what was apart into a new mention: then
    // nothing is left to read as one.
    if scan(&out, is_keyword).mentions.is_empty() {
        out
    } else {
        disarmed(text)
    }
}

/// The text with every `@` and `&` made inert, so nothing in it can spell
/// a mention, by name or by entity.
pub fn disarmed(text: &str) -> String {
    text.replace('&', "&amp;").replace('@', "＠")
}

/// A run of adjacent plain text, with a map from its bytes back to the source.
struct TextRun {
    text: String,
    /// (offset in `text`, offset in the source) for each piece whose text is
    /// exactly its source; pieces that differ (escapes, entities) map nowhere.
    pieces: Vec<(Range<usize>, Option<usize>)>,
}

impl TextRun {
    /// The run cut around its autolinks and emoji, which the server parses as
    /// nodes of their own, so their text is never scanned and they end a run.
    fn split_at_holes(&self) -> Vec<TextRun> {
        let holes = crate::autolinks::holes(&self.text);
        let mut parts = Vec::new();
        let mut start = 0;
        for hole in holes
            .iter()
            .chain(std::iter::once(&(self.text.len()..self.text.len())))
        {
            if hole.start > start {
                parts.push(self.slice(start..hole.start));
            }
            start = hole.end;
        }
        parts
    }

    fn slice(&self, range: Range<usize>) -> TextRun {
        let pieces = self
            .pieces
            .iter()
            .filter_map(|(piece, source)| {
                let start = piece.start.max(range.start);
                let end = piece.end.min(range.end);
                (start < end).then(|| {
                    (
                        start - range.start..end - range.start,
                        source.map(|s| s + start - piece.start),
                    )
                })
            })
            .collect();
        TextRun {
            text: self.text[range].to_string(),
            pieces,
        }
    }

    fn source_range(&self, range: &Range<usize>) -> Option<Range<usize>> {
        self.pieces.iter().find_map(|(piece, source)| {
            let source = (*source)?;
            (piece.start <= range.start && range.end <= piece.end)
                .then(|| source + range.start - piece.start..source + range.end - piece.start)
        })
    }
}

/// The runs of plain text a Markdown document holds. Any node that is not
/// text ends a run, as the server's walk does; code is not text. Raw HTML is
/// text here, since Mattermost's parser knows none; so are tables and
/// strikethrough, which it does not parse either.
fn text_runs(markdown: &str) -> Vec<TextRun> {
    let options = Options::empty();
    let mut runs = Vec::new();
    let mut current = TextRun {
        text: String::new(),
        pieces: Vec::new(),
    };
    let mut in_code_block = false;
    for (event, range) in Parser::new_ext(markdown, options).into_offset_iter() {
        let piece = match event {
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) if !in_code_block => {
                Some(text)
            }
            Event::Start(pulldown_cmark::Tag::CodeBlock(_)) => {
                in_code_block = true;
                None
            }
            Event::End(pulldown_cmark::TagEnd::CodeBlock) => {
                in_code_block = false;
                None
            }
            _ => None,
        };
        match piece {
            Some(text) => {
                let start = current.text.len();
                current.text.push_str(&text);
                let source = (markdown.get(range.clone()) == Some(&*text)).then_some(range.start);
                current.pieces.push((start..current.text.len(), source));
            }
            None => {
                if !current.text.is_empty() {
                    runs.push(std::mem::replace(
                        &mut current,
                        TextRun {
                            text: String::new(),
                            pieces: Vec::new(),
                        },
                    ));
                }
            }
        }
    }
    if !current.text.is_empty() {
        runs.push(current);
    }
    runs
}

/// Characters that stay inside a word (§E.3 step 1).
fn is_word_char(c: char) -> bool {
    matches!(c, ':' | '.' | '-' | '_' | '@') || c.is_alphabetic() || c.is_numeric()
}

/// The words of `text` with their byte offsets.
fn words(text: &str) -> Vec<(usize, &str)> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (is_word_char(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, &text[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        words.push((s, &text[s..]));
    }
    words
}

/// The server's word algorithm (§E.3) over one run.
fn scan_words(run: &TextRun, is_keyword: &dyn Fn(&str) -> bool, scan: &mut MentionScan) {
    let check = |word: &str, offset: usize, scan: &mut MentionScan| -> bool {
        let lower = word.to_lowercase();
        if let Some(wide) = ChannelWide::from_keyword(&lower) {
            scan.channel_wide.insert(wide);
            return true;
        }
        match lower.strip_prefix('@') {
            Some(name) if !name.is_empty() && is_keyword(name) => {
                scan.mentions.push(Mention {
                    username: name.to_string(),
                    span: run.source_range(&(offset..offset + word.len())),
                });
                true
            }
            _ => false,
        }
    };
    let is_channel_wide_exact = |w: &str| matches!(w, "@here" | "@channel" | "@all");

    for (start, word) in words(&run.text) {
        // Step 2: a word that starts and ends with `:` is taken for an emoji.
        if word.starts_with(':') && word.ends_with(':') {
            continue;
        }
        // Step 3.
        let trimmed = word.trim_start_matches([':', '.', '-', '_']);
        let offset = start + (word.len() - trimmed.len());
        // Step 4.
        if check(trimmed, offset, scan) {
            continue;
        }
        // Step 5: drop trailing `.`, `-`, `:`, `_` one at a time.
        let mut shorter = trimmed;
        let mut found = false;
        while let Some(rest) = shorter.strip_suffix(['.', '-', ':', '_']) {
            shorter = rest;
            if check(shorter, offset, scan) {
                found = true;
                break;
            }
        }
        if found {
            continue;
        }
        if !is_channel_wide_exact(trimmed) && trimmed.starts_with('@') {
            // Step 6: an unknown `@word` is a potential mention, not split.
            let name = trimmed.strip_suffix(['.', '-', ':']).unwrap_or(trimmed);
            scan.potential.push(name[1..].to_lowercase());
        } else if trimmed.contains(['.', '-', ':']) {
            // Step 7: split at `.`, `-` and `:` and check each part.
            let mut part_start = 0;
            for part in trimmed.split(['.', '-', ':']) {
                let part_offset = offset + part_start;
                part_start += part.len() + 1;
                if part.is_empty() || check(part, part_offset, scan) {
                    continue;
                }
                if !is_channel_wide_exact(part) && part.starts_with('@') {
                    scan.potential.push(part[1..].to_lowercase());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(name: &str) -> bool {
        matches!(name, "agent" | "mira" | "theo")
    }

    fn mentioned(text: &str) -> Vec<String> {
        scan(text, &member).usernames().into_iter().collect()
    }

    #[test]
    fn spans_point_at_the_handle_in_the_source() {
        let text = "Hi **@Mira**, ask x-@theo.";
        let found = scan(text, &member);
        let spans: Vec<&str> = found
            .mentions
            .iter()
            .map(|m| &text[m.span.clone().expect("span")])
            .collect();
        assert_eq!(spans, ["@Mira", "@theo"]);
    }

    fn stripped(text: &str) -> String {
        replace_mentions(text, &member, &|name: &str| format!("[{name}]"))
    }

    #[test]
    fn s4_5_stripping_reads_mentions_as_the_grammar_does() {
        assert_eq!(
            stripped("ask @Mira_ and x-@theo."),
            "ask [mira]_ and x-[theo]."
        );
        assert_eq!(stripped("`@mira` stays code"), "`@mira` stays code");
        assert_eq!(stripped("mail ana@mira.example"), "mail ana@mira.example");
        for text in ["ask @Mira_ now", "&#64;mira hi", "\\@theo", "@mira-"] {
            assert!(
                scan(&stripped(text), &member).mentions.is_empty(),
                "{text} → {}",
                stripped(text)
            );
        }
    }

    #[test]
    fn code_is_never_a_mention() {
        assert!(mentioned("`@agent`").is_empty());
        assert!(mentioned("```\n@agent\n```").is_empty());
        assert!(mentioned("    @agent indented").is_empty());
        assert_eq!(
            mentioned("``@agent"),
            ["agent"],
            "an unbalanced backtick is text"
        );
    }

    #[test]
    fn markup_splits_into_runs_like_the_server() {
        assert!(mentioned("a_@agent").is_empty());
        assert_eq!(mentioned("_@agent"), ["agent"]);
        assert_eq!(mentioned("<b>@agent</b>"), ["agent"]);
        assert_eq!(mentioned("[see @agent](http://x)"), ["agent"]);
        assert!(
            mentioned("[see](http://x/@agent)").is_empty(),
            "a link target is not text"
        );
    }
}
