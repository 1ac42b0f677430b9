//! The host's layout (A2, §6.1): which OS user each shell-holding agent runs
//! as, and where each agent's home and workspace are. The provisioner
//! converges the host to it, the daemon's boot checks it, and the shell
//! worker maps an agent to its user by the same rule, so the three never
//! disagree about who an agent is on this machine.
//!
//! The rule: `cg-` and the agent's username, with every character Linux user
//! names do not take (anything but `a-z`, `0-9`, `_` and `-`) written as `-`.
//! Mattermost usernames are at most 22 characters, so the result fits
//! Linux's 32; a longer one, or two agents that would share a user, is
//! refused by name (§6.1: two agents never share a user).

mod check;
pub mod reach;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::LoadedConfig;
use crate::tools::ToolRef;

pub use check::problems;

/// The prefix every agent's OS user carries.
pub const USER_PREFIX: &str = "cg-";
/// Linux's limit on a user name (`LOGIN_NAME_MAX` less the terminator).
pub const USER_NAME_MAX: usize = 32;

/// The OS users of the framework's unprivileged workers, by worker class
/// (ARCHITECTURE §4): each its own, so a compromised browser reaches nothing
/// the PDF reader holds, and neither reaches an agent's files. The
/// provisioner makes them; the daemon holds each worker to its user.
pub const WORKER_USERS: &[(&str, &str)] = &[
    ("browser", "collegium-browser"),
    ("pdf", "collegium-pdf"),
    ("mail", "collegium-mail"),
];

/// The OS user the framework worker of `class` runs as, where it has one of
/// its own (the shell worker runs as root).
pub fn worker_user(class: &str) -> Option<&'static str> {
    WORKER_USERS
        .iter()
        .find(|(c, _)| *c == class)
        .map(|(_, user)| *user)
}

/// The OS user an agent's shell runs as.
pub fn os_user_for(agent: &str) -> String {
    let body: String = agent
        .chars()
        .map(|c| match c {
            'a'..='z' | '0'..='9' | '_' | '-' => c,
            'A'..='Z' => c.to_ascii_lowercase(),
            _ => '-',
        })
        .collect();
    format!("{USER_PREFIX}{body}")
}

/// One agent's place on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentPlace {
    pub agent: String,
    /// Its OS user (and group, of the same name), for an agent that holds
    /// `shell::run`.
    pub os_user: Option<String>,
    /// Its home, for a shell-holding agent: its user's, mode 0700.
    pub home: Option<PathBuf>,
    /// Its workspace, for an agent holding the shell or a workspace tool:
    /// the daemon writes it, the agent's user only reads it.
    pub workspace: Option<PathBuf>,
}

/// The host as the configuration lays it out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub daemon_user: String,
    pub state_dir: PathBuf,
    pub runtime_dir: PathBuf,
    pub audit_dir: PathBuf,
    pub plugins_root: PathBuf,
    /// The directory holding the configuration file.
    pub config_dir: PathBuf,
    pub homes_root: PathBuf,
    pub workspaces_root: PathBuf,
    pub agents: Vec<AgentPlace>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error(
        "agents[{index}] ({agent}): its OS user would be `{user}`, {len} characters, over Linux's {USER_NAME_MAX}; choose a shorter username"
    )]
    TooLong {
        index: usize,
        agent: String,
        user: String,
        len: usize,
    },
    #[error(
        "agents {first} and {second} would share the OS user `{user}`; two agents never share one (§6.1): rename one of them"
    )]
    Shared {
        first: String,
        second: String,
        user: String,
    },
}

/// The layout of `loaded`; the daemon's user is `daemon_user` where the
/// configuration names none.
pub fn layout(loaded: &LoadedConfig, daemon_user: &str) -> Result<Layout, LayoutError> {
    let deployment = &loaded.config.deployment;
    let shell = ToolRef::new("shell", "run");
    let mut users: BTreeMap<String, String> = BTreeMap::new();
    let mut agents = Vec::new();
    for (index, agent) in loaded.agents.iter().enumerate() {
        let holds_shell = agent.holds(&shell);
        let holds_workspace = holds_shell || agent.tools.iter().any(|t| t.namespace == "workspace");
        let os_user = if holds_shell {
            let user = os_user_for(&agent.username);
            if user.len() > USER_NAME_MAX {
                return Err(LayoutError::TooLong {
                    index,
                    agent: agent.username.clone(),
                    len: user.len(),
                    user,
                });
            }
            if let Some(first) = users.insert(user.clone(), agent.username.clone()) {
                return Err(LayoutError::Shared {
                    first,
                    second: agent.username.clone(),
                    user,
                });
            }
            Some(user)
        } else {
            None
        };
        agents.push(AgentPlace {
            agent: agent.username.clone(),
            home: holds_shell.then(|| deployment.homes_root.join(&agent.username)),
            workspace: holds_workspace.then(|| deployment.workspaces_root.join(&agent.username)),
            os_user,
        });
    }
    Ok(Layout {
        daemon_user: deployment
            .daemon_user
            .clone()
            .unwrap_or_else(|| daemon_user.to_string()),
        state_dir: deployment.state_dir.clone(),
        runtime_dir: deployment.runtime_dir.clone(),
        audit_dir: deployment.audit_dir.clone(),
        plugins_root: deployment.plugins_root.clone(),
        config_dir: std::path::absolute(&loaded.path)
            .ok()
            .and_then(|path| path.parent().map(std::path::Path::to_path_buf))
            .unwrap_or_default(),
        homes_root: deployment.homes_root.clone(),
        workspaces_root: deployment.workspaces_root.clone(),
        agents,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s6_1_an_agents_os_user_is_its_username_under_a_prefix_in_linuxs_alphabet() {
        assert_eq!(os_user_for("mira"), "cg-mira");
        assert_eq!(os_user_for("ops.bot"), "cg-ops-bot");
        assert_eq!(os_user_for("Theo_2"), "cg-theo_2");
        assert!(os_user_for(&"a".repeat(22)).len() <= USER_NAME_MAX);
    }
}
