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
                requires_settings: Vec::new(),
            }
        })
        .collect()
}
