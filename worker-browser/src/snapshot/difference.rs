//! Where a growing page first differs from what the snapshot before showed
//! (§3.4: where a page grows with each action, the view shows only what the
//! snapshot before showed; the result says where it first differs).

/// The character offset at which `now` first differs from `before`, if
/// they differ.
pub fn first_difference(before: &str, now: &str) -> Option<usize> {
    let mut a = before.chars();
    let mut b = now.chars();
    let mut at = 0;
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some(x), Some(y)) if x == y => at += 1,
            _ => return Some(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_difference;

    #[test]
    fn grown_pages_differ_where_the_growth_starts() {
        assert_eq!(first_difference("abc", "abc"), None);
        assert_eq!(first_difference("abc", "abcdef"), Some(3));
        assert_eq!(first_difference("aéc", "aéx"), Some(2));
        assert_eq!(first_difference("abc", "ab"), Some(2));
    }
}
