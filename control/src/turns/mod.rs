//! The turn (§3.3, §5): what the runner decides about a turn's own output.
//! The runner itself lands with the rest of the turn machinery.

pub mod rejections;
