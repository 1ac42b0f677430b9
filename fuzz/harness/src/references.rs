//! Memory and unit references (§3.6, §3.15): `mab12cd`-style memory
//! references (control/src/memory/refs.rs) and `U-3`-style unit labels
//! (control/src/store/units.rs), as the model types them. Properties: a
//! memory reference yields a lowercase hex prefix of the lengths the store
//! resolves, which reads back as itself; the reference the listing shows
//! for a key yields that key's prefix; a unit label read names a unit whose
//! own label reads back to it, and every unit's label reads as that unit.

use collegium_control::memory::refs::{MIN_CHARS, key_prefix};
use collegium_control::store::{
    REFERENCE_CHARS, memory_reference, parse_trigger_label, parse_unit_label, trigger_label,
    unit_label,
};

use crate::split;

pub fn run(data: &[u8]) {
    let text = split::text(data);
    if let Some(prefix) = key_prefix(&text) {
        assert!((MIN_CHARS..=16).contains(&prefix.len()), "{prefix:?}");
        assert!(
            prefix
                .chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
            "{prefix:?} is not lowercase hex"
        );
        assert_eq!(key_prefix(&prefix).as_deref(), Some(prefix.as_str()));
        assert_eq!(
            key_prefix(&format!("[m{prefix}]")).as_deref(),
            Some(prefix.as_str())
        );
    }
    let key: String = text
        .chars()
        .filter(char::is_ascii_hexdigit)
        .map(|c| c.to_ascii_lowercase())
        .collect();
    if key.len() >= REFERENCE_CHARS {
        let shown = memory_reference(&key);
        assert_eq!(
            key_prefix(&shown).as_deref(),
            Some(&key[..REFERENCE_CHARS]),
            "{shown}"
        );
    }
    if let Some(id) = parse_unit_label(&text) {
        assert!(id > 0, "unit {id}");
        assert_eq!(parse_unit_label(&unit_label(id)), Some(id));
    }
    if let Some(id) = parse_trigger_label(&text) {
        assert_eq!(parse_trigger_label(&trigger_label(id)), Some(id));
    }
    let number = data.iter().fold(0i64, |acc, b| {
        acc.wrapping_mul(257).wrapping_add(i64::from(*b))
    });
    if number > 0 {
        assert_eq!(parse_unit_label(&unit_label(number)), Some(number));
    }
}
