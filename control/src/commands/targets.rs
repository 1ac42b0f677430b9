//! What a subcommand names (§8.4): an agent by username, with or without
//! `@`; a post by its 26-character id or by a permalink on this server.
//! Another server's permalink is refused rather than read as an id, so a
//! person never acts on a post they did not mean.

/// A Mattermost id: 26 characters of lowercase letters and digits.
pub fn is_post_id(text: &str) -> bool {
    text.len() == 26
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// The post `text` names, given this server's base URL; a refusal the
/// person reads otherwise.
pub fn post_reference(text: &str, server: &str) -> Result<String, String> {
    let text = text.trim().trim_matches(|c| c == '<' || c == '>');
    if is_post_id(text) {
        return Ok(text.to_string());
    }
    let Ok(link) = url::Url::parse(text) else {
        return Err(format!(
            "`{text}` is neither a post id (26 letters and digits) nor a permalink."
        ));
    };
    let ours = url::Url::parse(server).ok();
    let same_server = ours.as_ref().is_some_and(|ours| {
        ours.scheme() == link.scheme()
            && ours.host_str() == link.host_str()
            && ours.port_or_known_default() == link.port_or_known_default()
    });
    if !same_server {
        return Err(format!(
            "`{text}` is a permalink on another server ({}); name a post on this server.",
            link.host_str().unwrap_or("no host")
        ));
    }
    let segments: Vec<&str> = link
        .path_segments()
        .map(Iterator::collect)
        .unwrap_or_default();
    match segments.as_slice() {
        [.., "pl", id] if is_post_id(id) => Ok((*id).to_string()),
        _ => Err(format!(
            "`{text}` is not a permalink to a post (`…/pl/{{post-id}}`)."
        )),
    }
}

/// The agent a word names, as a username: `@mira`, `mira` or `Mira`.
pub fn agent_word(word: &str) -> String {
    word.trim_start_matches('@').to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER: &str = "http://chat.example.org:8065";
    const ID: &str = "abcdefghijklmnopqrstuvwxyz";

    #[test]
    fn s8_4_a_post_is_an_id_or_a_permalink_on_this_server() {
        assert_eq!(post_reference(ID, SERVER), Ok(ID.to_string()));
        assert_eq!(
            post_reference(&format!("{SERVER}/team/pl/{ID}"), SERVER),
            Ok(ID.to_string())
        );
        assert_eq!(
            post_reference(&format!("<{SERVER}/team/pl/{ID}>"), SERVER),
            Ok(ID.to_string())
        );
    }

    #[test]
    fn s8_4_another_servers_permalink_and_junk_are_refused_by_what_they_are() {
        let other = post_reference(
            &format!("http://evil.example.com:8065/team/pl/{ID}"),
            SERVER,
        )
        .expect_err("another host");
        assert!(
            other.contains("another server (evil.example.com)"),
            "{other}"
        );
        let port = post_reference(
            &format!("http://chat.example.org:9999/team/pl/{ID}"),
            SERVER,
        )
        .expect_err("another port");
        assert!(port.contains("another server"), "{port}");
        let short = post_reference("abc", SERVER).expect_err("short");
        assert!(short.contains("neither a post id"), "{short}");
        let page = post_reference(&format!("{SERVER}/team/channels/town-square"), SERVER)
            .expect_err("not a permalink");
        assert!(page.contains("not a permalink"), "{page}");
    }

    #[test]
    fn s8_4_an_agent_is_named_with_or_without_the_at_sign() {
        assert_eq!(agent_word("@Mira"), "mira");
        assert_eq!(agent_word("mira"), "mira");
    }
}
