//! The sandbox as the serving process observes itself, for the handshake
//! (ARCHITECTURE §4): the daemon compares it with what the configuration
//! expects and refuses to boot on a weaker one.

use collegium_proto::toolset::v1::Sandbox;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("cannot read the threads' status under /proc/self/task: {0}")]
    Read(std::io::Error),
    #[error("cannot set no-new-privileges: {0}")]
    NoNewPrivileges(nix::Error),
    #[error("/proc/PID/status has no {0} line")]
    Missing(&'static str),
    #[error("/proc/PID/status: {field} is '{value}', not a number")]
    Malformed { field: &'static str, value: String },
}

/// Sets no-new-privileges (and so on everything it executes): nothing it
/// runs can gain privileges through a setuid binary or file capabilities. It
/// cannot be unset. The flag is per thread and inherited by threads created
/// afterwards, so a worker calls this before it starts its async runtime;
/// [`observe`] reports it unset if any thread lacks it.
pub fn forbid_new_privileges() -> Result<(), SandboxError> {
    nix::sys::prctl::set_no_new_privs().map_err(SandboxError::NoNewPrivileges)
}

/// This process's uid, gid, capability sets and no-new-privileges flag.
/// Capabilities and the flag are per thread, so every thread is read: a set
/// holds what any thread holds, and the flag is set only if every thread has
/// it. `landlock_abi` is the ABI the worker applies to what it runs, where it
/// confines with Landlock.
pub fn observe(landlock_abi: Option<u32>) -> Result<Sandbox, SandboxError> {
    let tasks = std::fs::read_dir("/proc/self/task").map_err(SandboxError::Read)?;
    let mut sandbox = Sandbox {
        no_new_privileges: true,
        ..Sandbox::default()
    };
    for task in tasks {
        let path = task.map_err(SandboxError::Read)?.path().join("status");
        let status = match std::fs::read_to_string(&path) {
            Ok(status) => status,
            // A thread that ended while it was being read holds nothing.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(SandboxError::Read(e)),
        };
        let thread = from_status(&status)?;
        sandbox.cap_inheritable |= thread.cap_inheritable;
        sandbox.cap_permitted |= thread.cap_permitted;
        sandbox.cap_effective |= thread.cap_effective;
        sandbox.cap_ambient |= thread.cap_ambient;
        sandbox.cap_bounding |= thread.cap_bounding;
        sandbox.no_new_privileges &= thread.no_new_privileges;
    }
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
    fn arch4_reads_the_kernels_bitmasks() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapPrm:\t00000000000000c0\n\
                      CapEff:\t00000000000000c0\nCapBnd:\t00000000000000e0\n\
                      CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n";
        let sandbox = from_status(status).expect("parses");
        assert_eq!(sandbox.cap_permitted, 0xc0);
        assert_eq!(sandbox.cap_bounding, 0xe0);
        assert!(sandbox.no_new_privileges);
    }

    #[test]
    fn arch4_a_missing_line_is_named() {
        let error = from_status("CapInh:\t0\nNoNewPrivs:\t0\n").expect_err("incomplete");
        assert_eq!(error.to_string(), "/proc/PID/status has no CapPrm line");
    }

    #[test]
    fn arch4_this_process_is_observed() {
        let sandbox = observe(None).expect("observed");
        assert_eq!(sandbox.effective_uid, nix::unistd::geteuid().as_raw());
    }

    #[test]
    fn arch4_one_thread_without_no_new_privileges_is_enough_to_report_it_unset() {
        // A thread started before the flag is set never gets it; the test
        // harness's own threads already run, so the flag is set here in a
        // child process instead of this one.
        let exe = std::env::current_exe().expect("exe");
        if std::env::var_os("SANDBOX_CHILD").is_some() {
            let before = std::thread::spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(300));
            });
            std::thread::sleep(std::time::Duration::from_millis(20));
            forbid_new_privileges().expect("prctl");
            let own = std::fs::read_to_string("/proc/thread-self/status").expect("own status");
            let thread = from_status(&own).expect("parses").no_new_privileges;
            let process = observe(None).expect("observed").no_new_privileges;
            before.join().expect("join");
            println!("thread={thread} process={process}");
            return;
        }
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "sandbox::tests::arch4_one_thread_without_no_new_privileges_is_enough_to_report_it_unset",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("SANDBOX_CHILD", "1")
            .output()
            .expect("child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("thread=true process=false"), "{stdout}");
    }
}
