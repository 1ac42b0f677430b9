//! What `Debug` prints for a credential a wire model carries: a command's
//! token, a password, a freshly minted access token, the token a WebSocket
//! `authentication_challenge` sends in its `data`. The models keep the
//! plain `String` the JSON has, shared by the daemon and the simulator, but
//! none of them derives `Debug`: each writes its own through [`Withheld`],
//! so a `{:?}` of a request or an answer in a log or an error never holds
//! the secret (docs/ARCHITECTURE.md, "Logs").

use std::fmt;

/// The text printed in a secret's place, the same as the daemon's own
/// redacting type prints.
pub const WITHHELD: &str = "[redacted]";

/// A secret's field in a `Debug`: whether it is set, never what it is.
pub(crate) struct Withheld<'a>(pub(crate) &'a str);

impl fmt::Debug for Withheld<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            // An empty field is no secret, and saying so helps a reader
            // tell "not sent" from "sent".
            f.write_str("\"\"")
        } else {
            f.write_str(WITHHELD)
        }
    }
}

/// A request's `data` with its `token` entry withheld: the WebSocket
/// `authentication_challenge` carries the session token there.
pub(crate) struct TokenWithheld<'a>(pub(crate) &'a super::JsonMap);

impl fmt::Debug for TokenWithheld<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (key, value) in self.0 {
            match value {
                serde_json::Value::String(text) if key == "token" => {
                    map.entry(key, &Withheld(text));
                }
                _ if key == "token" => {
                    map.entry(key, &format_args!("{WITHHELD}"));
                }
                _ => {
                    map.entry(key, value);
                }
            }
        }
        map.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::WITHHELD;
    use crate::model::{Command, LoginRequest, NewUser, UserAccessToken, WebSocketRequest};

    /// Every wire model that carries a credential prints the rest of itself
    /// and never the credential (issue 21 item 6).
    #[test]
    fn a_credential_never_prints_in_a_debug_and_the_other_fields_do() {
        let secret = "xoxb-very-secret-value";
        let printed = [
            format!(
                "{:?}",
                Command {
                    token: secret.into(),
                    trigger: "collegium".into(),
                    ..Command::default()
                }
            ),
            format!(
                "{:?}",
                NewUser {
                    username: "ada".into(),
                    password: secret.into(),
                    ..NewUser::default()
                }
            ),
            format!(
                "{:?}",
                LoginRequest {
                    login_id: "ada".into(),
                    password: secret.into(),
                }
            ),
            format!(
                "{:#?}",
                UserAccessToken {
                    id: "tok1".into(),
                    token: secret.into(),
                    ..UserAccessToken::default()
                }
            ),
            format!(
                "{:?}",
                WebSocketRequest {
                    seq: 1,
                    action: "authentication_challenge".into(),
                    data: serde_json::json!({"token": secret})
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                }
            ),
        ];
        for (text, visible) in printed.iter().zip([
            "collegium",
            "ada",
            "ada",
            "tok1",
            "authentication_challenge",
        ]) {
            assert!(!text.contains(secret), "{text}");
            assert!(text.contains(WITHHELD), "{text}");
            assert!(text.contains(visible), "{text}");
        }
    }

    #[test]
    fn an_empty_credential_prints_as_empty() {
        let answer = UserAccessToken {
            id: "tok1".into(),
            ..UserAccessToken::default()
        };
        let text = format!("{answer:?}");
        assert!(text.contains(r#"token: """#), "{text}");
        assert!(!text.contains(WITHHELD), "{text}");
    }
}
