//! What a checked configuration means for each agent: effective limits, the
//! tools it holds, its skills and its merged settings (§3.4, §3.8, §5.3).

use crate::skills::Skill;
use crate::tools::ToolRef;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    pub action_budget: u32,
    pub context_budget_tokens: u32,
    pub turn_ceiling_tokens: u32,
    pub completion_time_limit_secs: u32,
}

#[derive(Debug, Clone)]
pub struct ResolvedAgent {
    pub username: String,
    /// Declared, else the username with its first letter capitalised (§3.1).
    pub display_name: String,
    pub model: String,
    pub limits: AgentLimits,
    /// The namespaces granted, for the peer roster (§3.11); core ones left out.
    pub namespaces: Vec<String>,
    /// The namespaces granted whole (`web`, not `web::fetch`): every tool of
    /// the namespace, including a plugin's, declared only at boot (§3.4).
    pub whole_namespaces: Vec<String>,
    /// Every tool the agent holds by grant (core tools not listed).
    pub tools: Vec<ToolRef>,
    pub skills: Vec<Skill>,
    /// Effective settings per granted toolset: deployment defaults merged with
    /// the agent's own (§3.4).
    pub settings: super::settings::Settings,
}

impl ResolvedAgent {
    pub fn holds(&self, tool: &ToolRef) -> bool {
        self.tools.contains(tool)
    }
}

/// A name with its first letter capitalised, as §3.1 derives a display name.
pub fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}
