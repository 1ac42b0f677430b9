//! `web::search` as the worker serves it: the provider's address is judged
//! by the same policy as any fetch before the query goes out, through the
//! client that judges every name and hop (§3.4: a SearXNG on the
//! deployment's own network needs the own-network declaration).

use collegium_proto::toolset::v1::{Call, Failure, ToolResult, tool_result};

use crate::fetch::Fetcher;
use crate::search::{SearchSettings, call};

pub async fn search(fetcher: &Fetcher, settings: &serde_json::Value, wire: &Call) -> ToolResult {
    // The provider's address is the operator's: one the policy refuses is a
    // deployment out of step with itself, which ends the turn (§3.4: an
    // unanswering provider ends it).
    if let Ok(Some(provider)) = SearchSettings::from_settings_json(settings)
        && let Err(refusal) = fetcher.scope().judge_url(provider.endpoint.as_str())
    {
        return ToolResult {
            outcome: Some(tool_result::Outcome::Failure(Failure {
                message: format!(
                    "{} did not answer: its address is refused by this deployment's address policy: {refusal}",
                    provider.provider
                ),
            })),
            summary: "search provider refused by the address policy".into(),
            ..ToolResult::default()
        };
    }
    let arguments = String::from_utf8_lossy(&wire.arguments_json);
    let called = call(fetcher.http(), settings, &arguments).await;
    ToolResult {
        outcome: Some(called.outcome),
        summary: called.summary,
        ..ToolResult::default()
    }
}
