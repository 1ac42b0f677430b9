//! The mention grammar against Mattermost's mention rules (contract §E.4,
//! indexed in `docs/mattermost-sim.md`) and the cases of
//! Mattermost's own mention-parser tests, restated as data in
//! `tests/data/mention-cases.json`.

use std::collections::BTreeSet;

use mattermost_wire::mentions::{ChannelWide, scan_post};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    name: String,
    text: String,
    members: Vec<String>,
    author: String,
    #[serde(default)]
    attachments: Vec<String>,
    mentions: Vec<String>,
    #[serde(default)]
    potential: Vec<String>,
    #[serde(default)]
    potential_unchecked: bool,
    channel_wide: Option<String>,
}

#[test]
fn every_restated_case_is_decided_as_mattermost_decides_it() {
    // Read at run time: a build cache shared between checkouts may hold a
    // binary compiled elsewhere.
    let root =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    let text = std::fs::read_to_string(format!("{root}/tests/data/mention-cases.json"))
        .expect("the case table");
    let cases: Vec<Case> = serde_json::from_str(&text).expect("valid cases");
    assert!(cases.len() >= 30, "the case table went missing");
    let mut failures = Vec::new();
    for case in &cases {
        let members: BTreeSet<&str> = case.members.iter().map(String::as_str).collect();
        let is_member = |name: &str| members.contains(name);
        let attachments: Vec<&str> = case.attachments.iter().map(String::as_str).collect();
        let found = scan_post(&case.text, &attachments, &is_member);
        // Nobody is online in these cases, so `@here` reaches no one.
        let mentioned: Vec<String> = found
            .recipients(&case.members, &|_| false, &case.author)
            .into_iter()
            .collect();
        let mut expected = case.mentions.clone();
        expected.sort();
        if mentioned != expected {
            failures.push(format!(
                "{}: {:?} mentions {mentioned:?}, expected {expected:?}",
                case.name, case.text
            ));
        }
        if !case.potential_unchecked {
            let mut potential: Vec<String> = found.potential.clone();
            potential.sort();
            potential.dedup();
            let mut expected = case.potential.clone();
            expected.sort();
            expected.dedup();
            if potential != expected {
                failures.push(format!(
                    "{}: {:?} potential {potential:?}, expected {expected:?}",
                    case.name, case.text
                ));
            }
        }
        let wide: Option<&str> = found
            .channel_wide
            .iter()
            .next()
            .map(|w: &ChannelWide| w.as_str());
        if wide != case.channel_wide.as_deref() {
            failures.push(format!(
                "{}: {:?} channel-wide {wide:?}, expected {:?}",
                case.name, case.text, case.channel_wide
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
