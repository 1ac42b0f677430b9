//! The declaration registry: every toolset, built into the daemon or served by
//! a worker or a plugin, declares its namespace, tools, settings schema and
//! ref-only tools here, and configuration checks, grants and dispatch all read
//! the same declarations (§3.4), so nothing is hard-coded twice.

use std::collections::BTreeMap;

use serde_json::Value;

use super::names::ToolRef;

/// Whether a tool stops for a person on every call (§3.7, §3.7a).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    None,
    Approval,
    Ask,
}

/// Where a toolset's calls run (ARCHITECTURE §1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    /// In the control daemon's own process.
    Daemon,
    /// In a worker process of this capability class.
    Worker(String),
    /// In an operator's plugin process (§3.14).
    Plugin,
}

/// What kind of capability a toolset is (§3.4, §3.14).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsetKind {
    /// Framework machinery every agent holds; naming it in config is an error.
    Core,
    /// A framework capability granted per agent.
    Framework,
    /// An operator's plugin.
    Plugin,
}

#[derive(Debug, Clone)]
pub struct ToolDeclaration {
    pub name: String,
    pub description: String,
    pub gate: Gate,
    /// Safe to run again with the same arguments (§3.4).
    pub retryable: bool,
    /// Never billed against the action budget (§5.3); framework toolsets only.
    pub budget_exempt: bool,
    /// May run alongside the other concurrent calls of a completion (§5.1).
    pub concurrent: bool,
    /// A page whose identical re-read replaces it (§3.8).
    pub supersedable: bool,
    /// Ref-only: settings keys that must be present before the tool is offered;
    /// a namespace grant leaves it out until they are (§3.4).
    pub requires_settings: Vec<String>,
    /// JSON Schema of the arguments, where the daemon pins it: a worker that
    /// describes another schema is refused at the handshake. Absent for a
    /// tool whose schema the serving process's description supplies.
    pub parameters: Option<Value>,
}

#[derive(Debug, Clone)]
pub struct SkillDeclaration {
    pub name: String,
    pub description: String,
    pub tools: Vec<ToolRef>,
}

#[derive(Debug, Clone)]
pub struct ToolsetDeclaration {
    pub namespace: String,
    pub kind: ToolsetKind,
    pub host: Host,
    pub tools: Vec<ToolDeclaration>,
    /// JSON Schema of the toolset's merged settings (§3.4).
    pub settings_schema: Value,
    pub skills: Vec<SkillDeclaration>,
}

impl ToolsetDeclaration {
    pub fn tool(&self, name: &str) -> Option<&ToolDeclaration> {
        self.tools.iter().find(|t| t.name == name)
    }
}

/// Every toolset this deployment knows, by namespace.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    toolsets: BTreeMap<String, ToolsetDeclaration>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RegistryError {
    #[error("the namespace `{0}` is declared twice")]
    Duplicate(String),
}

impl Registry {
    /// The framework's own toolsets.
    pub fn framework() -> Self {
        let mut registry = Self::default();
        for toolset in super::framework::declarations() {
            // The framework's declarations are distinct by construction; a
            // duplicate is caught by the registry's own test.
            let _ = registry.add(toolset);
        }
        registry
    }

    pub fn add(&mut self, toolset: ToolsetDeclaration) -> Result<(), RegistryError> {
        if self.toolsets.contains_key(&toolset.namespace) {
            return Err(RegistryError::Duplicate(toolset.namespace));
        }
        self.toolsets.insert(toolset.namespace.clone(), toolset);
        Ok(())
    }

    pub fn toolset(&self, namespace: &str) -> Option<&ToolsetDeclaration> {
        self.toolsets.get(namespace)
    }

    pub fn tool(&self, tool: &ToolRef) -> Option<&ToolDeclaration> {
        self.toolset(&tool.namespace)?.tool(&tool.tool)
    }

    pub fn toolsets(&self) -> impl Iterator<Item = &ToolsetDeclaration> {
        self.toolsets.values()
    }

    /// The tools every agent holds without a grant (§3.4).
    pub fn core_tools(&self) -> Vec<ToolRef> {
        self.toolsets()
            .filter(|t| t.kind == ToolsetKind::Core)
            .flat_map(|t| {
                t.tools
                    .iter()
                    .map(|tool| ToolRef::new(&t.namespace, &tool.name))
            })
            .collect()
    }

    /// Whether `namespace` belongs to the framework, so no plugin may take it
    /// (§3.14).
    pub fn is_reserved(&self, namespace: &str) -> bool {
        self.toolset(namespace)
            .is_some_and(|t| t.kind != ToolsetKind::Plugin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framework_namespaces_are_distinct_and_reserved() {
        let declared = super::super::framework::declarations();
        let registry = Registry::framework();
        assert_eq!(registry.toolsets().count(), declared.len());
        for toolset in &declared {
            assert!(registry.is_reserved(&toolset.namespace));
        }
    }

    #[test]
    fn a_duplicate_namespace_is_refused() {
        let mut registry = Registry::framework();
        let again = registry.toolset("web").expect("web").clone();
        assert_eq!(
            registry.add(again),
            Err(RegistryError::Duplicate("web".into()))
        );
    }

    #[test]
    fn no_tool_both_gates_and_asks_and_every_gated_tool_is_not_concurrent() {
        // §3.7a: no tool declares both; §5.1: a gated call is never concurrent.
        for toolset in Registry::framework().toolsets() {
            for tool in &toolset.tools {
                if tool.gate != Gate::None {
                    assert!(!tool.concurrent, "{}::{}", toolset.namespace, tool.name);
                }
            }
        }
    }

    #[test]
    fn every_settings_schema_compiles() {
        for toolset in Registry::framework().toolsets() {
            assert!(
                jsonschema::validator_for(&toolset.settings_schema).is_ok(),
                "{}",
                toolset.namespace
            );
        }
    }
}
