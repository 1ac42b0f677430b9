//! Names Mattermost and the host accept.

/// A Mattermost username or channel/team name: 1–64 characters of lowercase
/// letters, digits, `.`, `-` and `_`, starting with a letter (Mattermost's own
/// rule for usernames, applied to handles generally).
pub fn is_handle(name: &str, max: usize) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase())
        && name.len() <= max
        && chars
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-' | '_'))
}

/// Mattermost's username length limit.
pub const USERNAME_MAX: usize = 22;
/// Mattermost's channel and team name length limit.
pub const CHANNEL_NAME_MAX: usize = 64;

/// Whether `url` is an absolute http(s) URL.
pub fn is_http_url(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host())
}
