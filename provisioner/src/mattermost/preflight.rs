//! Refuse before creating anything (§3.1): a server whose settings forbid bot
//! accounts, personal access tokens, or Mattermost's calls to the callback
//! address would leave a half-provisioned deployment. Each forbidding setting
//! is named with where an administrator changes it.

use collegium_control::chat::Rest;
use collegium_control::config::Config;
use mattermost_wire::untrusted;
use serde_json::Value;

use super::ProvisionError;

/// Every reason the server cannot host this deployment as configured.
pub async fn refusals(admin: &Rest, config: &Config) -> Result<Vec<String>, ProvisionError> {
    let settings = admin.config().await?;
    let service = &settings["ServiceSettings"];
    let mut refusals = Vec::new();
    if service["EnableBotAccountCreation"] != Value::Bool(true) {
        refusals.push(
            "bot accounts are disabled (ServiceSettings.EnableBotAccountCreation; System Console › Integrations › Bot Accounts › Enable Bot Account Creation)".to_string(),
        );
    }
    if service["EnableUserAccessTokens"] != Value::Bool(true) {
        refusals.push(
            "personal access tokens are disabled (ServiceSettings.EnableUserAccessTokens; System Console › Integrations › Integration Management › Enable Personal Access Tokens)".to_string(),
        );
    }
    let allowlist = service["AllowedUntrustedInternalConnections"]
        .as_str()
        .unwrap_or_default();
    if let Some(refusal) = callback_refusal(&config.callbacks.public_url, allowlist).await {
        refusals.push(refusal);
    }
    Ok(refusals)
}

/// Why Mattermost would refuse to call the daemon at `public_url`, if it would.
async fn callback_refusal(public_url: &str, allowlist: &str) -> Option<String> {
    let url = url::Url::parse(public_url).ok()?;
    let host = url
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url.port_or_known_default().unwrap_or(80);
    let addresses: Vec<std::net::IpAddr> =
        match tokio::net::lookup_host((host.as_str(), port)).await {
            Ok(found) => found.map(|a| a.ip()).collect(),
            Err(error) => {
                return Some(format!(
                    "the callback address {public_url} does not resolve here ({error})"
                ));
            }
        };
    let refused: Vec<String> = addresses
        .iter()
        .filter(|ip| !untrusted::may_connect(allowlist, &host, **ip))
        .map(ToString::to_string)
        .collect();
    (!refused.is_empty()).then(|| {
        format!(
            "Mattermost may not call the callback address {public_url}: it resolves to the internal address {} and ServiceSettings.AllowedUntrustedInternalConnections does not allow it (System Console › Environment › Developer › Allow untrusted internal connections to; add the host name or a CIDR such as {})",
            refused.join(", "),
            suggestion(&refused[0])
        )
    })
}

fn suggestion(ip: &str) -> String {
    if ip.contains(':') {
        format!("{ip}/128")
    } else {
        format!("{ip}/32")
    }
}
