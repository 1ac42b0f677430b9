//! "On <date>, <sender> wrote:" — the attribution Gmail, Apple Mail and Thunderbird write
//! above a `>` quote, on one line or wrapped over two (§3.13). Its date and sender are kept
//! as written.

use std::sync::LazyLock;

use regex::Regex;

use crate::Boundary;

/// What an attribution line carried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attribution {
    pub boundary: Boundary,
    pub date: String,
    pub sender: String,
}

const TIME: &str = r"\d{1,2}[:.]\d{2}(?::\d{2})?(?:\s?[AaPp]\.?[Mm]\.?)?";

// Apple Mail: "3 Mar 2026, at 10:00, Ana <ana@x.test>".
static APPLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(?<date>.+?, at {TIME}),\s+(?<sender>.+)$"))
        .expect("a fixed pattern compiles")
});
// Gmail: "Tue, 3 Mar 2026 at 10:00, Ana <ana@x.test>" or, in the US layout,
// "Tue, Mar 3, 2026 at 10:00 AM Ana <ana@x.test>" with no comma before the sender.
static GMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^(?<date>.+? at {TIME}),?\s+(?<sender>.+)$"))
        .expect("a fixed pattern compiles")
});
// Thunderbird: "03/03/2026 10:00, Ana" (the date numeric, the time optional).
static THUNDERBIRD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^(?<date>\d{{1,4}}[/.-]\d{{1,2}}[/.-]\d{{1,4}}(?:,?\s+{TIME})?),\s+(?<sender>.+)$"
    ))
    .expect("a fixed pattern compiles")
});

/// Reads an attribution's text (its lines joined by a space), or `None` if it is not one.
pub(crate) fn parse(text: &str) -> Option<Attribution> {
    let middle = text
        .trim_end()
        .strip_prefix("On ")?
        .strip_suffix("wrote:")?
        .trim_end();
    for (pattern, boundary) in [
        (&*APPLE, Boundary::AppleMail),
        (&*THUNDERBIRD, Boundary::Thunderbird),
        (&*GMAIL, Boundary::GmailOnWrote),
    ] {
        if let Some(found) = pattern.captures(middle) {
            return Some(Attribution {
                boundary,
                date: found["date"].to_string(),
                sender: found["sender"].trim().to_string(),
            });
        }
    }
    // "On Tuesday, Ana wrote:": no client's date layout, but the shape is an attribution;
    // the sender is what follows the last comma.
    let (date, sender) = middle.rsplit_once(", ")?;
    (!date.trim().is_empty() && !sender.trim().is_empty()).then(|| Attribution {
        boundary: Boundary::OnWrote,
        date: date.trim().to_string(),
        sender: sender.trim().to_string(),
    })
}

/// Whether a line can open an attribution: it alone, or it and the next, form one.
pub(crate) fn opens(line: &str) -> bool {
    line.starts_with("On ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> (Boundary, String, String) {
        let a = parse(text).expect("an attribution");
        (a.boundary, a.date, a.sender)
    }

    #[test]
    fn s3_13_each_client_s_layout_names_its_rule_date_and_sender() {
        assert_eq!(
            read("On Tue, 3 Mar 2026 at 10:00, Ana <ana@x.test> wrote:"),
            (
                Boundary::GmailOnWrote,
                "Tue, 3 Mar 2026 at 10:00".into(),
                "Ana <ana@x.test>".into()
            )
        );
        assert_eq!(
            read("On Tue, Mar 3, 2026 at 10:00 AM Ana Lima <ana@x.test> wrote:"),
            (
                Boundary::GmailOnWrote,
                "Tue, Mar 3, 2026 at 10:00 AM".into(),
                "Ana Lima <ana@x.test>".into()
            )
        );
        assert_eq!(
            read("On 3 Mar 2026, at 10:00, Ana <ana@x.test> wrote:"),
            (
                Boundary::AppleMail,
                "3 Mar 2026, at 10:00".into(),
                "Ana <ana@x.test>".into()
            )
        );
        assert_eq!(
            read("On 03/03/2026 10:00, Ana wrote:"),
            (
                Boundary::Thunderbird,
                "03/03/2026 10:00".into(),
                "Ana".into()
            )
        );
        assert_eq!(
            read("On Tuesday, Ana wrote:"),
            (Boundary::OnWrote, "Tuesday".into(), "Ana".into())
        );
    }

    #[test]
    fn s3_13_a_sentence_without_the_shape_is_not_an_attribution() {
        assert_eq!(parse("On reflection I think Ana wrote:"), None);
        assert_eq!(parse("Ana wrote: yes"), None);
        assert_eq!(parse("On Tue, 3 Mar 2026 at 10:00, Ana said:"), None);
    }
}
