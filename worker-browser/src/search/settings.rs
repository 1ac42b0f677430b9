//! The search provider an agent's web settings name (§3.4): fixed by the
//! operator, never by the model, and absent for an agent not offered the tool.

use std::fmt;
use std::time::Duration;

use reqwest::header::HeaderValue;
use serde::Deserialize;
use url::Url;

// The daemon's own secret reference: the worker reads the one it is handed,
// at the moment it searches, so a key file need be readable only by it.
use collegium_control::config::secret::{Secret, SecretError};

/// Brave's Web Search endpoint, used when the settings give no `base_url`.
pub const BRAVE_DEFAULT_ENDPOINT: &str = "https://api.search.brave.com/res/v1/web/search";

/// How long a provider has to answer before it counts as unanswering (§3.4).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// The Brave Search API (a hosted service; a key is required).
    Brave,
    /// A SearXNG instance's JSON API (self-hosted; a key is optional).
    Searxng,
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Provider::Brave => "Brave Search",
            Provider::Searxng => "SearXNG",
        })
    }
}

/// The provider's key, read from its source; never printed.
#[derive(Clone)]
pub struct ApiKey(collegium_worker_kit::redact::Redacted<String>);

impl ApiKey {
    pub fn expose(&self) -> &str {
        self.0.expose()
    }

    /// The key as a header value, marked sensitive so no client log or
    /// `Debug` shows it; `prefix` is the scheme SearXNG's proxy expects.
    pub fn header(&self, prefix: &str) -> HeaderValue {
        match HeaderValue::from_str(&format!("{prefix}{}", self.0.expose())) {
            Ok(mut value) => {
                value.set_sensitive(true);
                value
            }
            // Unreachable: a key is admitted only as non-empty visible
            // ASCII, which any header value can carry.
            Err(_) => HeaderValue::from_static(""),
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(hidden)")
    }
}

/// Everything a search needs: where to ask, with what key, for how long.
#[derive(Debug, Clone)]
pub struct SearchSettings {
    pub provider: Provider,
    /// The URL the query is sent to: Brave's endpoint itself, or the SearXNG
    /// instance's `/search`.
    pub endpoint: Url,
    pub key: Option<ApiKey>,
    pub timeout: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error("the web settings' `search` is not valid: {0}")]
    Shape(serde_json::Error),
    #[error("the web settings name Brave Search as the search provider but give no `api_key`")]
    KeyRequired,
    #[error(
        "the web settings name SearXNG as the search provider but give no `base_url` (SearXNG is self-hosted, so there is no default)"
    )]
    BaseUrlRequired,
    #[error("the search provider's `base_url` {url:?} is not usable: {reason}")]
    BaseUrl { url: String, reason: String },
    #[error("the search provider's key cannot be read: {0}")]
    Key(#[from] SecretError),
    #[error(
        "the search provider's key holds characters an HTTP header cannot carry (spaces or non-ASCII)"
    )]
    KeyNotHeaderText,
}

/// The `search` object as the daemon's schema admits it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSearch {
    provider: Provider,
    api_key: Option<Secret>,
    base_url: Option<String>,
}

impl SearchSettings {
    /// Reads the search provider from a call's `settings_json` (the agent's
    /// effective web settings) and reads its key. `None` when the settings
    /// name no provider: the daemon does not offer the tool then (§3.4).
    pub fn from_settings_json(
        settings: &serde_json::Value,
    ) -> Result<Option<SearchSettings>, SettingsError> {
        let search = match settings.get("search") {
            None | Some(serde_json::Value::Null) => return Ok(None),
            Some(search) => search,
        };
        let raw: RawSearch =
            serde_json::from_value(search.clone()).map_err(SettingsError::Shape)?;
        let key = match &raw.api_key {
            Some(source) => {
                let key = source.reveal()?;
                if !key.expose().chars().all(|c| c.is_ascii_graphic()) {
                    return Err(SettingsError::KeyNotHeaderText);
                }
                Some(ApiKey(key))
            }
            None => None,
        };
        let endpoint = match raw.provider {
            Provider::Brave => {
                if key.is_none() {
                    return Err(SettingsError::KeyRequired);
                }
                parse_base(raw.base_url.as_deref().unwrap_or(BRAVE_DEFAULT_ENDPOINT))?
            }
            Provider::Searxng => {
                let base = raw
                    .base_url
                    .as_deref()
                    .ok_or(SettingsError::BaseUrlRequired)?;
                searxng_endpoint(parse_base(base)?)
            }
        };
        Ok(Some(SearchSettings {
            provider: raw.provider,
            endpoint,
            key,
            timeout: DEFAULT_TIMEOUT,
        }))
    }
}

fn parse_base(text: &str) -> Result<Url, SettingsError> {
    let refuse = |reason: &str| SettingsError::BaseUrl {
        url: text.to_string(),
        reason: reason.to_string(),
    };
    let url = Url::parse(text).map_err(|e| refuse(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(refuse("only http and https are searched"));
    }
    if url.host().is_none() {
        return Err(refuse("it names no host"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("credentials belong in `api_key`, not in the URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(refuse("it carries a query or fragment"));
    }
    Ok(url)
}

/// SearXNG answers at `/search` beneath wherever the instance is mounted.
fn searxng_endpoint(mut base: Url) -> Url {
    let path = format!("{}/search", base.path().trim_end_matches('/'));
    base.set_path(&path);
    base
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(settings: serde_json::Value) -> Result<Option<SearchSettings>, SettingsError> {
        SearchSettings::from_settings_json(&settings)
    }

    #[test]
    fn no_provider_is_no_search() {
        assert!(read(json!({})).expect("read").is_none());
        assert!(read(json!({"search": null})).expect("read").is_none());
    }

    #[test]
    fn brave_defaults_its_endpoint_and_needs_a_key() {
        let settings = read(json!({"search": {"provider": "brave", "api_key": {"value": "k"}}}))
            .expect("read")
            .expect("a provider");
        assert_eq!(settings.endpoint.as_str(), BRAVE_DEFAULT_ENDPOINT);
        assert_eq!(settings.key.as_ref().map(ApiKey::expose), Some("k"));
        assert!(!format!("{settings:?}").contains("\"k\""));
        assert!(matches!(
            read(json!({"search": {"provider": "brave"}})),
            Err(SettingsError::KeyRequired)
        ));
        assert!(matches!(
            read(json!({"search": {"provider": "brave", "api_key": {"value": "two words"}}})),
            Err(SettingsError::KeyNotHeaderText)
        ));
        let header = settings.key.as_ref().map(|k| k.header("Bearer "));
        assert_eq!(
            header.as_ref().map(|h| h.as_bytes()),
            Some(&b"Bearer k"[..])
        );
        assert!(header.is_some_and(|h| h.is_sensitive()));
    }

    #[test]
    fn searxng_needs_a_base_url_and_searches_beneath_it() {
        assert!(matches!(
            read(json!({"search": {"provider": "searxng"}})),
            Err(SettingsError::BaseUrlRequired)
        ));
        for base in ["http://10.0.0.5:8888", "http://10.0.0.5:8888/"] {
            let settings = read(json!({"search": {"provider": "searxng", "base_url": base}}))
                .expect("read")
                .expect("a provider");
            assert_eq!(settings.endpoint.as_str(), "http://10.0.0.5:8888/search");
            assert!(settings.key.is_none());
        }
        let mounted = read(
            json!({"search": {"provider": "searxng", "base_url": "https://h.example/searx/"}}),
        )
        .expect("read")
        .expect("a provider");
        assert_eq!(mounted.endpoint.as_str(), "https://h.example/searx/search");
    }

    #[test]
    fn unusable_base_urls_and_unknown_providers_are_refused() {
        for base in [
            "file:///etc/passwd",
            "not a url",
            "https://user:pw@h.example/",
            "https://h.example/?q=x",
        ] {
            assert!(
                matches!(
                    read(json!({"search": {"provider": "searxng", "base_url": base}})),
                    Err(SettingsError::BaseUrl { .. })
                ),
                "{base}"
            );
        }
        assert!(matches!(
            read(json!({"search": {"provider": "tavily", "api_key": {"value": "k"}}})),
            Err(SettingsError::Shape(_))
        ));
    }
}
