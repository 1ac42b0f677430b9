//! A seeded generator for the traffic's choices and the model's answers,
//! so a run's posts can be made again from its seed. SplitMix64: small,
//! with no dependency, and good enough to spread choices evenly (this
//! chooses posts, it protects nothing).

#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// The finaliser of SplitMix64: also a hash of one number.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A hash of some text, for choices that must follow from a request's
/// content rather than from the order requests arrive in.
pub fn hash_text(text: &str) -> u64 {
    text.bytes()
        .fold(0xCBF2_9CE4_8422_2325_u64, |h, b| mix(h ^ u64::from(b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_makes_the_same_choices_and_they_spread() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let mut counts = [0usize; 4];
        for _ in 0..4_000 {
            let x = a.below(4);
            assert_eq!(x, b.below(4));
            counts[x] += 1;
        }
        assert!(
            counts.iter().all(|&c| (800..1_200).contains(&c)),
            "{counts:?}"
        );
    }
}
