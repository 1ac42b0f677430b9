//! Where a few phrases occur in a page, each with a bounded span of text around it and the
//! offset a window reads it from (§3.4: a field in a long page costs a search and a small
//! window rather than the page). Matching ignores case; offsets count characters.

/// Characters of context shown on each side of a hit.
pub const FIND_CONTEXT_CHARS: usize = 160;

/// Hits shown per phrase; the rest are counted, with where the next one starts.
pub const FIND_HITS_SHOWN: usize = 10;

/// Phrases searched in one find; the brief's "a few".
pub const FIND_PHRASES_MAX: usize = 8;

/// One phrase's hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhraseHits {
    pub phrase: String,
    /// Character offsets of every hit, in order.
    pub offsets: Vec<usize>,
}

impl PhraseHits {
    /// Hits beyond those shown.
    pub fn not_shown(&self) -> usize {
        self.offsets.len().saturating_sub(FIND_HITS_SHOWN)
    }
}

/// A stretch of the page around one or more hits, shown once however many hits share it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    /// The character it starts at: the offset a window reads it from.
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// (phrase index, character offset) of each shown hit inside it.
    pub hits: Vec<(usize, usize)>,
}

/// What a find returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Characters searched: the whole of what was read.
    pub total: usize,
    pub phrases: Vec<PhraseHits>,
    /// Phrases past `FIND_PHRASES_MAX`, not searched.
    pub not_searched: Vec<String>,
    /// The spans in page order; empty when `whole` is.
    pub spans: Vec<Span>,
    /// The whole text, where the spans would have taken more than it.
    pub whole: Option<String>,
}

/// Case folding that keeps every character's UTF-8 width, so a match's byte offset in the
/// folded text is its byte offset in the page. The few characters whose lower case is wider or
/// narrower (the Kelvin sign, a capital dotted I) match only as written; ASCII whitespace of
/// any kind matches a space.
fn fold(c: char) -> char {
    if c.is_ascii() {
        return if c.is_ascii_whitespace() {
            ' '
        } else {
            c.to_ascii_lowercase()
        };
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(one), None) if one.len_utf8() == c.len_utf8() => one,
        _ => c,
    }
}

pub fn find(text: &str, phrases: &[String]) -> Found {
    let folded: String = text.chars().map(fold).collect();
    let mut searched = Vec::new();
    let mut not_searched = Vec::new();
    for phrase in phrases {
        let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
        if phrase.is_empty() || searched.iter().any(|p: &Hits| p.hits.phrase == phrase) {
            continue;
        }
        if searched.len() == FIND_PHRASES_MAX {
            not_searched.push(phrase);
            continue;
        }
        let needle: String = phrase.chars().map(fold).collect();
        let bytes: Vec<usize> = folded
            .match_indices(&needle)
            .map(|(byte, _)| byte)
            .collect();
        let offsets = char_offsets(text, &bytes);
        let needle_bytes = needle.len();
        searched.push(Hits {
            hits: PhraseHits { phrase, offsets },
            bytes,
            needle_bytes,
        });
    }
    let total = text.chars().count();
    let spans = spans(text, &searched);
    let span_chars: usize = spans.iter().map(|s| s.end - s.start).sum();
    let phrases = searched.into_iter().map(|h| h.hits).collect();
    if !spans.is_empty() && span_chars >= total {
        return Found {
            total,
            phrases,
            not_searched,
            spans: Vec::new(),
            whole: Some(text.to_owned()),
        };
    }
    Found {
        total,
        phrases,
        not_searched,
        spans,
        whole: None,
    }
}

/// One phrase's hits with their byte positions, which the spans are cut by.
struct Hits {
    hits: PhraseHits,
    bytes: Vec<usize>,
    needle_bytes: usize,
}

/// The character offsets of ascending byte offsets, in one pass.
fn char_offsets(text: &str, bytes: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(bytes.len());
    let (mut at_byte, mut at_char) = (0, 0);
    for &byte in bytes {
        at_char += text[at_byte..byte].chars().count();
        at_byte = byte;
        out.push(at_char);
    }
    out
}

/// The byte `n` characters before `byte`, or the start.
fn back(text: &str, byte: usize, n: usize) -> usize {
    text[..byte]
        .char_indices()
        .rev()
        .nth(n.saturating_sub(1))
        .map_or(0, |(b, _)| b)
}

/// The byte `n` characters after `byte`, or the end.
fn ahead(text: &str, byte: usize, n: usize) -> usize {
    text[byte..]
        .char_indices()
        .nth(n)
        .map_or(text.len(), |(b, _)| byte + b)
}

/// A span being built: character and byte bounds, and the hits inside it.
struct Stretch {
    start: usize,
    start_byte: usize,
    end: usize,
    end_byte: usize,
    hits: Vec<(usize, usize)>,
}

/// The shown hits' spans, overlapping ones merged so shared text is shown once.
fn spans(text: &str, phrases: &[Hits]) -> Vec<Span> {
    let mut around: Vec<Stretch> = Vec::new();
    for (index, phrase) in phrases.iter().enumerate() {
        let len = phrase.hits.phrase.chars().count();
        for (&at, &byte) in phrase
            .hits
            .offsets
            .iter()
            .zip(&phrase.bytes)
            .take(FIND_HITS_SHOWN)
        {
            let start_byte = back(text, byte, FIND_CONTEXT_CHARS);
            let hit_end_byte = byte + phrase.needle_bytes;
            let end_byte = ahead(text, hit_end_byte, FIND_CONTEXT_CHARS);
            around.push(Stretch {
                start: at - text[start_byte..byte].chars().count(),
                start_byte,
                end: at + len + text[hit_end_byte..end_byte].chars().count(),
                end_byte,
                hits: vec![(index, at)],
            });
        }
    }
    around.sort_unstable_by_key(|s| (s.start, s.hits[0].1));
    let mut merged: Vec<Stretch> = Vec::new();
    for next in around {
        match merged.last_mut() {
            Some(last) if next.start <= last.end => {
                if next.end > last.end {
                    last.end = next.end;
                    last.end_byte = next.end_byte;
                }
                last.hits.extend(next.hits);
            }
            _ => merged.push(next),
        }
    }
    merged
        .into_iter()
        .map(|s| Span {
            start: s.start,
            end: s.end,
            text: text[s.start_byte..s.end_byte].to_owned(),
            hits: s.hits,
        })
        .collect()
}
