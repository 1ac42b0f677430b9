//! A mail call's outcomes on the wire (§7.1, §7.2). A refusal is a result
//! the model reads: a stale message id, a server that refused a recipient.
//! A failure is the mailbox not answering. An unresolved send is one that
//! may have gone and cannot be known to have: it ends the turn (§7.1).

use collegium_proto::toolset::v1::{
    Failure, InvalidArguments, Refusal, Success, ToolResult, Unresolved, tool_result,
};

fn with(outcome: tool_result::Outcome, summary: String) -> ToolResult {
    ToolResult {
        outcome: Some(outcome),
        summary,
        ..ToolResult::default()
    }
}

pub fn success(text: String, summary: String) -> ToolResult {
    with(
        tool_result::Outcome::Success(Success {
            text,
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

pub fn unresolved(message: String, summary: String) -> ToolResult {
    with(
        tool_result::Outcome::Unresolved(Unresolved { message }),
        summary,
    )
}

pub fn invalid(message: String) -> ToolResult {
    with(
        tool_result::Outcome::InvalidArguments(InvalidArguments { message }),
        "arguments refused".into(),
    )
}
