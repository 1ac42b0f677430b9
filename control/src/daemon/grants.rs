//! The boot phase that turns each agent's grants into the tools it is offered
//! (§3.4, A4). A grant this build does not serve, or whose worker is not
//! running, refuses boot, naming the agent, the grant and what is missing:
//! an agent quietly offered less than it was granted would also be
//! described to its colleagues as holding what it cannot use (§3.11).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::LoadedConfig;
use crate::config::resolved::ResolvedAgent;
use crate::tools::names::{GrantName, parse_grant};
use crate::tools::served::{self, is_built};
use crate::tools::{Host, Registry, ToolRef};
use crate::workers::dispatch::Worker;

/// Why a grant cannot be served this boot, one line per grant.
#[derive(Debug, thiserror::Error)]
#[error(
    "an agent is granted what this build cannot serve (A4):\n  - {}\nRemove each grant, or start what serves it, and boot again.",
    .0.join("\n  - ")
)]
pub struct Unserved(pub Vec<String>);

/// The tools each agent is offered this boot, by username: the core tools
/// this build serves and every granted tool, each of which runs somewhere.
pub fn offered(
    loaded: &LoadedConfig,
    registry: &Registry,
    workers: &BTreeMap<String, Arc<Worker>>,
) -> Result<BTreeMap<String, Vec<ToolRef>>, Unserved> {
    let mut problems = Vec::new();
    let mut offered = BTreeMap::new();
    for agent in &loaded.agents {
        let index = loaded
            .config
            .agents
            .iter()
            .position(|a| a.username == agent.username);
        let grants = index.map_or(&[][..], |i| &loaded.config.agents[i].grants[..]);
        for (j, text) in grants.iter().enumerate() {
            // The configuration check parsed every grant already.
            let Ok(grant) = parse_grant(text) else {
                continue;
            };
            if let Some(missing) = missing(&grant, agent, registry, workers) {
                let key = index.map_or_else(String::new, |i| format!(" (agents[{i}].grants[{j}])"));
                problems.push(format!(
                    "@{}{key}: the grant `{text}` {missing}",
                    agent.username
                ));
            }
        }
        offered.insert(agent.username.clone(), tools_of(agent, registry));
    }
    if problems.is_empty() {
        Ok(offered)
    } else {
        Err(Unserved(problems))
    }
}

/// What keeps `grant` from running this boot, if anything.
fn missing(
    grant: &GrantName,
    agent: &ResolvedAgent,
    registry: &Registry,
    workers: &BTreeMap<String, Arc<Worker>>,
) -> Option<String> {
    let (namespace, named): (&str, Vec<ToolRef>) = match grant {
        GrantName::Namespace(ns) => (
            ns,
            registry
                .toolset(ns)
                .map(|t| {
                    t.tools
                        .iter()
                        .map(|tool| ToolRef::new(ns, &tool.name))
                        .collect()
                })
                .unwrap_or_default(),
        ),
        GrantName::Tool(tool) => (&tool.namespace, vec![tool.clone()]),
    };
    let toolset = registry.toolset(namespace)?;
    let unbuilt: Vec<String> = named
        .iter()
        .filter(|t| !is_built(registry, t))
        .map(ToString::to_string)
        .collect();
    if !unbuilt.is_empty() {
        let whole = unbuilt.len() == named.len();
        return Some(format!(
            "names {} this build does not serve: {}. {} is not part of this build yet; remove the grant until it is",
            if whole { "only tools" } else { "tools" },
            unbuilt.join(", "),
            match &toolset.host {
                Host::Worker(class) => format!("The {class} worker (collegium-worker-{class})"),
                Host::Daemon | Host::Plugin => format!("The `{namespace}` toolset"),
            },
        ));
    }
    let needs_process = matches!(toolset.host, Host::Worker(_) | Host::Plugin);
    let holds_any =
        named.iter().any(|t| agent.holds(t)) || matches!(grant, GrantName::Namespace(_));
    if needs_process && holds_any && !workers.contains_key(namespace) {
        return Some(format!(
            "needs {}, which is not running",
            served::server_of(toolset)
        ));
    }
    None
}

/// The tools an agent is offered: the core tools, its granted tools, and
/// every tool of a namespace granted whole, a plugin's included.
fn tools_of(agent: &ResolvedAgent, registry: &Registry) -> Vec<ToolRef> {
    let mut tools: Vec<ToolRef> = served::core_tools().collect();
    let whole = agent
        .whole_namespaces
        .iter()
        .filter_map(|ns| registry.toolset(ns))
        .flat_map(|t| crate::config::namespace_grant(t, agent.settings.get(&t.namespace)));
    for tool in agent.tools.iter().cloned().chain(whole) {
        if registry.tool(&tool).is_some() && !tools.contains(&tool) {
            tools.push(tool);
        }
    }
    tools
}
