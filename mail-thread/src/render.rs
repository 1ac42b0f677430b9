//! The thread as one markdown blockquote: the newest message under its real headers, then
//! each quoted message under the sender, date and subject its boundary carried (§3.13).
//! Every part's text is verbatim; only blank lines at a part's edges are left out.

use crate::{Headers, Thread};

pub fn blockquote(newest: &Headers, thread: &Thread) -> String {
    let mut out = String::new();
    line(&mut out, &format!("From: {}", one_line(&newest.from)));
    line(&mut out, &format!("Date: {}", one_line(&newest.date)));
    line(&mut out, &format!("Subject: {}", one_line(&newest.subject)));
    part(&mut out, &thread.newest);
    for quoted in &thread.quoted {
        line(&mut out, "");
        let named: Vec<String> = [&quoted.sender, &quoted.date, &quoted.subject]
            .into_iter()
            .flatten()
            .map(|field| one_line(field))
            .collect();
        if named.is_empty() {
            line(&mut out, "**Quoted message**");
        } else {
            line(
                &mut out,
                &format!("**Quoted message** — {}", named.join(" · ")),
            );
        }
        part(&mut out, &quoted.body);
    }
    out
}

/// A part's lines under a blank line, its edges' blank lines left out.
fn part(out: &mut String, text: &str) {
    let lines: Vec<&str> = text.lines().collect();
    let first = lines.iter().position(|l| !l.trim().is_empty());
    let last = lines.iter().rposition(|l| !l.trim().is_empty());
    if let (Some(first), Some(last)) = (first, last) {
        line(out, "");
        for text in &lines[first..=last] {
            line(out, text);
        }
    }
}

fn line(out: &mut String, text: &str) {
    if text.trim().is_empty() {
        out.push_str(">\n");
    } else {
        out.push_str("> ");
        out.push_str(text);
        out.push('\n');
    }
}

/// A header's value on one line: a folded header would otherwise end the blockquote's line.
fn one_line(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}
