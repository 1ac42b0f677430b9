//! Case-insensitive substring matching as search defines it (§3.8), and the
//! bounded excerpt around a match. The index finds candidates; this decides,
//! so a phrase under three characters (a scan) and one over (the trigram
//! index) match by the same rule.

/// Text folded for case, with where each original character starts in both.
struct Folded {
    text: String,
    /// (offset in the folded text, offset in the original), per character.
    starts: Vec<(usize, usize)>,
}

fn fold_mapped(text: &str) -> Folded {
    let mut folded = String::with_capacity(text.len());
    let mut starts = Vec::with_capacity(text.len());
    for (at, c) in text.char_indices() {
        starts.push((folded.len(), at));
        folded.extend(c.to_lowercase());
    }
    Folded {
        text: folded,
        starts,
    }
}

/// The phrase folded as text is, for [`find`].
pub fn fold(phrase: &str) -> String {
    phrase.chars().flat_map(char::to_lowercase).collect()
}

/// Where `folded_phrase` first occurs in `text`, ignoring case, as a byte
/// range of `text`.
pub fn find(text: &str, folded_phrase: &str) -> Option<(usize, usize)> {
    if folded_phrase.is_empty() {
        return None;
    }
    let folded = fold_mapped(text);
    let start = folded.text.find(folded_phrase)?;
    let end = start + folded_phrase.len();
    // A match starts on a character's folded start (the phrase's first
    // folded char is whole), and ends before the first character starting
    // at or after its end.
    let original = |offset: usize| {
        let index = folded.starts.partition_point(|(f, _)| *f < offset);
        folded.starts.get(index).map_or(text.len(), |(_, o)| *o)
    };
    let from = folded
        .starts
        .iter()
        .rev()
        .find(|(f, _)| *f <= start)
        .map_or(0, |(_, o)| *o);
    Some((from, original(end)))
}

/// A bounded part of a text: what is shown, and how many characters were
/// left out either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Excerpt {
    pub text: String,
    pub before: usize,
    pub after: usize,
    pub total: usize,
}

impl Excerpt {
    pub fn is_whole(&self) -> bool {
        self.before == 0 && self.after == 0
    }
}

/// Up to `context` characters either side of the byte range `found`.
pub fn around(text: &str, found: (usize, usize), context: usize) -> Excerpt {
    let total = text.chars().count();
    let match_start = text[..found.0].chars().count();
    let match_chars = text[found.0..found.1].chars().count();
    let from = match_start.saturating_sub(context);
    let to = (match_start + match_chars + context).min(total);
    chars(text, from, to, total)
}

/// Characters `from..to` of a text of `total` characters.
pub fn chars(text: &str, from: usize, to: usize, total: usize) -> Excerpt {
    Excerpt {
        text: text
            .chars()
            .skip(from)
            .take(to.saturating_sub(from))
            .collect(),
        before: from,
        after: total.saturating_sub(to),
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_8_matching_ignores_case_and_finds_a_part_of_a_word() {
        let text = "We DEPLOYED the release on Friday";
        let (s, e) = find(text, &fold("deploy")).expect("found");
        assert_eq!(&text[s..e], "DEPLOY");
        assert!(find(text, &fold("Tuesday")).is_none());
    }

    #[test]
    fn s3_8_matching_folds_beyond_ascii() {
        let text = "Réunion à ÉTÉ prévue";
        let (s, e) = find(text, &fold("été")).expect("found");
        assert_eq!(&text[s..e], "ÉTÉ");
    }

    #[test]
    fn s3_8_a_one_character_phrase_matches() {
        assert_eq!(find("a/b", &fold("/")), Some((1, 2)));
    }

    #[test]
    fn s3_8_an_excerpt_says_what_it_left_out_either_side() {
        let text = format!("{}needle{}", "x".repeat(500), "y".repeat(300));
        let found = find(&text, "needle").expect("found");
        let excerpt = around(&text, found, 100);
        assert_eq!(excerpt.before, 400);
        assert_eq!(excerpt.after, 200);
        assert_eq!(excerpt.total, 806);
        assert_eq!(excerpt.text.chars().count(), 206);
        assert!(excerpt.text.contains("needle"));
        let short = around(
            "a needle here",
            find("a needle here", "needle").expect("found"),
            100,
        );
        assert!(short.is_whole());
    }
}
