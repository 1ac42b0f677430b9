//! Cutting one fuzz input into the several values a target needs, so the
//! fuzzer mutates all of them at once and a corpus file stays one file.

/// The separator between parts: a byte no seed text holds, so a seed can be
/// written as its parts joined.
pub const SEPARATOR: u8 = 0xff;

/// The input's parts, at most `n`: the last takes the rest, separators and
/// all, and missing parts are empty.
pub fn parts(data: &[u8], n: usize) -> Vec<&[u8]> {
    let mut out: Vec<&[u8]> = data.splitn(n, |b| *b == SEPARATOR).collect();
    while out.len() < n {
        out.push(&[]);
    }
    out
}

/// A part as text, lossily: the code under test takes `&str`.
pub fn text(part: &[u8]) -> String {
    String::from_utf8_lossy(part).into_owned()
}

/// The first byte as a selector, and the rest.
pub fn selector(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((first, rest)) => (*first, rest),
        None => (0, data),
    }
}
