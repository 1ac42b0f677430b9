//! A toolset's wire declarations as the registry holds them (ARCHITECTURE
//! §4): one translation for the handshake check, for plugins whose
//! description is their declaration, and for tests that declare a worker.

use collegium_proto::toolset::v1::{self as wire, DescribeResponse};

use crate::tools::{Gate, Host, ToolDeclaration, ToolsetDeclaration, ToolsetKind};

/// The gate a tool states; none when it states none (`GATE_UNSPECIFIED` or
/// a value this daemon does not know), which the handshake refuses (§3.14).
pub fn gate(wire_gate: i32) -> Option<Gate> {
    match wire::Gate::try_from(wire_gate) {
        Ok(wire::Gate::None) => Some(Gate::None),
        Ok(wire::Gate::Approval) => Some(Gate::Approval),
        Ok(wire::Gate::Ask) => Some(Gate::Ask),
        Ok(wire::Gate::Unspecified) | Err(_) => None,
    }
}

/// One tool as the registry declares it. A tool with no gate is declared
/// ungated here and refused by the handshake check, which reads the wire.
pub fn tool(declared: &wire::ToolDeclaration) -> ToolDeclaration {
    ToolDeclaration {
        name: declared.name.clone(),
        description: declared.description.clone(),
        gate: gate(declared.gate).unwrap_or(Gate::None),
        retryable: declared.retryable,
        budget_exempt: false,
        concurrent: declared.concurrent,
        supersedable: declared.supersedable,
        requires_settings: declared.requires_settings.clone(),
        parameters: serde_json::from_str(&declared.parameters_schema_json).ok(),
    }
}

/// A plugin's toolset, from its description (§3.14).
pub fn plugin(namespace: &str, described: &DescribeResponse) -> ToolsetDeclaration {
    ToolsetDeclaration {
        namespace: namespace.to_string(),
        kind: ToolsetKind::Plugin,
        host: Host::Plugin,
        tools: described.tools.iter().map(tool).collect(),
        settings_schema: serde_json::from_str(&described.settings_schema_json)
            .unwrap_or_else(|_| serde_json::json!({"type": "object"})),
        // §3.5: a plugin's skills are namespaced like its tools. Their
        // bodies, and the tools claim boot checks against grants, are the
        // SKILL.md files in the plugin's directory, read at configuration
        // check; what the description adds is that the plugin ships them.
        skills: described
            .skills
            .iter()
            .map(|s| crate::tools::registry::SkillDeclaration {
                name: s.name.clone(),
                description: s.description.clone(),
                tools: s
                    .tools
                    .iter()
                    .filter_map(|t| crate::tools::framework::parse_tool_ref(t))
                    .collect(),
            })
            .collect(),
    }
}

/// A framework tool as its worker describes it: the registry's own
/// declaration on the wire, with the one schema both ends hold, so the
/// handshake finds no gap. `None` where the registry declares no such tool.
pub fn framework_wire(namespace: &str, name: &str) -> Option<wire::ToolDeclaration> {
    let declared = crate::tools::framework::declarations()
        .into_iter()
        .find(|t| t.namespace == namespace)?
        .tools
        .into_iter()
        .find(|tool| tool.name == name)?;
    let schema = declared
        .parameters
        .clone()
        .unwrap_or_else(|| serde_json::json!({"type": "object"}))
        .to_string();
    let gate = match declared.gate {
        Gate::None => wire::Gate::None,
        Gate::Approval => wire::Gate::Approval,
        Gate::Ask => wire::Gate::Ask,
    };
    Some(wire::ToolDeclaration {
        name: declared.name,
        description: declared.description,
        gate: gate as i32,
        retryable: declared.retryable,
        concurrent: declared.concurrent,
        supersedable: declared.supersedable,
        parameters_schema_sha256: collegium_worker_kit::audit::digest(schema.as_bytes()),
        parameters_schema_json: schema,
        requires_settings: declared.requires_settings,
        budget_exempt: false,
        core: false,
    })
}
