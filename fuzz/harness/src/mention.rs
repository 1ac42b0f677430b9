//! The mention grammar and stripping (§4.5, mattermost-wire/src/mentions.rs):
//! a scan never panics and every span it reports is the `@handle` it names
//! in the text; a text with the agents' mentions stripped (as the context
//! window and quoting do, context/window) mentions none of them, whatever
//! the text and whatever the agents' display names hold.

use std::collections::BTreeMap;

use collegium_control::context::window::strip_mentions_of_agents;
use mattermost_wire::mentions::{scan, scan_post};

use crate::split;

/// The agents the text may name, with display names chosen to be hostile:
/// one that is itself a mention, one that spells another agent's handle.
fn agents() -> BTreeMap<String, String> {
    [
        ("mira", "Mira"),
        ("ops-bot", "@mira"),
        ("ana.lyst", "ana @ops-bot"),
        ("x_1", "＠x_1 &amp;"),
    ]
    .into_iter()
    .map(|(u, d)| (u.to_string(), d.to_string()))
    .collect()
}

pub fn run(data: &[u8]) {
    let parts = split::parts(data, 2);
    let text = split::text(parts[0]);
    let attachment = split::text(parts[1]);
    let agents = agents();
    let is_agent = |name: &str| agents.contains_key(name);

    let found = scan(&text, &is_agent);
    for mention in &found.mentions {
        assert!(is_agent(&mention.username), "{mention:?} is no keyword");
        if let Some(span) = &mention.span {
            let Some(spelled) = text.get(span.clone()) else {
                panic!("{mention:?}: the span is not a slice of the text");
            };
            assert!(
                spelled.starts_with('@'),
                "{mention:?}: the span {spelled:?} is not an @handle"
            );
        }
    }
    let _ = scan_post(&text, &[&attachment], &|_| true);

    let stripped = strip_mentions_of_agents(&text, &agents);
    let left = scan(&stripped, &is_agent);
    assert!(
        left.mentions.is_empty(),
        "stripped text {stripped:?} still mentions {:?}",
        left.usernames()
    );
}
