//! The sandbox as the serving process observes itself, for the handshake
//! (ARCHITECTURE §4): the daemon compares it with what the configuration
//! expects and refuses to boot on a weaker one.

use collegium_proto::toolset::v1::Sandbox;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot read /proc/self/status: {0}")]
    Read(std::io::Error),
    #[error("cannot set no-new-privileges: {0}")]
    NoNewPrivileges(nix::Error),
    #[error("/proc/self/status has no {0} line")]
    Missing(&'static str),
    #[error("/proc/self/status: {field} is '{value}', not a number")]
    Malformed { field: &'static str, value: String },
}

/// Sets no-new-privileges on this process (and so on everything it
/// executes): nothing it runs can gain privileges through a setuid binary or
/// file capabilities. It cannot be unset.
pub fn forbid_new_privileges() -> Result<(), SandboxError> {
    nix::sys::prctl::set_no_new_privs().map_err(SandboxError::NoNewPrivileges)
}

/// This process's uid, gid, capability sets and no-new-privileges flag.
/// `landlock_abi` is the ABI the worker applies to what it runs, where it
/// confines with Landlock.
pub fn observe(landlock_abi: Option<u32>) -> Result<Sandbox, SandboxError> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(SandboxError::Read)?;
    let mut sandbox = from_status(&status)?;
    sandbox.effective_uid = nix::unistd::geteuid().as_raw();
    sandbox.effective_gid = nix::unistd::getegid().as_raw();
    sandbox.landlock_abi = landlock_abi;
    Ok(sandbox)
}

/// The capability sets and no-new-privileges flag from the text of
/// `/proc/PID/status`.
pub fn from_status(status: &str) -> Result<Sandbox, SandboxError> {
    let field = |name: &'static str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
            .ok_or(SandboxError::Missing(name))
    };
    let mask = |name: &'static str| -> Result<u64, SandboxError> {
        let value = field(name)?;
        u64::from_str_radix(value, 16).map_err(|_| SandboxError::Malformed {
            field: name,
            value: value.to_string(),
        })
    };
    let no_new_privs = field("NoNewPrivs")?;
    Ok(Sandbox {
        cap_inheritable: mask("CapInh")?,
        cap_permitted: mask("CapPrm")?,
        cap_effective: mask("CapEff")?,
        cap_ambient: mask("CapAmb")?,
        cap_bounding: mask("CapBnd")?,
        no_new_privileges: match no_new_privs {
            "1" => true,
            "0" => false,
            other => {
                return Err(SandboxError::Malformed {
                    field: "NoNewPrivs",
                    value: other.to_string(),
                });
            }
        },
        ..Sandbox::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_bitmasks() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t00000000000000c0\n\
                      CapEff:\t00000000000000c0\nCapBnd:\t00000000000000e0\n\
                      CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";
        let sandbox = from_status(status).expect("parses");
        assert_eq!(sandbox.cap_permitted, 0xc0);
        assert_eq!(sandbox.cap_bounding, 0xe0);
        assert!(sandbox.no_new_privileges);
    }

    #[test]
    fn a_missing_line_is_named() {
        let error = from_status("CapInh:\t0\nNoNewPrivs:\t0\n").expect_err("incomplete");
        assert_eq!(error.to_string(), "/proc/self/status has no CapPrm line");
    }

    #[test]
    fn this_process_is_observed() {
        let sandbox = observe(None).expect("observed");
        assert_eq!(sandbox.effective_uid, nix::unistd::geteuid().as_raw());
    }
}
