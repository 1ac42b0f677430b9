//! The boot's check of the host for its shell agents (§6.1): it only
//! checks; `collegium-provision host` converges.

use super::Layout;

/// What the boot finds wrong with the host for its shell agents (§6.1):
/// each agent's OS user exists, its home is its own, and its workspace is
/// readable, and only readable, by it. A line per problem, naming the
/// agent.
pub fn problems(layout: &Layout) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    for place in &layout.agents {
        let (Some(name), Some(home)) = (&place.os_user, &place.home) else {
            continue;
        };
        let user = match nix::unistd::User::from_name(name) {
            Ok(Some(user)) => user,
            _ => {
                found.push(format!(
                    "agent {}: its OS user {name} does not exist",
                    place.agent
                ));
                continue;
            }
        };
        let (uid, gid) = (user.uid.as_raw(), user.gid.as_raw());
        match std::fs::metadata(home) {
            Ok(m) if m.uid() == uid && m.mode() & 0o077 == 0 => {}
            Ok(_) => found.push(format!(
                "agent {}: its home {} is not {name}'s alone (owner {name}, mode 0700)",
                place.agent,
                home.display()
            )),
            Err(e) => found.push(format!(
                "agent {}: its home {}: {e}",
                place.agent,
                home.display()
            )),
        }
        let Some(workspace) = &place.workspace else {
            continue;
        };
        match std::fs::metadata(workspace) {
            Ok(m) => {
                let mode = m.mode();
                let readable = m.gid() == gid && mode & 0o050 == 0o050;
                let writable = m.uid() == uid || (m.gid() == gid && mode & 0o020 != 0);
                if !readable || writable || mode & 0o007 != 0 {
                    found.push(format!(
                        "agent {}: its workspace {} must be readable, and only readable, by {name} (group {name}, mode 2750, owned by the daemon's user)",
                        place.agent,
                        workspace.display()
                    ));
                }
            }
            Err(e) => found.push(format!(
                "agent {}: its workspace {}: {e}",
                place.agent,
                workspace.display()
            )),
        }
    }
    found
}
