//! `web::search` (§3.4): queries the search provider the agent's web
//! settings fix — the Brave Search API or a self-hosted SearXNG — and returns
//! ranked summaries (title, URL, snippet), never the pages themselves.
//! Throttling is a result the model reads; refused credentials or an
//! unanswering provider end the turn.
//!
//! The caller builds the `reqwest::Client`: the search request goes through
//! the same address policy as any fetch (§3.4), so a SearXNG on the
//! deployment's own network needs the own-network declaration.

mod arguments;
mod brave;
mod call;
mod error;
mod exchange;
mod hit;
mod markup;
mod render;
mod searxng;
mod settings;

pub use arguments::{ArgumentsError, DEFAULT_COUNT, MAX_COUNT, SearchArguments};
pub use call::{Called, call, call_in_scope};
pub use error::SearchError;
pub use exchange::BODY_LIMIT;
pub use hit::{Hit, SNIPPET_LIMIT};
pub use render::{outcome, render, summary};
pub use settings::{
    ApiKey, BRAVE_DEFAULT_ENDPOINT, DEFAULT_TIMEOUT, Provider, SearchSettings, SettingsError,
};

/// Asks the provider for `query` and returns at most `count` hits (clamped
/// to 1..=[`MAX_COUNT`]) in the provider's ranking.
pub async fn search(
    client: &reqwest::Client,
    settings: &SearchSettings,
    query: &str,
    count: u8,
) -> Result<Vec<Hit>, SearchError> {
    let count = count.clamp(1, MAX_COUNT);
    match settings.provider {
        Provider::Brave => {
            let answer =
                exchange::send(settings, brave::request(client, settings, query, count)).await?;
            brave::read(&answer, usize::from(count))
        }
        Provider::Searxng => {
            let answer =
                exchange::send(settings, searxng::request(client, settings, query)).await?;
            searxng::read(&answer, settings.key.is_some(), usize::from(count))
        }
    }
}

/// [`search`] with the provider's URL judged by `scope` first: a literal
/// address (`http://10.0.0.5:8888`) never reaches the scoped client's
/// resolver, so it is judged here (§3.4). A SearXNG on the deployment's own
/// network is refused unless the own-network declaration lifts it.
pub async fn search_in_scope(
    client: &reqwest::Client,
    scope: &collegium_web_scope::Scope,
    settings: &SearchSettings,
    query: &str,
    count: u8,
) -> Result<Vec<Hit>, SearchError> {
    scope
        .judge_url(settings.endpoint.as_str())
        .map_err(|refusal| SearchError::OutOfScope {
            provider: settings.provider,
            refusal,
        })?;
    search(client, settings, query, count).await
}
