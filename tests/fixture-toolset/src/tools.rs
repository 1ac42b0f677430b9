//! The fixture's tools: one of every kind a turn meets (issue: worker
//! machinery). Their declarations are what `Describe` reports.

use collegium_proto::toolset::v1::{Gate, ToolDeclaration};
use collegium_worker_kit::audit::digest;
use serde_json::{Value, json};

/// The namespace the fixture serves.
pub const NAMESPACE: &str = "fixture";

/// How a tool behaves when called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Answers at once with what it read.
    Read,
    /// Answers with what it wrote.
    Write,
    /// Answers with the person's answer, which the daemon hands in.
    Ask,
    /// Sleeps `ms` milliseconds, reporting progress, then answers.
    Slow,
    /// Returns a failure result.
    Fail,
    /// Never answers until cancelled.
    Hang,
    /// Returns a page with its content key.
    Page,
    /// Answers with the settings the call carried.
    Greet,
}

pub struct FixtureTool {
    pub name: &'static str,
    pub description: &'static str,
    pub gate: Gate,
    pub retryable: bool,
    pub concurrent: bool,
    pub supersedable: bool,
    pub behaviour: Behaviour,
    pub parameters: fn() -> Value,
    /// The settings it works only under (§3.4).
    pub requires_settings: &'static [&'static str],
}

/// The settings the fixture is configured by (§3.4): a greeting, which
/// `greet` works only under, and a signature; nothing else.
pub fn settings_schema() -> Value {
    json!({"type": "object", "additionalProperties": false,
           "properties": {"greeting": {"type": "string"}, "signature": {"type": "string"}}})
}

fn key() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["key"],
           "properties": {"key": {"type": "string"}}})
}

fn write() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["path", "content"],
           "properties": {"path": {"type": "string"}, "content": {"type": "string"}}})
}

fn question() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["question"],
           "properties": {"question": {"type": "string"}}})
}

fn sleep() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["ms"],
           "properties": {"ms": {"type": "integer", "minimum": 0}}})
}

fn nothing() -> Value {
    json!({"type": "object", "additionalProperties": false})
}

fn url() -> Value {
    json!({"type": "object", "additionalProperties": false, "required": ["url"],
           "properties": {"url": {"type": "string"}}})
}

pub const TOOLS: &[FixtureTool] = &[
    FixtureTool {
        name: "read",
        description: "Reads a key. Ungated, safe to repeat, runs beside other reads.",
        gate: Gate::None,
        retryable: true,
        concurrent: true,
        supersedable: false,
        behaviour: Behaviour::Read,
        parameters: key,
        requires_settings: &[],
    },
    FixtureTool {
        name: "lookup",
        description: "Looks a key up. A second concurrent read.",
        gate: Gate::None,
        retryable: true,
        concurrent: true,
        supersedable: false,
        behaviour: Behaviour::Read,
        parameters: key,
        requires_settings: &[],
    },
    FixtureTool {
        name: "write",
        description: "Writes a file. Stops for a person's approval.",
        gate: Gate::Approval,
        retryable: false,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Write,
        parameters: write,
        requires_settings: &[],
    },
    FixtureTool {
        name: "confirm",
        description: "Asks a person a question.",
        gate: Gate::Ask,
        retryable: false,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Ask,
        parameters: question,
        requires_settings: &[],
    },
    FixtureTool {
        name: "slow",
        description: "Takes its time, reporting progress.",
        gate: Gate::None,
        retryable: false,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Slow,
        parameters: sleep,
        requires_settings: &[],
    },
    FixtureTool {
        name: "fail",
        description: "Fails.",
        gate: Gate::None,
        retryable: false,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Fail,
        parameters: nothing,
        requires_settings: &[],
    },
    FixtureTool {
        name: "hang_read",
        description: "A read that never answers. Retryable.",
        gate: Gate::None,
        retryable: true,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Hang,
        parameters: nothing,
        requires_settings: &[],
    },
    FixtureTool {
        name: "hang_write",
        description: "A write that never answers. Not retryable.",
        gate: Gate::None,
        retryable: false,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Hang,
        parameters: nothing,
        requires_settings: &[],
    },
    FixtureTool {
        name: "page",
        description: "Reads a page whose identical re-read replaces it.",
        gate: Gate::None,
        retryable: true,
        concurrent: true,
        supersedable: true,
        behaviour: Behaviour::Page,
        parameters: url,
        requires_settings: &[],
    },
    FixtureTool {
        name: "greet",
        description: "Greets with the configured greeting. Offered only where one is set.",
        gate: Gate::None,
        retryable: true,
        concurrent: false,
        supersedable: false,
        behaviour: Behaviour::Greet,
        parameters: nothing,
        requires_settings: &["greeting"],
    },
];

pub fn find(name: &str) -> Option<&'static FixtureTool> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The declarations `Describe` reports.
pub fn declarations() -> Vec<ToolDeclaration> {
    TOOLS
        .iter()
        .map(|tool| {
            let schema = (tool.parameters)().to_string();
            ToolDeclaration {
                name: tool.name.into(),
                description: tool.description.into(),
                parameters_schema_sha256: digest(schema.as_bytes()),
                parameters_schema_json: schema,
                gate: tool.gate as i32,
                retryable: tool.retryable,
                concurrent: tool.concurrent,
                supersedable: tool.supersedable,
                requires_settings: tool
                    .requires_settings
                    .iter()
                    .map(ToString::to_string)
                    .collect(),
                ..ToolDeclaration::default()
            }
        })
        .collect()
}
