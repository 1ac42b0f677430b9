//! Hits as the model reads them: a numbered list in the provider's ranking,
//! each with its title, URL and snippet; no hits said plainly (§3.4).

use collegium_proto::toolset::v1::{Success, tool_result};

use super::error::SearchError;
use super::hit::Hit;
use super::settings::Provider;

pub fn render(provider: Provider, query: &str, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("{provider} found no results for \"{query}\".");
    }
    let noun = if hits.len() == 1 { "result" } else { "results" };
    let mut text = format!(
        "{provider}: {} {noun} for \"{query}\", best first.\n",
        hits.len()
    );
    for (rank, hit) in hits.iter().enumerate() {
        text.push_str(&format!("\n{}. {}\n   {}\n", rank + 1, hit.title, hit.url));
        if !hit.snippet.is_empty() {
            text.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    text
}

/// One line for the status post (§8.1).
pub fn summary(query: &str, result: &Result<Vec<Hit>, SearchError>) -> String {
    let subject = format!("\"{}\"", super::markup::bounded(query, 60));
    match result {
        Ok(hits) if hits.len() == 1 => format!("{subject}: 1 result"),
        Ok(hits) => format!("{subject}: {} results", hits.len()),
        Err(error) => format!("{subject}: {}", error.summary()),
    }
}

/// The call's outcome: the rendered hits, or the error's refusal or
/// failure ([`SearchError::outcome`]).
pub fn outcome(
    provider: Provider,
    query: &str,
    result: &Result<Vec<Hit>, SearchError>,
) -> tool_result::Outcome {
    match result {
        Ok(hits) => tool_result::Outcome::Success(Success {
            text: render(provider, query, hits),
            // Later turns see the search, not its hits; they can search
            // again (§3.8).
            replay_line: Some(format!(
                "[searched {provider} for \"{}\": {} {}]",
                super::markup::bounded(query, 100),
                hits.len(),
                if hits.len() == 1 { "result" } else { "results" }
            )),
            ..Success::default()
        }),
        Err(error) => error.outcome(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_are_numbered_in_rank_with_title_url_and_snippet() {
        let hits = vec![
            Hit::new("First", "https://a.example/", "The best match."),
            Hit::new("", "https://b.example/", ""),
        ];
        assert_eq!(
            render(Provider::Brave, "q", &hits),
            "Brave Search: 2 results for \"q\", best first.\n\
             \n1. First\n   https://a.example/\n   The best match.\n\
             \n2. https://b.example/\n   https://b.example/\n"
        );
    }

    #[test]
    fn no_hits_are_said_plainly() {
        assert_eq!(
            render(Provider::Searxng, "zzz", &[]),
            "SearXNG found no results for \"zzz\"."
        );
        assert_eq!(summary("zzz", &Ok(Vec::new())), "\"zzz\": 0 results");
    }
}
