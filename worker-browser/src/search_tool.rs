//! `web::search` as the worker serves it: the provider's address judged by
//! the same policy as any fetch, the query sent through the client that
//! judges every name and hop (§3.4: a SearXNG on the deployment's own
//! network needs the own-network declaration).

use collegium_proto::toolset::v1::{Call, ToolResult};

use crate::fetch::Fetcher;
use crate::search::call_in_scope;

pub async fn search(fetcher: &Fetcher, settings: &serde_json::Value, wire: &Call) -> ToolResult {
    let arguments = String::from_utf8_lossy(&wire.arguments_json);
    let called = call_in_scope(fetcher.http(), fetcher.scope(), settings, &arguments).await;
    ToolResult {
        outcome: Some(called.outcome),
        summary: called.summary,
        ..ToolResult::default()
    }
}
