//! What this build serves (§3.4, A4). The registry declares every toolset the
//! specification names, so configuration can be checked against the whole
//! surface; this module says which of those tools this build can actually
//! run. Nothing is offered that cannot run, and nothing granted, configured
//! or promised in a prompt is quietly dropped: a grant or a key this build
//! does not act on is refused, naming it, until the feature lands and its
//! tools are added here.

use super::{Host, Registry, ToolRef, ToolsetDeclaration};

/// The core tools this daemon serves itself, offered to every agent.
pub const CORE: &[(&str, &str)] = &[
    ("builtins", "now"),
    ("results", "read"),
    ("skills", "load"),
    ("triggers", "resolve"),
];

/// The granted tools this daemon serves itself (`ask::human` in the turn
/// runner, the workspace toolset beside the calls, memory in `crate::memory`).
pub const DAEMON_GRANTED: &[(&str, &str)] = &[
    ("ask", "human"),
    ("conversations", "search"),
    ("conversations", "read"),
    ("workspace", "write"),
    ("workspace", "read"),
    ("workspace", "list"),
    ("workspace", "find"),
    ("workspace", "grep"),
    ("workspace", "stat"),
    ("memory", "read"),
    ("memory", "write"),
    ("memory", "append"),
    ("memory", "replace"),
    ("memory", "rewrite"),
    ("memory", "delete"),
    ("tasks", "assign"),
    ("tasks", "report"),
    ("tasks", "close"),
    ("tasks", "read"),
];

/// The tools each framework worker of this build serves (ARCHITECTURE §4):
/// its class, then the tools. A worker's handshake is held to these; the
/// rest of its toolset's declaration waits for its feature to land, and a
/// grant naming one is refused until then (A4).
pub const WORKER_TOOLS: &[(&str, &[&str])] = &[
    ("shell", &["run"]),
    (
        "browser",
        &[
            "navigate", "click", "fill", "hover", "select", "fetch", "search",
        ],
    ),
    (
        "mail",
        &["list", "search", "open", "conversation", "send", "reply"],
    ),
];

/// The framework workers that render their gated calls' approval payloads
/// themselves (§3.7): a mail send is shown as the message it will be.
pub const RENDERS_PAYLOAD: &[&str] = &["mail"];

/// Whether the toolset hosted by `host` renders its own approval payload.
pub fn renders_payload(host: &Host) -> bool {
    matches!(host, Host::Worker(class) if RENDERS_PAYLOAD.contains(&class.as_str()))
}

/// Whether this build's worker of `class` serves `tool`.
pub fn worker_serves(class: &str, tool: &str) -> bool {
    WORKER_TOOLS
        .iter()
        .any(|(c, tools)| *c == class && tools.contains(&tool))
}

/// Whether this build can run `tool` at all. A plugin's tools are served by
/// its own process, whose `Describe` is checked at boot (§3.14).
pub fn is_built(registry: &Registry, tool: &ToolRef) -> bool {
    let Some(toolset) = registry.toolset(&tool.namespace) else {
        return false;
    };
    if toolset.tool(&tool.tool).is_none() {
        return false;
    }
    match &toolset.host {
        Host::Daemon => CORE
            .iter()
            .chain(DAEMON_GRANTED)
            .any(|(namespace, name)| tool.namespace == *namespace && tool.tool == *name),
        Host::Worker(class) => worker_serves(class, &tool.tool),
        Host::Plugin => true,
    }
}

/// Whether this build runs any tool of `toolset`: settings for a toolset
/// that runs none of them would do nothing.
pub fn any_built(registry: &Registry, toolset: &ToolsetDeclaration) -> bool {
    toolset
        .tools
        .iter()
        .any(|t| is_built(registry, &ToolRef::new(&toolset.namespace, &t.name)))
}

/// What serves `toolset`'s calls, as an operator would look for it.
pub fn server_of(toolset: &ToolsetDeclaration) -> String {
    match &toolset.host {
        Host::Daemon => "the daemon".to_string(),
        Host::Worker(class) => format!("the {class} worker (collegium-worker-{class})"),
        Host::Plugin => format!("the plugin `{}`", toolset.namespace),
    }
}

/// The core tools every agent is offered.
pub fn core_tools() -> impl Iterator<Item = ToolRef> {
    CORE.iter()
        .map(|(namespace, tool)| ToolRef::new(*namespace, *tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a4_every_tool_named_as_served_is_declared() {
        let registry = Registry::framework();
        for (namespace, tool) in CORE.iter().chain(DAEMON_GRANTED) {
            let tool = ToolRef::new(*namespace, *tool);
            assert!(registry.tool(&tool).is_some(), "{tool} is not declared");
            assert!(is_built(&registry, &tool), "{tool}");
        }
    }

    #[test]
    fn a4_every_tool_the_framework_declares_is_built() {
        let registry = Registry::framework();
        for toolset in registry.toolsets() {
            for tool in &toolset.tools {
                let tool = ToolRef::new(&toolset.namespace, &tool.name);
                assert!(
                    is_built(&registry, &tool),
                    "{tool} is declared but not served"
                );
            }
        }
    }
}
