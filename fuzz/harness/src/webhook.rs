//! The webhook body (§4.2, §6.4; control/src/callbacks/trigger.rs) and the
//! announcement the daemon composes of it (triggers/announce.rs). Any body
//! is an item or a refusal naming what is wrong; an item's required fields
//! are never blank, and the item written back as JSON reads as the same
//! item. Its announcement mentions only its agent and pages no channel,
//! whatever the sender wrote (§4.5), and holds the item whole: inline, or
//! in the file the post names (never cut, A4).

use collegium_control::callbacks::trigger::parse;
use collegium_control::store::TriggerSource;
use collegium_control::triggers::announce::compose;
use serde_json::json;

use crate::mail::{AGENT, mentions_only_the_agent, trigger};
use crate::split;

pub fn run(data: &[u8]) {
    let (flags, body) = split::selector(data);
    let item = match parse(body) {
        Ok(item) => item,
        Err(reason) => {
            assert!(!reason.is_empty(), "refused without a reason");
            return;
        }
    };
    for required in [&item.agent, &item.channel, &item.sender, &item.subject] {
        assert!(!required.trim().is_empty(), "a required field is blank");
    }
    let written = json!({
        "agent": item.agent, "channel": item.channel, "sender": item.sender,
        "subject": item.subject, "reference": item.reference, "body": item.body,
    })
    .to_string();
    let again = parse(written.as_bytes()).expect("an item written back reads");
    assert_eq!(
        (
            &again.agent,
            &again.channel,
            &again.sender,
            &again.subject,
            &again.reference,
            &again.body
        ),
        (
            &item.agent,
            &item.channel,
            &item.sender,
            &item.subject,
            &item.reference,
            &item.body
        ),
    );

    let mut hook = trigger(
        TriggerSource::Webhook,
        &item.sender,
        &item.subject,
        &item.reference,
    );
    hook.body = Some(item.body.clone());
    let limit = if flags & 1 == 0 { 16_383 } else { 4_000 };
    let announced = compose(&hook, AGENT, limit);
    assert!(
        announced.message.chars().count() <= limit,
        "the announcement is longer than a post holds"
    );
    mentions_only_the_agent(&announced.message);
    if let Some(file) = &announced.attachment {
        mentions_only_the_agent(&file.text);
    }
    // Never cut: each line of the body is in the post or in its file.
    let holder = announced
        .attachment
        .as_ref()
        .map_or(announced.message.as_str(), |f| f.text.as_str());
    assert!(
        item.body.lines().count() <= holder.lines().count(),
        "the item lost lines"
    );
}
