//! Who may write the plugins' code (§6.1, §3.14): boot refuses a plugins
//! root, a plugin directory or its executable that the daemon's user or an
//! agent's user can write. The daemon runs what is there with its own
//! privilege, so a daemon (or an agent's command) able to rewrite it could
//! make the next start of a plugin run anything. Traversal by agents' users
//! is tried as each of them by the shell worker at its handshake
//! (`crate::host::reach`); this is the write side, read from the modes.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One account the check holds the files to: its uid and every group it
/// is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Writer {
    /// How a refusal names it: `the daemon's user (uid 1000)`, `@mira's user cg-mira`.
    pub who: String,
    pub uid: u32,
    pub gids: Vec<u32>,
}

/// Whether `who` may write a file of this owner and mode, by the
/// permission bits. Root writes anything regardless, so uid 0 is held to
/// the bits others are: a root daemon (`deployment.allow_root`) cannot be
/// kept from its own files, and is refused only what anyone could write.
pub fn may_write(mode: u32, owner: u32, group: u32, who: &Writer) -> bool {
    if mode & 0o002 != 0 {
        return true;
    }
    if who.uid == 0 {
        return false;
    }
    if owner == who.uid {
        return mode & 0o200 != 0;
    }
    who.gids.contains(&group) && mode & 0o020 != 0
}

/// The plugins root, each of `namespaces`' directories and executables,
/// each checked against every writer: one refusal per file and writer.
pub fn writable(plugins_root: &Path, namespaces: &[String], writers: &[Writer]) -> Vec<String> {
    let mut paths: Vec<PathBuf> = vec![plugins_root.to_path_buf()];
    for namespace in namespaces {
        let dir = plugins_root.join(namespace);
        paths.push(dir.join(super::EXECUTABLE));
        paths.push(dir);
    }
    let mut refusals = Vec::new();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            // A missing file is the layout's refusal, not this one's.
            continue;
        };
        let mode = meta.mode() & 0o7777;
        for writer in writers {
            if may_write(mode, meta.uid(), meta.gid(), writer) {
                let (p, uid, gid, who) = (path.display(), meta.uid(), meta.gid(), &writer.who);
                refusals.push(format!(
                    "{p} (uid {uid}, gid {gid}, mode {mode:04o}) is writable by {who}, so the code a plugin runs could be replaced; make it root's and writable by no one else: `chown root {p} && chmod go-w {p}` (§6.1)"
                ));
            }
        }
    }
    refusals
}

/// The daemon's own user, as this process runs.
pub fn daemon() -> Writer {
    let uid = nix::unistd::geteuid().as_raw();
    let mut gids: Vec<u32> = nix::unistd::getgroups()
        .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
        .unwrap_or_default();
    gids.push(nix::unistd::getegid().as_raw());
    Writer {
        who: format!("the daemon's user (uid {uid})"),
        uid,
        gids,
    }
}

/// Each agent's OS user that exists on this host, with its groups.
pub fn agents(usernames: &[String]) -> Vec<Writer> {
    usernames
        .iter()
        .filter_map(|agent| {
            let name = crate::host::os_user_for(agent);
            let user = nix::unistd::User::from_name(&name).ok().flatten()?;
            let c_name = std::ffi::CString::new(name.as_str()).ok()?;
            let gids = nix::unistd::getgrouplist(&c_name, user.gid)
                .map(|g| g.into_iter().map(|g| g.as_raw()).collect())
                .unwrap_or_else(|_| vec![user.gid.as_raw()]);
            Some(Writer {
                who: format!("@{agent}'s user {name}"),
                uid: user.uid.as_raw(),
                gids,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(uid: u32, gids: &[u32]) -> Writer {
        Writer {
            who: format!("uid {uid}"),
            uid,
            gids: gids.to_vec(),
        }
    }

    #[test]
    fn s6_1_the_owner_the_group_and_anyone_are_read_from_the_bits() {
        let daemon = writer(1000, &[1000, 50]);
        assert!(may_write(0o755, 1000, 0, &daemon), "its own, u+w");
        assert!(!may_write(0o555, 1000, 0, &daemon), "its own, read only");
        assert!(!may_write(0o755, 0, 0, &daemon), "root's, 0755");
        assert!(!may_write(0o750, 0, 50, &daemon), "its group's, g-w");
        assert!(may_write(0o770, 0, 50, &daemon), "its group's, g+w");
        assert!(!may_write(0o770, 0, 51, &daemon), "another group's");
        assert!(may_write(0o757, 0, 0, &daemon), "anyone's");
    }

    #[test]
    fn s6_1_a_root_daemon_is_refused_only_what_anyone_may_write() {
        let root = writer(0, &[0]);
        assert!(!may_write(0o755, 0, 0, &root));
        assert!(may_write(0o777, 0, 0, &root));
    }

    #[test]
    fn s6_1_a_plugins_root_the_daemons_user_can_write_is_refused_naming_it() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().expect("tempdir");
        let plugins = root.path().join("plugins");
        std::fs::create_dir_all(plugins.join("bookmark")).expect("dirs");
        std::fs::write(plugins.join("bookmark").join("serve"), "#!/bin/sh\n").expect("serve");
        for (path, mode) in [
            (plugins.clone(), 0o755),
            (plugins.join("bookmark"), 0o755),
            (plugins.join("bookmark").join("serve"), 0o755),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        }
        let owner = std::fs::metadata(&plugins).expect("meta").uid();
        // As the owner's account would be held (whoever runs the tests).
        let daemon = Writer {
            who: "the daemon's user (uid N)".into(),
            uid: if owner == 0 { 4242 } else { owner },
            gids: Vec::new(),
        };
        let stranger = writer(4243, &[]);
        let names = vec!["bookmark".to_string()];
        if owner != 0 {
            let refusals = writable(&plugins, &names, std::slice::from_ref(&daemon));
            assert_eq!(refusals.len(), 3, "{refusals:#?}");
        }
        assert!(writable(&plugins, &names, std::slice::from_ref(&stranger)).is_empty());
        std::fs::set_permissions(&plugins, std::fs::Permissions::from_mode(0o757)).expect("chmod");
        let refusals = writable(&plugins, &names, &[stranger]);
        assert_eq!(refusals.len(), 1, "{refusals:#?}");
        assert!(
            refusals[0].starts_with(&format!("{} (uid {owner}, gid", plugins.display()))
                && refusals[0].contains("mode 0757) is writable by uid 4243")
                && refusals[0].contains(&format!("chmod go-w {}", plugins.display())),
            "{refusals:#?}"
        );
    }
}
