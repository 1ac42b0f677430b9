//! Dropping root for good (§3.13): started as root, the worker reads the
//! password files (which its own user may not be able to) and then becomes
//! its user before any thread exists, so no thread keeps root's ids.

use nix::unistd::{Gid, Uid, User, setgroups, setresgid, setresuid};

#[derive(Debug, thiserror::Error)]
pub enum DropError {
    #[error("the OS user {0} does not exist; run collegium-provision host")]
    NoUser(String),
    #[error("looking up {user}: {source}")]
    Lookup { user: String, source: nix::Error },
    #[error("{user} is root; the mail worker never serves as root")]
    Root { user: String },
    #[error("becoming {user}: {step}: {source}")]
    Switch {
        user: String,
        step: &'static str,
        source: nix::Error,
    },
    #[error("still able to regain root after becoming {0}")]
    Regained(String),
}

/// The user `name`, looked up.
pub fn account(name: &str) -> Result<User, DropError> {
    User::from_name(name)
        .map_err(|source| DropError::Lookup {
            user: name.to_string(),
            source,
        })?
        .ok_or_else(|| DropError::NoUser(name.to_string()))
}

/// Becomes `user` in every id, with no supplementary group. Must run while
/// the process has one thread: the ids are per thread at the kernel.
pub fn become_user(user: &User) -> Result<(), DropError> {
    let name = user.name.clone();
    if user.uid.is_root() {
        return Err(DropError::Root { user: name });
    }
    let switch = |step: &'static str| {
        let user = name.clone();
        move |source| DropError::Switch { user, step, source }
    };
    setgroups(&[]).map_err(switch("setgroups"))?;
    setresgid(user.gid, user.gid, user.gid).map_err(switch("setresgid"))?;
    setresuid(user.uid, user.uid, user.uid).map_err(switch("setresuid"))?;
    // Dropped for good: going back must fail.
    if setresuid(Uid::from_raw(0), Uid::from_raw(0), Uid::from_raw(0)).is_ok()
        || setresgid(Gid::from_raw(0), Gid::from_raw(0), Gid::from_raw(0)).is_ok()
    {
        return Err(DropError::Regained(name));
    }
    Ok(())
}
