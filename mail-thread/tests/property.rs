//! The split never drops or reorders text (§3.13: an unknown client degrades to one segment
//! rather than to dropped text). Two properties over generated bodies:
//! - lines none of which could open a boundary all stay, in order, in the newest part;
//! - for any body, the parts' lines and their boundaries' lines, read without their `>`
//!   quoting, are the input's lines, in order.

use collegium_mail_thread::split_text;
use proptest::prelude::*;

/// Whether a line could open a boundary under some rule; the first property keeps only lines
/// that cannot. Deliberately wider than the rules themselves.
fn could_open_boundary(line: &str) -> bool {
    let header_key = line.split_once(':').is_some_and(|(key, _)| {
        matches!(
            key.trim_matches('*')
                .trim_end()
                .to_ascii_lowercase()
                .as_str(),
            "from"
                | "sent"
                | "date"
                | "to"
                | "cc"
                | "bcc"
                | "subject"
                | "reply-to"
                | "importance"
                | "attachments"
        )
    });
    line.starts_with('>')
        || line.starts_with("On ")
        || line.starts_with('-')
        || line.starts_with("__")
        || line.starts_with("Begin forwarded message:")
        || header_key
}

/// Ordinary lines and near misses: boundaries indented, mid-sentence, or in other words.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-zA-Z0-9 ,.:;!?<>@/()éüßЖ€_*-]{0,40}",
        1 => Just(String::new()),
        1 => prop::sample::select(vec![
            " On Tue, 3 Mar 2026 at 10:00, Ana <ana@x.test> wrote:".to_string(),
            "\tFrom: Ana <ana@x.test>".to_string(),
            " > not quoted, indented".to_string(),
            "Ana wrote:".to_string(),
            "Le mar. 3 mars 2026 à 10:00, Ana a écrit :".to_string(),
            "  -----Original Message-----".to_string(),
            "From the harbour office, with thanks".to_string(),
            "-- ".to_string(),
            "```".to_string(),
            "Subjects: three".to_string(),
            "wrote:".to_string(),
        ]),
    ]
}

/// Lines of every kind: ordinary ones and the pieces of each rule's boundary.
fn any_line() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => line(),
        2 => line().prop_map(|l| format!("> {l}")),
        1 => line().prop_map(|l| format!(">> {l}")),
        1 => prop::sample::select(vec![
            "On Tue, 3 Mar 2026 at 10:00, Ana <ana@x.test> wrote:".to_string(),
            "On 3 Mar 2026, at 10:00, Ana <ana@x.test> wrote:".to_string(),
            "On 03/03/2026 10:00, Ana wrote:".to_string(),
            "On Tue, 3 Mar 2026 at 10:00, Ana Lima".to_string(),
            "> On 03/03/2026 10:00, Bo wrote:".to_string(),
            "-----Original Message-----".to_string(),
            "---------- Forwarded message ---------".to_string(),
            "-------- Forwarded Message --------".to_string(),
            "Begin forwarded message:".to_string(),
            "________________________________".to_string(),
            "From: Ana <ana@x.test>".to_string(),
            "> From: Ana <ana@x.test>".to_string(),
            "Sent: Tuesday, March 3, 2026 10:00 AM".to_string(),
            "Date: Tue, 3 Mar 2026 10:00".to_string(),
            "To: Bo <bo@x.test>".to_string(),
            "Subject: Budget".to_string(),
            "> Subject: Budget".to_string(),
            "    continued".to_string(),
            "wrote:".to_string(),
            String::new(),
        ]),
    ]
}

fn body(lines: &[String], crlf: bool) -> String {
    lines.join(if crlf { "\r\n" } else { "\n" })
}

/// A line read without its quoting or edge spaces; blank lines carry no text.
fn text_of(line: &str) -> Option<&str> {
    let text = line
        .trim_start_matches(|c: char| c == '>' || c.is_whitespace())
        .trim_end();
    (!text.is_empty()).then_some(text)
}

proptest! {
    #[test]
    fn s3_13_lines_that_open_no_boundary_all_stay_in_the_newest_part(
        lines in prop::collection::vec(
            line().prop_filter("could open a boundary", |l| !could_open_boundary(l)),
            0..40,
        ),
        crlf in any::<bool>(),
    ) {
        let thread = split_text(&body(&lines, crlf));
        prop_assert!(thread.quoted.is_empty(), "split at {:?}", thread.quoted);
        // Every line, blank ones too, as given; only the line ending becomes LF.
        let given = body(&lines, crlf);
        prop_assert_eq!(thread.newest, given.lines().collect::<Vec<_>>().join("\n"));
    }

    #[test]
    fn s3_13_no_line_is_lost_or_reordered_across_the_parts(
        lines in prop::collection::vec(any_line(), 0..60),
        crlf in any::<bool>(),
    ) {
        let thread = split_text(&body(&lines, crlf));
        let mut parts = vec![thread.newest.clone()];
        for quoted in &thread.quoted {
            parts.push(quoted.boundary_text.clone());
            parts.push(quoted.body.clone());
        }
        let out: Vec<&str> = parts.iter().flat_map(|p| p.lines()).filter_map(text_of).collect();
        let given: Vec<&str> = lines.iter().filter_map(|l| text_of(l)).collect();
        prop_assert_eq!(out, given);
    }
}
