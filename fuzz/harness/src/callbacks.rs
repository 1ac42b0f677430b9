//! What Mattermost calls back (§6.4, control/src/callbacks): the command
//! form, a button click and a dialog submission, decoded as the routes
//! decode them; the typed subcommand looked up as the route looks it up;
//! the command's `response_url` rebuilt as the deferred answer rebuilds it;
//! the click's signature checked as the decision route checks it.
//! Properties: a deferred answer only ever goes to a command hook on the
//! configured Mattermost base, whatever `response_url` says; a signature
//! made for one button never verifies for another (the "Deny with reason"
//! a client saw cannot be replayed as "Approve").

use collegium_control::approvals::sign;
use collegium_control::callbacks::fuzzing::{Click, CommandRequest, ResponseUrl};
use collegium_control::commands;
use mattermost_wire::model::SubmitDialogRequest;
use serde_json::Value;

use crate::split;

const BASE: &str = "https://chat.example.org/";
const KEY: &str = "the-command-token";

fn command(form: &[u8]) {
    let _ = serde_urlencoded::from_bytes::<CommandRequest>(form);
    let Ok(fields) = serde_urlencoded::from_bytes::<Vec<(String, String)>>(form) else {
        return;
    };
    for (name, value) in &fields {
        match name.as_str() {
            "text" => {
                let mut words = value.split_whitespace();
                let typed = words.next().unwrap_or_default().to_lowercase();
                if let Some(sub) = commands::parse(&typed) {
                    assert!(sub.name.eq_ignore_ascii_case(&typed));
                    let _ = sub.usage();
                }
            }
            "response_url" => {
                if let Some(hook) = ResponseUrl::parse(value, BASE) {
                    let id = hook
                        .as_str()
                        .strip_prefix("https://chat.example.org/hooks/commands/")
                        .unwrap_or_else(|| {
                            panic!("{value:?} sends the answer to {}", hook.as_str())
                        });
                    assert!(
                        id.len() == 26 && id.bytes().all(|b| b.is_ascii_alphanumeric()),
                        "{value:?} names the hook {id:?}"
                    );
                }
            }
            _ => {}
        }
    }
}

fn click(body: &[u8]) {
    let _ = serde_json::from_slice::<Click>(body);
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let context = &value["context"];
    let text = |key: &str| context[key].as_str().unwrap_or_default().to_string();
    let (approval, action, signature) = (text("approval"), text("action"), text("signature"));
    let choice = context["choice"]
        .as_u64()
        .and_then(|c| usize::try_from(c).ok());
    let subject = sign::button(&approval, &action, choice);
    if sign::verify(KEY, &subject, &signature) && signature.bytes().all(|b| b.is_ascii_hexdigit()) {
        assert_eq!(signature.to_ascii_lowercase(), sign::sign(KEY, &subject));
    }
    // The signature of this button, offered for every other button.
    let made = sign::sign(KEY, &subject);
    assert!(sign::verify(KEY, &subject, &made));
    let separator = '\u{1f}';
    if !approval.contains(separator) && !action.contains(separator) {
        for other in ["approve", "deny", "reason", "choose", "write"] {
            if other != action {
                let replayed = sign::button(&approval, other, choice);
                assert!(
                    !sign::verify(KEY, &replayed, &made),
                    "{action:?}'s signature verifies as {other:?}"
                );
            }
        }
        let other_choice = Some(choice.map_or(0, |c| c.wrapping_add(1)));
        assert!(!sign::verify(
            KEY,
            &sign::button(&approval, &action, other_choice),
            &made
        ));
    }
}

fn dialog(body: &[u8]) {
    if let Ok(submission) = serde_json::from_slice::<SubmitDialogRequest>(body) {
        let _ = submission.submission.get("reason").and_then(Value::as_str);
    }
}

pub fn run(data: &[u8]) {
    let parts = split::parts(data, 3);
    command(parts[0]);
    click(parts[1]);
    dialog(parts[2]);
    // Each body also as the others, since a route cannot choose its bodies.
    click(parts[0]);
    command(parts[1]);
}
