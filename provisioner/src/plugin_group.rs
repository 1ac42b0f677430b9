//! The plugin users' group (§3.14, §6.1). A plugin configured with a user
//! of its own must pass `plugins_root` to reach its code, and nothing more
//! of the daemon's. Those users used to join the daemon's own group for
//! that, which also opened to them the configuration file, the workspaces
//! of agents without a user, and the directory of the shell worker's
//! socket. They now share a group of their own, `<daemon user>-plugins`,
//! with the daemon (which starts plugins from that tree), and are taken
//! out of the daemon's group where an earlier provisioner put them.

use std::process::Command;

use nix::unistd::{Gid, Group, User};

use crate::host::{HostError, Outcome, run};

/// The name of the plugin users' group of a deployment whose daemon runs
/// as `daemon_user`.
pub fn name(daemon_user: &str) -> String {
    format!("{daemon_user}-plugins")
}

/// Converges the group `plugins_root` belongs to, and returns it: the
/// daemon's own group where no plugin runs as a user of its own, else the
/// plugin users' group, holding the daemon and those users.
pub fn converge(
    daemon: &User,
    plugin_users: &[&str],
    outcome: &mut Outcome,
) -> Result<Gid, HostError> {
    let daemon_group = lookup_group_by_gid(daemon.gid)?;
    for user in plugin_users {
        leave(user, &daemon_group, outcome)?;
    }
    if plugin_users.is_empty() {
        return Ok(daemon.gid);
    }
    let group = ensure_group(&name(&daemon.name), outcome)?;
    for member in std::iter::once(daemon.name.as_str()).chain(plugin_users.iter().copied()) {
        join(member, &group, outcome)?;
    }
    Ok(group.gid)
}

fn lookup_group_by_gid(gid: Gid) -> Result<Group, HostError> {
    Group::from_gid(gid)
        .map_err(|e| HostError::Lookup(format!("the group {gid}"), e))?
        .ok_or_else(|| HostError::Missing {
            kind: "group",
            name: gid.to_string(),
        })
}

fn lookup_group(name: &str) -> Result<Option<Group>, HostError> {
    Group::from_name(name).map_err(|e| HostError::Lookup(format!("the group {name}"), e))
}

fn ensure_group(name: &str, outcome: &mut Outcome) -> Result<Group, HostError> {
    if let Some(group) = lookup_group(name)? {
        return Ok(group);
    }
    run(
        Command::new("groupadd").args(["--system", name]),
        &format!("creating the group {name}"),
    )?;
    outcome.changes.push(format!("created the group {name}"));
    lookup_group(name)?.ok_or_else(|| HostError::Missing {
        kind: "group",
        name: name.to_string(),
    })
}

/// Adds `user` to `group` as a supplementary group, where it is not yet.
fn join(user: &str, group: &Group, outcome: &mut Outcome) -> Result<(), HostError> {
    if group.mem.iter().any(|m| m == user) {
        return Ok(());
    }
    run(
        Command::new("usermod").args(["--append", "--groups", &group.name, user]),
        &format!("adding {user} to the group {}", group.name),
    )?;
    outcome
        .changes
        .push(format!("added {user} to the group {}", group.name));
    Ok(())
}

/// Takes `user` out of `group`'s supplementary members, where it is one.
fn leave(user: &str, group: &Group, outcome: &mut Outcome) -> Result<(), HostError> {
    if !group.mem.iter().any(|m| m == user) {
        return Ok(());
    }
    run(
        Command::new("gpasswd").args(["--delete", user, &group.name]),
        &format!("removing {user} from the group {}", group.name),
    )?;
    outcome.changes.push(format!(
        "removed the plugin user {user} from the daemon's group {}",
        group.name
    ));
    Ok(())
}
