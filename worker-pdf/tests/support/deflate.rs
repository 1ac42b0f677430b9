//! Deflate streams that inflate far past their size, written bit by bit
//! (RFC 1951) so a test need not compress gigabytes to make one: a period
//! of literals, then back-references of 258 bytes at the period's distance,
//! each two or three bits under a dynamic Huffman code where the match is
//! the one-bit code.

struct Bits {
    out: Vec<u8>,
    byte: u8,
    used: u8,
}

impl Bits {
    fn new() -> Self {
        Self {
            out: Vec::new(),
            byte: 0,
            used: 0,
        }
    }

    fn bit(&mut self, bit: u32) {
        self.byte |= ((bit & 1) as u8) << self.used;
        self.used += 1;
        if self.used == 8 {
            self.out.push(self.byte);
            self.byte = 0;
            self.used = 0;
        }
    }

    /// A header field or extra bits: least significant bit first.
    fn value(&mut self, value: u32, bits: u32) {
        for i in 0..bits {
            self.bit(value >> i);
        }
    }

    /// A Huffman code: most significant bit first.
    fn code(&mut self, (code, len): (u32, u32)) {
        for i in (0..len).rev() {
            self.bit(code >> i);
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.out.push(self.byte);
        }
        self.out
    }
}

/// Canonical Huffman codes for `lengths` (RFC 1951 §3.2.2).
fn canonical(lengths: &[u32]) -> Vec<(u32, u32)> {
    let max = lengths.iter().copied().max().unwrap_or(0) as usize;
    let mut count = vec![0u32; max + 1];
    for &l in lengths {
        if l > 0 {
            count[l as usize] += 1;
        }
    }
    let mut next = vec![0u32; max + 2];
    let mut code = 0;
    for bits in 1..=max {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    lengths
        .iter()
        .map(|&l| {
            if l == 0 {
                (0, 0)
            } else {
                let c = next[l as usize];
                next[l as usize] += 1;
                (c, l)
            }
        })
        .collect()
}

/// The distance code and its extra bits for `distance` (1..=32768).
fn distance_code(distance: u32) -> (usize, u32, u32) {
    if distance <= 4 {
        return ((distance - 1) as usize, 0, 0);
    }
    let mut code = 4usize;
    let mut base = 5u32;
    let mut extra = 1u32;
    loop {
        for _ in 0..2 {
            if distance < base + (1 << extra) {
                return (code, extra, distance - base);
            }
            base += 1 << extra;
            code += 1;
        }
        extra += 1;
    }
}

/// A zlib stream inflating to `period` repeated to at least `total` bytes.
/// Its Adler-32 is not computed: whatever reads it is stopped long before
/// the end.
pub fn repeating_zlib(period: &[u8], total: u64) -> Vec<u8> {
    let mut literal_lengths = vec![0u32; 286];
    let mut symbols: Vec<usize> = period.iter().map(|b| usize::from(*b)).collect();
    symbols.sort_unstable();
    symbols.dedup();
    symbols.push(256);
    // The match (symbol 285, length 258) is the one-bit code; the others
    // share the other half, in a complete code.
    let k = symbols.len() as u32;
    let l = 32 - (k - 1).leading_zeros();
    let short = (1u32 << l) - k;
    for (i, s) in symbols.iter().enumerate() {
        literal_lengths[*s] = 1 + if (i as u32) < short { l - 1 } else { l };
    }
    literal_lengths[285] = 1;
    let (dcode, dextra_bits, dextra) = distance_code(period.len() as u32);
    let other = if dcode == 0 { 1 } else { 0 };
    let mut distance_lengths = vec![0u32; dcode.max(other) + 1];
    distance_lengths[dcode] = 1;
    distance_lengths[other] = 1;
    let literal_codes = canonical(&literal_lengths);
    let distance_codes = canonical(&distance_lengths);

    let mut bits = Bits::new();
    bits.value(1, 1); // BFINAL
    bits.value(2, 2); // dynamic Huffman
    bits.value(286 - 257, 5);
    bits.value(distance_lengths.len() as u32 - 1, 5);
    bits.value(19 - 4, 4);
    // Code lengths 0..=15 each a four-bit code (a complete code); the
    // repeat codes 16..=18 unused.
    const ORDER: [usize; 19] = [
        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
    ];
    for symbol in ORDER {
        bits.value(if symbol < 16 { 4 } else { 0 }, 3);
    }
    for &length in literal_lengths.iter().chain(distance_lengths.iter()) {
        bits.code((length, 4));
    }
    for b in period {
        bits.code(literal_codes[usize::from(*b)]);
    }
    let matches = total.saturating_sub(period.len() as u64).div_ceil(258);
    for _ in 0..matches {
        bits.code(literal_codes[285]);
        bits.code(distance_codes[dcode]);
        bits.value(dextra, dextra_bits);
    }
    bits.code(literal_codes[256]);
    let mut out = vec![0x78, 0x01];
    out.extend(bits.finish());
    out.extend([0, 0, 0, 0]);
    out
}

#[test]
fn a_repeating_stream_inflates_to_its_period() {
    use std::io::Read;
    for period in [&b"\0"[..], b"(a) Tj\n", b"xyz"] {
        let stream = repeating_zlib(period, 100_000);
        let mut inflated = Vec::new();
        // The Adler-32 is wrong by design: the deflate inside is read alone.
        flate2::read::DeflateDecoder::new(&stream[2..stream.len() - 4])
            .read_to_end(&mut inflated)
            .expect("inflates");
        assert!(inflated.len() >= 100_000, "{}", inflated.len());
        assert!(inflated.chunks(period.len()).all(|c| period.starts_with(c)));
    }
}
