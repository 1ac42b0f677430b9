//! A child plugin's environment (§3.14, issue 22): what any process needs
//! and nothing of the daemon's. The daemon's environment may carry a
//! secret (`CREDENTIALS_DIRECTORY`, a token a unit file sets, the notify
//! socket); a plugin's settings reach it with each call (`Invoke`), never
//! through its environment. Descriptors are not inherited either: Rust opens
//! every one close-on-exec, so the child holds its stdio and the sockets
//! handed to it on purpose.

use std::path::PathBuf;

use tokio::process::Command;

/// The search path a plugin starts with.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Variables passed through when the daemon has them: how to log (the
/// journal's stream is the stderr the child shares; a log filter) and the
/// time zone. None is a secret.
const PASSED: &[&str] = &["JOURNAL_STREAM", "RUST_LOG", "TZ"];

/// The whole environment a plugin running as `home`'s user starts with.
pub fn minimal(home: PathBuf) -> Vec<(String, String)> {
    let mut vars = vec![
        ("PATH".to_string(), PATH.to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("HOME".to_string(), home.display().to_string()),
    ];
    for name in PASSED {
        if let Ok(value) = std::env::var(name) {
            vars.push(((*name).to_string(), value));
        }
    }
    vars
}

/// The home of the user a plugin runs as: `run_as`'s, else the daemon's
/// own user's; `/` where the account names none.
pub fn home(run_as: Option<&nix::unistd::User>) -> PathBuf {
    match run_as {
        Some(user) => user.dir.clone(),
        None => nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map_or_else(|| PathBuf::from("/"), |u| u.dir),
    }
}

/// Clears what the daemon's environment holds and sets the minimal one, and
/// keeps every descriptor past stdio from the child.
pub fn apply(command: &mut Command, run_as: Option<&nix::unistd::User>) {
    command.env_clear();
    for (name, value) in minimal(home(run_as)) {
        command.env(name, value);
    }
    close_inherited(command);
}

/// The first descriptor a plugin is not handed on purpose.
const FIRST_UNPASSED: libc::c_uint = 3;

/// Marks every descriptor from 3 up close-on-exec in the child. What this
/// process opens is close-on-exec already, but what it inherited need not
/// be (a pipe of whatever started the daemon), and a plugin gets none of
/// it. Registered before any closure that hands a descriptor on purpose
/// (the Storage socket as fd 3): `dup2` clears the flag on the one it makes.
#[allow(unsafe_code)]
fn close_inherited(command: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec, where
    // only async-signal-safe work is sound; it makes one system call on
    // constants, allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            let done = libc::syscall(
                libc::SYS_close_range,
                FIRST_UNPASSED,
                libc::c_uint::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            if done != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// What to add to a start's error where it may be the kernel's: before
/// Linux 5.11 `close_range` with `CLOSE_RANGE_CLOEXEC` fails (ENOSYS before
/// 5.9, EINVAL after), and the start fails with a bare errno.
pub fn unsupported_hint(error: &std::io::Error) -> &'static str {
    match error.raw_os_error() {
        Some(libc::EINVAL | libc::ENOSYS) => {
            "; a plugin starts with every inherited descriptor closed by close_range(CLOSE_RANGE_CLOEXEC), which needs Linux 5.11 or later (see uname -r)"
        }
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_14_a_start_failing_as_an_old_kernel_fails_names_the_kernel_it_needs() {
        let old = std::io::Error::from_raw_os_error(libc::EINVAL);
        assert!(unsupported_hint(&old).contains("Linux 5.11 or later"));
        let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(unsupported_hint(&missing), "");
    }

    #[test]
    fn s3_14_a_plugins_environment_names_only_what_a_process_needs() {
        let vars = minimal(PathBuf::from("/home/plugin"));
        let names: Vec<&str> = vars.iter().map(|(n, _)| n.as_str()).collect();
        for name in &names {
            assert!(
                ["PATH", "LANG", "HOME"].contains(name) || PASSED.contains(name),
                "{name}"
            );
        }
        assert!(vars.contains(&("HOME".into(), "/home/plugin".into())));
    }
}
