//! Runs iproute2's `ip`, the one tool the lab configures namespaces with.

use std::process::Command;

use super::LabError;

/// Runs `ip ARGS`, failing with what it printed.
pub(super) fn ip(args: &[&str]) -> Result<String, LabError> {
    let output = Command::new("ip")
        .args(args)
        .output()
        .map_err(|source| LabError::Ip {
            command: args.join(" "),
            message: format!("could not run `ip`: {source}"),
        })?;
    if !output.status.success() {
        return Err(LabError::Ip {
            command: args.join(" "),
            message: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
