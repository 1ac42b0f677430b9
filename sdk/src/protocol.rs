//! The protocol versions this SDK speaks (§3.14: each declared range is
//! checked against the deployment's at boot). The handshake answers with
//! the daemon's version when it falls inside the range, and refuses it
//! otherwise, naming both.

use std::ops::RangeInclusive;

/// Every `collegium.toolset.v1` protocol version this SDK serves.
pub const SUPPORTED: RangeInclusive<u32> = 1..=1;

/// The version to answer a daemon speaking `daemon`, or why not.
pub fn agree(daemon: u32) -> Result<u32, String> {
    if SUPPORTED.contains(&daemon) {
        Ok(daemon)
    } else {
        Err(format!(
            "the daemon speaks protocol version {daemon}; this plugin's SDK speaks {} to {}: rebuild the plugin against an SDK that speaks it",
            SUPPORTED.start(),
            SUPPORTED.end()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_14_the_sdk_speaks_the_protocol_this_build_defines() {
        assert!(SUPPORTED.contains(&collegium_proto::PROTOCOL_VERSION));
        assert_eq!(agree(collegium_proto::PROTOCOL_VERSION), Ok(1));
    }

    #[test]
    fn s3_14_a_version_outside_the_range_is_refused_naming_both() {
        let refused = agree(7).expect_err("refused");
        assert!(refused.contains("version 7"), "{refused}");
        assert!(refused.contains("speaks 1 to 1"), "{refused}");
    }
}
