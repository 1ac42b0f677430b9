//! Mattermost ids: 26 characters, a random 128-bit value in base32 with the
//! alphabet Mattermost uses. Tokens are ids of the same form.

const ALPHABET: &[u8; 32] = b"ybndrfg8ejkmcpqxot1uwisza345h769";

pub fn new_id() -> String {
    let value: u128 = rand::random();
    // 26 five-bit groups cover 130 bits: the top group holds the last 3 bits.
    (0..26)
        .map(|i| {
            let shift = 125 - 5 * i;
            let group = if shift >= 0 {
                (value >> shift) & 0x1f
            } else {
                (value << (-shift)) & 0x1f
            };
            char::from(ALPHABET[group as usize])
        })
        .collect()
}

/// Whether `id` has the form Mattermost accepts: 26 letters and digits.
pub fn is_valid(id: &str) -> bool {
    id.len() == 26 && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_26_characters_of_the_alphabet_and_distinct() {
        let ids: std::collections::BTreeSet<String> = (0..1000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            assert!(is_valid(id), "{id}");
            assert!(id.bytes().all(|b| ALPHABET.contains(&b)), "{id}");
        }
    }
}
