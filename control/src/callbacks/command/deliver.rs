//! How an ephemeral subcommand's answer reaches the invoker (§8.3, §6.2):
//! in the command's own ephemeral answer while it fits the server's post
//! limit, read from Mattermost at the moment of answering; over it, as a
//! file. Mattermost cannot attach a file to an ephemeral answer, so the
//! file goes in a direct message from the system bot to the invoker —
//! visible to no one else — and the ephemeral answer points there. Nothing
//! is cut (docs/spec-findings.md records the deviation).

use axum::Json;
use serde_json::Value;
use tracing::warn;

use super::{CommandRequest, ephemeral};
use crate::chat::directory::framework_post;
use crate::services::Services;

/// Every subcommand's answer passes here (the route's `dispatch`): an
/// ephemeral text over the limit goes as a file, named for the command
/// typed; any other answer is returned as it is.
pub(super) async fn fit(
    services: &Services,
    request: &CommandRequest,
    answer: Json<Value>,
) -> Json<Value> {
    let ephemeral_text = match (answer.0.get("response_type"), answer.0.get("text")) {
        (Some(Value::String(kind)), Some(Value::String(text))) if kind == "ephemeral" => {
            text.clone()
        }
        _ => return answer,
    };
    self::answer(services, request, &file_name(&request.text), ephemeral_text).await
}

/// `collegium-trace-PostId` for `/collegium trace PostId`: the words typed,
/// kept to letters, digits and dashes so any client saves it as named.
fn file_name(typed: &str) -> String {
    let words: Vec<String> = typed
        .split_whitespace()
        .map(|w| {
            w.chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
                .take(40)
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .take(4)
        .collect();
    std::iter::once("collegium".to_string())
        .chain(words)
        .collect::<Vec<_>>()
        .join("-")
}

/// Answers `request` with `text`, as a file where it is over the limit.
/// `name` names the file, without its extension.
async fn answer(
    services: &Services,
    request: &CommandRequest,
    name: &str,
    text: String,
) -> Json<Value> {
    let limit = services.post_limit.read_now().await;
    let length = text.chars().count();
    if length <= limit {
        return ephemeral(&text);
    }
    match as_file(services, request, name, &text, length, limit).await {
        Ok(()) => ephemeral(&format!(
            "The answer is {length} characters, over this server's post limit of {limit}, so @{} sent it to you whole as the file `{name}.md` in your direct message with it.",
            services.system_bot.username
        )),
        Err(error) => {
            warn!(%error, "could not deliver an over-limit answer as a file");
            ephemeral(&format!(
                "The answer is {length} characters, over this server's post limit of {limit}, and could not be sent as a file ({error}). Nothing was shown rather than a part of it; try the command again."
            ))
        }
    }
}

/// Uploads the answer to the system bot's direct message with the invoker
/// and posts it there.
async fn as_file(
    services: &Services,
    request: &CommandRequest,
    name: &str,
    text: &str,
    length: usize,
    limit: usize,
) -> Result<(), String> {
    let bot = &services.system_bot;
    let direct = bot
        .rest
        .direct_channel(&bot.user_id, &request.user_id)
        .await
        .map_err(|e| format!("the direct message could not be opened: {e}"))?;
    let file = bot
        .rest
        .upload_file(&direct.id, &format!("{name}.md"), text.as_bytes())
        .await
        .map_err(|e| format!("the file could not be uploaded: {e}"))?;
    let command = request
        .text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut post = framework_post(
        direct.id,
        format!(
            "The answer to your `/collegium {command}` is attached: {length} characters, over this server's post limit of {limit}. It is visible only to you."
        ),
        "notice",
        None,
    );
    post.file_ids = vec![file.id];
    bot.rest
        .create_post(&post)
        .await
        .map_err(|e| format!("the direct message could not be posted: {e}"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn s8_4_the_file_is_named_for_the_command_typed() {
        assert_eq!(file_name("trace abc123"), "collegium-trace-abc123");
        assert_eq!(
            file_name("trace https://chat.example/team/pl/abc123"),
            "collegium-trace-httpschatexampleteamplabc123"
        );
        assert_eq!(file_name("usage ../../etc"), "collegium-usage-etc");
        assert_eq!(file_name(""), "collegium");
    }
}
