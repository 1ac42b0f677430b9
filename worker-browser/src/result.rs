//! A web call's outcomes on the wire. A refusal is a result the model reads
//! (§7.2): a blocked address, a page the site will not serve, a certificate
//! that fails. A failure ends the turn: a search provider that refuses the
//! deployment's credentials or does not answer (§3.4).

use collegium_proto::toolset::v1::{
    Document, Failure, InvalidArguments, Refusal, Success, ToolResult, tool_result,
};

fn with(outcome: tool_result::Outcome, summary: String) -> ToolResult {
    ToolResult {
        outcome: Some(outcome),
        summary,
        ..ToolResult::default()
    }
}

pub fn success(text: String, content_key: Option<String>, summary: String) -> ToolResult {
    with(
        tool_result::Outcome::Success(Success {
            text,
            content_key,
            ..Success::default()
        }),
        summary,
    )
}

/// A document for the daemon to have read by the worker that reads it.
pub fn document(document: Document, summary: String) -> ToolResult {
    with(
        tool_result::Outcome::Success(Success {
            document: Some(document),
            ..Success::default()
        }),
        summary,
    )
}

pub fn refusal(message: String, summary: String) -> ToolResult {
    with(tool_result::Outcome::Refusal(Refusal { message }), summary)
}

pub fn failure(message: String, summary: String) -> ToolResult {
    with(tool_result::Outcome::Failure(Failure { message }), summary)
}

pub fn invalid(message: String) -> ToolResult {
    with(
        tool_result::Outcome::InvalidArguments(InvalidArguments { message }),
        "arguments refused".into(),
    )
}
