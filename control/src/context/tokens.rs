//! Token estimates (§3.8): the budget is charged before a unit is admitted,
//! before any provider has counted it, so the framework estimates. Four
//! characters a token is the common rule for English prose under the
//! tokenisers in use; the per-message overhead covers role and framing.
//! The turn ceiling's share of the window leaves slack for the error (§3.8).

/// What a message's framing costs beyond its text.
pub const MESSAGE_OVERHEAD: u64 = 4;

/// The estimated tokens of `text` as one message.
pub fn estimate(text: &str) -> u64 {
    (text.chars().count() as u64).div_ceil(4) + MESSAGE_OVERHEAD
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_estimate_grows_with_the_text() {
        assert_eq!(estimate(""), MESSAGE_OVERHEAD);
        assert_eq!(estimate("abcd"), 1 + MESSAGE_OVERHEAD);
        assert!(estimate(&"x".repeat(4000)) > estimate(&"x".repeat(400)));
    }
}
