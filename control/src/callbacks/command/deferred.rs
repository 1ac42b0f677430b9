//! One answer within Mattermost's patience (§8.4): Mattermost waits only its
//! outgoing-request timeout (30 s by default) for a command's answer, and a
//! person who sees "command failed" cannot tell whether it ran. So every
//! subcommand runs under a deadline (`limits.command_answer_ms`); one not
//! done by then answers at once that it is working, keeps running, and
//! delivers its answer through the command's `response_url` (contract
//! §D.3) — ephemeral or in the channel exactly as it would have answered.
//! The route wraps every subcommand in this, so none has its own timer.

use std::future::Future;
use std::time::Duration;

use axum::Json;
use serde_json::Value;
use tracing::warn;

use super::ephemeral;

/// What the invoker reads at once when the answer will follow.
pub const WORKING: &str = "Working on it: the answer will follow here as soon as it is ready.";

/// Where the deferred answer goes: the hook Mattermost named, rebuilt on
/// the Mattermost base URL the daemon is configured with, so a forged or
/// rewritten `response_url` can send the daemon nowhere else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseUrl(String);

impl ResponseUrl {
    /// The hook behind `response_url` (`<SiteURL>/hooks/commands/<26-char
    /// id>`), on `mattermost_base`; `None` for anything else.
    pub fn parse(response_url: &str, mattermost_base: &str) -> Option<Self> {
        let (_, id) = response_url.rsplit_once("/hooks/commands/")?;
        let valid = id.len() == 26 && id.bytes().all(|b| b.is_ascii_alphanumeric());
        valid.then(|| {
            Self(format!(
                "{}/hooks/commands/{id}",
                mattermost_base.trim_end_matches('/')
            ))
        })
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Runs `answer` for at most `deadline`; past it, answers [`WORKING`] and
/// sends the finished answer to `response_url` when it comes. Without a
/// usable `response_url` the route waits for the answer, as it must.
pub async fn within<F>(
    deadline: Duration,
    response_url: Option<ResponseUrl>,
    answer: F,
) -> Json<Value>
where
    F: Future<Output = Json<Value>> + Send + 'static,
{
    let mut task = tokio::spawn(answer);
    let Some(url) = response_url else {
        return finished(task.await);
    };
    match tokio::time::timeout(deadline, &mut task).await {
        Ok(done) => finished(done),
        Err(_) => {
            tokio::spawn(async move {
                let Json(body) = finished(task.await);
                deliver(&url, &body).await;
            });
            ephemeral(WORKING)
        }
    }
}

fn finished(done: Result<Json<Value>, tokio::task::JoinError>) -> Json<Value> {
    done.unwrap_or_else(|error| {
        warn!(%error, "a subcommand failed");
        ephemeral("The command failed before it could answer; nothing more is known. Try again.")
    })
}

/// Posts the answer to its hook. An answer with nothing to say (a posting
/// subcommand whose notice is its answer) sends nothing.
async fn deliver(url: &ResponseUrl, body: &Value) {
    if body.as_object().is_some_and(serde_json::Map::is_empty) {
        return;
    }
    // Mattermost's hook answers at once; a hung one is not waited on forever.
    let sent = reqwest::Client::new()
        .post(url.as_str())
        .timeout(Duration::from_secs(30))
        .json(body)
        .send()
        .await;
    match sent {
        Ok(response) if response.status().is_success() => {}
        Ok(response) => {
            warn!(status = %response.status(), "the command's response_url refused the answer")
        }
        Err(error) => warn!(%error, "the command's response_url could not be reached"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s8_4_a_response_url_is_only_a_hook_on_the_configured_server() {
        let id = "abcdefghijklmnopqrstuvwxyz";
        assert_eq!(
            ResponseUrl::parse(
                &format!("https://public.example/hooks/commands/{id}"),
                "http://127.0.0.1:8065/"
            )
            .map(|u| u.as_str().to_string()),
            Some(format!("http://127.0.0.1:8065/hooks/commands/{id}"))
        );
        assert_eq!(
            ResponseUrl::parse("https://x/hooks/commands/short", "http://m"),
            None
        );
        assert_eq!(
            ResponseUrl::parse(&format!("https://x/other/{id}"), "http://m"),
            None
        );
        assert_eq!(ResponseUrl::parse("", "http://m"), None);
    }

    #[tokio::test]
    async fn s8_4_an_answer_within_the_deadline_is_the_answer() {
        let url = ResponseUrl::parse(
            "http://127.0.0.1:1/hooks/commands/abcdefghijklmnopqrstuvwxyz",
            "http://127.0.0.1:1",
        );
        let Json(answer) = within(Duration::from_secs(5), url, async { ephemeral("quick") }).await;
        assert_eq!(answer["text"], "quick");
        let Json(answer) = within(Duration::from_millis(10), None, async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            ephemeral("slow, but no hook to finish through")
        })
        .await;
        assert_eq!(answer["text"], "slow, but no hook to finish through");
    }
}
