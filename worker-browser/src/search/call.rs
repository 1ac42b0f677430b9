//! One web::search call from its wire form to its outcome: the agent's web
//! settings and the model's arguments in, the result the daemon records out.

use collegium_proto::toolset::v1::{Failure, InvalidArguments, tool_result};

use collegium_web_scope::Scope;

use super::arguments::SearchArguments;
use super::render;
use super::settings::SearchSettings;

/// The outcome of one call and its line for the status post (§8.1).
pub struct Called {
    pub outcome: tool_result::Outcome,
    pub summary: String,
}

/// Runs one call: `settings` is the call's `settings_json` parsed, and
/// `arguments_json` the model's arguments as sent. `client` is built with
/// [`collegium_web_scope::client_builder`] from the same `scope`, which
/// judges every name it resolves and every redirect; the provider's URL is
/// judged here first, since a literal address never reaches a resolver.
pub async fn call_in_scope(
    client: &reqwest::Client,
    scope: &Scope,
    settings: &serde_json::Value,
    arguments_json: &str,
) -> Called {
    call_judged(client, Some(scope), settings, arguments_json).await
}

/// [`call_in_scope`] without judging the provider's URL: for a client that
/// carries no address policy (tests against a simulator on loopback).
pub async fn call(
    client: &reqwest::Client,
    settings: &serde_json::Value,
    arguments_json: &str,
) -> Called {
    call_judged(client, None, settings, arguments_json).await
}

async fn call_judged(
    client: &reqwest::Client,
    scope: Option<&Scope>,
    settings: &serde_json::Value,
    arguments_json: &str,
) -> Called {
    let settings = match SearchSettings::from_settings_json(settings) {
        Ok(Some(settings)) => settings,
        // The daemon offers the tool only to an agent whose settings name a
        // provider (§3.4), so this is a daemon and worker out of step.
        Ok(None) => {
            return Called {
                outcome: tool_result::Outcome::Failure(Failure {
                    message: "this agent's web settings name no search provider, so web::search is not offered to it".into(),
                }),
                summary: "no provider".into(),
            };
        }
        Err(error) => {
            return Called {
                outcome: error.outcome(),
                summary: "settings refused".into(),
            };
        }
    };
    let arguments = match SearchArguments::parse(arguments_json) {
        Ok(arguments) => arguments,
        Err(error) => {
            return Called {
                outcome: tool_result::Outcome::InvalidArguments(InvalidArguments {
                    message: error.to_string(),
                }),
                summary: "arguments refused".into(),
            };
        }
    };
    let result = match scope {
        Some(scope) => {
            super::search_in_scope(
                client,
                scope,
                &settings,
                &arguments.query,
                arguments.count(),
            )
            .await
        }
        None => super::search(client, &settings, &arguments.query, arguments.count()).await,
    };
    Called {
        outcome: render::outcome(settings.provider, &arguments.query, &result),
        summary: render::summary(&arguments.query, &result),
    }
}
