//! What boot holds a plugin to once it has described itself (§3.14, §3.4,
//! §3.5, §6.1): its code writable by root alone, every grant and skill
//! naming what it serves, every agent's settings fitting its schema, and a
//! warning for each tool no agent holds.

use super::{PluginError, root};
use crate::config::LoadedConfig;
use crate::tools::{Registry, ToolsetDeclaration};

/// A plugin tool no agent holds is legitimate, and exactly what a forgotten
/// grant leaves: it is warned of, never refused (§3.14).
pub(super) fn warn_of_ungranted(loaded: &LoadedConfig, declaration: &ToolsetDeclaration) {
    for tool in ungranted(loaded, declaration) {
        tracing::warn!(
            plugin = %declaration.namespace,
            tool = %tool,
            "no agent is granted this plugin tool"
        );
    }
}

/// The tools of `declaration` no agent is granted, by their tool segment.
pub fn ungranted(loaded: &LoadedConfig, declaration: &ToolsetDeclaration) -> Vec<String> {
    let namespace = &declaration.namespace;
    declaration
        .tools
        .iter()
        .filter(|tool| {
            !loaded.agents.iter().any(|agent| {
                agent.whole_namespaces.contains(namespace)
                    || agent
                        .tools
                        .iter()
                        .any(|t| t.namespace == *namespace && t.tool == tool.name)
            })
        })
        .map(|tool| tool.name.clone())
        .collect()
}

/// Nobody but root may write the plugins' code: not the daemon's user, and
/// not an agent's (§6.1).
pub(super) fn check_root(loaded: &LoadedConfig, plugins: &[String]) -> Result<(), PluginError> {
    if plugins.is_empty() {
        return Ok(());
    }
    let agents: Vec<String> = loaded.agents.iter().map(|a| a.username.clone()).collect();
    let mut writers = vec![root::daemon()];
    writers.extend(root::agents(&agents));
    let refusals = root::writable(&loaded.config.deployment.plugins_root, plugins, &writers);
    if refusals.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Writable(refusals))
    }
}

/// Every grant of a single tool of `namespace` names a tool the registry
/// now holds, and every skill of `namespace` assigned is one it declares.
pub(super) fn check_grants(
    loaded: &LoadedConfig,
    registry: &Registry,
    namespace: &str,
) -> Result<(), PluginError> {
    let served = registry
        .toolset(namespace)
        .map(|t| {
            t.tools
                .iter()
                .map(|tool| format!("`{}`", tool.name))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let mut problems = Vec::new();
    for (index, agent) in loaded.agents.iter().enumerate() {
        for tool in agent.tools.iter().filter(|t| t.namespace == namespace) {
            if registry.tool(tool).is_none() {
                problems.push(format!(
                    "agents[{index}] ({}): granted `{}::{}`, which the plugin `{namespace}` does not serve; it serves {served}",
                    agent.username, tool.namespace, tool.tool,
                ));
            }
        }
    }
    // §3.5: a skill's tools in this namespace, held at configuration time
    // by a whole-namespace grant before the plugin had described them, must
    // be tools it serves.
    for (index, agent) in loaded.agents.iter().enumerate() {
        for skill in &agent.skills {
            for tool in skill.tools.iter().filter(|t| t.namespace == namespace) {
                if registry.tool(tool).is_none() {
                    problems.push(format!(
                        "agents[{index}] ({}): the skill `{}` calls `{}::{}`, which the plugin `{namespace}` does not serve; it serves {served}",
                        agent.username, skill.name, tool.namespace, tool.tool,
                    ));
                }
            }
        }
    }
    // §3.5: a plugin's skill is assigned as its tools are granted, and only
    // one its description declares is one it ships.
    let declared = registry
        .toolset(namespace)
        .map(|t| t.skills.as_slice())
        .unwrap_or_default();
    for (index, agent) in loaded.agents.iter().enumerate() {
        for refusal in crate::skills::locate::undeclared(&agent.skills, namespace, declared) {
            problems.push(format!("agents[{index}] ({}): {refusal}", agent.username));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Grant(format!(
            "a grant names a tool or skill no plugin serves:\n  - {}",
            problems.join("\n  - ")
        )))
    }
}

/// Every granted agent's effective settings fit the schema the plugin
/// declared, and every tool of it granted by ref has the settings it works
/// under (§3.4): the checks `config check` makes of a framework toolset.
pub(super) fn check_settings(
    loaded: &LoadedConfig,
    declaration: &ToolsetDeclaration,
) -> Result<(), PluginError> {
    let problems: Vec<String> = crate::config::declared_at_boot(&loaded.config, declaration)
        .into_iter()
        .map(|(agent, problem)| format!("@{agent}: {problem}"))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(PluginError::Settings {
            namespace: declaration.namespace.clone(),
            problems,
        })
    }
}
