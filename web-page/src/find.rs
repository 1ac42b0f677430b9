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

/// Case folding that keeps one character for one, so an offset in the folded text is the
/// same offset in the page; whitespace of any kind matches a space.
fn fold(c: char) -> char {
    if c.is_whitespace() {
        return ' ';
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(one), None) => one,
        _ => c,
    }
}

pub fn find(text: &str, phrases: &[String]) -> Found {
    let mut folded = String::with_capacity(text.len());
    // The byte in `folded` where each character starts, to turn a match back into characters.
    let mut starts = Vec::with_capacity(text.len());
    // The byte in `text` where each character starts: folding keeps characters one for one
    // but not their widths.
    let mut page_starts = Vec::with_capacity(text.len() + 1);
    for (byte, c) in text.char_indices() {
        starts.push(folded.len());
        page_starts.push(byte);
        folded.push(fold(c));
    }
    page_starts.push(text.len());
    let total = starts.len();
    let mut searched = Vec::new();
    let mut not_searched = Vec::new();
    for phrase in phrases {
        let phrase = phrase.split_whitespace().collect::<Vec<_>>().join(" ");
        if phrase.is_empty() || searched.iter().any(|p: &PhraseHits| p.phrase == phrase) {
            continue;
        }
        if searched.len() == FIND_PHRASES_MAX {
            not_searched.push(phrase);
            continue;
        }
        let needle: String = phrase.chars().map(fold).collect();
        let offsets = folded
            .match_indices(&needle)
            .filter_map(|(byte, _)| starts.binary_search(&byte).ok())
            .collect();
        searched.push(PhraseHits { phrase, offsets });
    }
    let spans = spans(text, &page_starts, &searched, total);
    let span_chars: usize = spans.iter().map(|s| s.end - s.start).sum();
    if !spans.is_empty() && span_chars >= total {
        return Found { total, phrases: searched, not_searched, spans: Vec::new(), whole: Some(text.to_owned()) };
    }
    Found { total, phrases: searched, not_searched, spans, whole: None }
}

/// The shown hits' spans, overlapping ones merged so shared text is shown once.
fn spans(text: &str, page_starts: &[usize], phrases: &[PhraseHits], total: usize) -> Vec<Span> {
    let mut hits: Vec<(usize, usize, usize)> = phrases
        .iter()
        .enumerate()
        .flat_map(|(index, p)| {
            let len = p.phrase.chars().count();
            p.offsets.iter().take(FIND_HITS_SHOWN).map(move |&at| (at, at + len, index))
        })
        .collect();
    hits.sort_unstable();
    let mut merged: Vec<(usize, usize, Vec<(usize, usize)>)> = Vec::new();
    for (at, hit_end, index) in hits {
        let start = at.saturating_sub(FIND_CONTEXT_CHARS);
        let end = (hit_end + FIND_CONTEXT_CHARS).min(total);
        match merged.last_mut() {
            Some(last) if start <= last.1 => {
                last.1 = last.1.max(end);
                last.2.push((index, at));
            }
            _ => merged.push((start, end, vec![(index, at)])),
        }
    }
    merged
        .into_iter()
        .map(|(start, end, hits)| {
            let text = text[page_starts[start]..page_starts[end]].to_owned();
            Span { start, end, text, hits }
        })
        .collect()
}
