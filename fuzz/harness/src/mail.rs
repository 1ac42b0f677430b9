//! Mail as it arrives (§3.13, §4.2): the MIME reader of `worker-mail`
//! (message.rs) and its HTML-to-text, the thread splitter of `mail-thread`
//! on both the text and the HTML body, and the announcement the daemon
//! composes of the arrival (triggers/announce.rs). Properties: the split
//! loses and reorders no line (the property `mail-thread/tests/property.rs`
//! states for generated bodies, here for any); the announcement of a mail
//! mentions no one but its agent, and pages no channel, whatever the mail
//! holds.

use collegium_control::store::{Trigger, TriggerSource, TriggerStatus};
use collegium_control::triggers::announce::compose;
use collegium_mail_thread::{Headers, blockquote, split_html, split_text};
use collegium_worker_mail::{html, message};
use mattermost_wire::mentions::scan;
use serde_json::json;

use crate::split;

/// The agent the announcement is for.
pub const AGENT: &str = "mira";

/// A line read without its quoting or edge spaces; blank lines carry no text.
fn text_of(line: &str) -> Option<&str> {
    let text = line
        .trim_start_matches(|c: char| c == '>' || c.is_whitespace())
        .trim_end();
    (!text.is_empty()).then_some(text)
}

fn no_line_lost(body: &str) {
    let thread = split_text(body);
    let mut parts = vec![thread.newest.clone()];
    for quoted in &thread.quoted {
        parts.push(quoted.boundary_text.clone());
        parts.push(quoted.body.clone());
    }
    let out: Vec<&str> = parts
        .iter()
        .flat_map(|p| p.lines())
        .filter_map(text_of)
        .collect();
    let given: Vec<&str> = body.lines().filter_map(text_of).collect();
    assert_eq!(out, given, "the split lost or reordered a line");
}

/// An announcement mentions its agent and no one else (§4.5).
pub fn mentions_only_the_agent(text: &str) {
    let found = scan(text, &|_| true);
    assert!(
        found.channel_wide.is_empty(),
        "the announcement pages the channel: {text:?}"
    );
    for mention in &found.mentions {
        assert_eq!(
            mention.username, AGENT,
            "the announcement mentions someone else: {text:?}"
        );
    }
}

pub fn trigger(source: TriggerSource, sender: &str, subject: &str, reference: &str) -> Trigger {
    Trigger {
        id: 7,
        source,
        agent: AGENT.into(),
        channel_id: "c".into(),
        sender: sender.into(),
        subject: subject.into(),
        reference: reference.into(),
        body: None,
        detail: json!({}),
        status: TriggerStatus::Pending,
        recorded_at: 0,
        announcement_post_id: None,
        announcements: 0,
    }
}

pub fn run(data: &[u8]) {
    let (flags, raw) = split::selector(data);
    let read = message::read(raw, flags & 1 == 0);
    no_line_lost(&read.text);
    let thread = split_text(&read.text);
    let headers = Headers {
        from: read.from.clone(),
        date: read.date.clone(),
        subject: read.subject.clone(),
    };
    let _ = blockquote(&headers, &thread);
    if let Some(markup) = &read.html {
        let _ = html::to_text(markup);
        let _ = blockquote(&headers, &split_html(markup));
    }

    let mut mail = trigger(
        TriggerSource::Mail,
        &read.from,
        &read.subject,
        &read.message_id,
    );
    mail.body = Some(read.text.clone());
    mail.detail = json!({
        "from": read.from,
        "to": read.to,
        "date": read.date,
        "subject": read.subject,
        "html": read.html,
        "attachments": read.attachments.iter().map(|a| json!({
            "name": a.name,
            "content_type": a.content_type,
            "size_bytes": a.size,
        })).collect::<Vec<_>>(),
        "problems": read.problems,
    });
    // The older servers' 4,000 too, so the attached-file form is met as often.
    let limit = if flags & 2 == 0 { 16_383 } else { 4_000 };
    let announced = compose(&mail, AGENT, limit);
    mentions_only_the_agent(&announced.message);
    if let Some(file) = &announced.attachment {
        mentions_only_the_agent(&file.text);
    }
}
