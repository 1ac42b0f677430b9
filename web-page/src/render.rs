//! Results and refusals as the text a model reads, in the framework's words (§3.4). A text
//! names web::navigate only where the agent holds it.

use std::fmt::Write as _;

use crate::classify::{Fetched, Page, Refusal, Served, Source};
use crate::extent::Extent;
use crate::find::{FIND_HITS_SHOWN, FIND_PHRASES_MAX, Found};
use crate::held::{Holds, NAVIGATE};
use crate::markdown::NESTING_LIMIT;
use crate::status::status_line;
use crate::view::View;

/// 12345 as "12,345".
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if (s - 1.0).abs() < f64::EPSILON {
        "1 second".to_owned()
    } else if s.fract() == 0.0 {
        format!("{s:.0} seconds")
    } else {
        format!("{s:.1} seconds")
    }
}

/// The first lines of every result: the address that answered, how, and whether it was asked
/// twice.
fn served_lines(served: &Served) -> String {
    let mut out = format!("{} answered {}", served.url, status_line(served.status));
    if served.url != served.requested {
        let _ = write!(out, " (redirected from {})", served.requested);
    }
    out.push('.');
    if let Some(retried) = served.retried {
        let _ = write!(
            out,
            "\nRetried once: the first answer was {}, and it was asked again after {}.",
            status_line(retried.first_status),
            seconds(retried.after)
        );
    }
    out
}

/// The line a 404 or 410 carries (§3.4).
fn no_page_here(status: u16) -> Option<&'static str> {
    matches!(status, 404 | 410).then_some(
        "There is no page at this address. An address you built, rather than read off a page, \
         proves nothing about the page you were after.",
    )
}

fn navigate_step(holds: &dyn Holds, why: &str) -> String {
    if holds.holds(NAVIGATE) {
        format!(" {NAVIGATE} {why}")
    } else {
        String::new()
    }
}

impl Fetched {
    /// The result as the model reads it.
    pub fn render(&self, holds: &dyn Holds) -> String {
        match self {
            Fetched::Page(page) => render_page(page),
            Fetched::Empty { served } => {
                format!(
                    "{}\nThe body is empty: the site served nothing at this address.",
                    served_lines(served)
                )
            }
            Fetched::Status { served } => {
                let mut out = served_lines(served);
                out.push_str("\nIt served nothing readable with it.");
                if let Some(line) = no_page_here(served.status) {
                    let _ = write!(out, "\n{line}");
                }
                out
            }
            Fetched::Pdf { served, bytes } => format!(
                "{}\nIt is a PDF of {} bytes, read by the PDF route.",
                served_lines(served),
                thousands(bytes.len())
            ),
            Fetched::NotRead {
                served,
                content_type,
                bytes,
            } => format!(
                "{}\nIt is {} ({} bytes), which web::fetch does not read: it reads web pages, text \
                 and PDFs.",
                served_lines(served),
                content_type
                    .as_deref()
                    .unwrap_or("binary data of no declared type"),
                thousands(*bytes)
            ),
            Fetched::Refused { served, refusal } => render_refusal(served, refusal, holds),
        }
    }
}

fn quoted_title(title: &Option<String>) -> String {
    match title {
        Some(t) => {
            let t: String = t.chars().take(120).collect();
            format!(", titled \"{t}\"")
        }
        None => String::new(),
    }
}

fn render_refusal(served: &Served, refusal: &Refusal, holds: &dyn Holds) -> String {
    let mut out = served_lines(served);
    out.push('\n');
    match refusal {
        Refusal::NeedsScript {
            scripts,
            asks_for_javascript,
        } => {
            out.push_str("web::fetch refused it: the page yields nothing without JavaScript, ");
            if *asks_for_javascript {
                out.push_str("and says so to a reader that runs none");
            } else {
                let _ = write!(
                    out,
                    "its HTML holding no readable text for its {} script{} to fill in",
                    thousands(*scripts),
                    if *scripts == 1 { "" } else { "s" }
                );
            }
            out.push_str(". web::fetch runs no script.");
            out.push_str(&navigate_step(holds, "renders it in a browser that does."));
        }
        Refusal::StatusRefused { title } => {
            let _ = write!(
                out,
                "web::fetch refused it: the site will not serve this page to a plain request \
                 ({}{}). What it served describes the refusal, not the page.",
                status_line(served.status),
                quoted_title(title)
            );
            out.push_str(&navigate_step(
                holds,
                "opens it in a browser, which a site may serve where it refuses a plain request.",
            ));
        }
        Refusal::CdnRefused { cdn } => {
            let _ = write!(
                out,
                "web::fetch refused it: {cdn}, which stands in front of the site, answered with its \
                 own refusal page rather than the page. What it served describes the refusal, not \
                 the page."
            );
            out.push_str(&navigate_step(
                holds,
                "opens it in a browser, which a site may serve where it refuses a plain request.",
            ));
        }
        Refusal::BotCheck { check, title } => {
            let by = check.by.map(|b| format!(" by {b}")).unwrap_or_default();
            let _ = write!(
                out,
                "web::fetch refused it: a bot check{by} stands in the page's place{}. What was \
                 served is the check, not the page.",
                quoted_title(title)
            );
            out.push_str(&navigate_step(
                holds,
                "opens it in a browser, which such a check may let through.",
            ));
        }
    }
    out
}

fn render_page(page: &Page) -> String {
    let mut out = served_lines(&page.served);
    if let Some(line) = no_page_here(page.served.status) {
        let _ = write!(out, "\n{line}");
    }
    match &page.source {
        Source::Html {
            title,
            extent,
            left_out_chars,
            unread_past_nesting,
        } => {
            if let Some(title) = title {
                let _ = write!(out, "\nTitle: {title}");
            }
            match (extent, left_out_chars) {
                (Extent::WholePage, _) => out.push_str("\nRead: the whole page."),
                (Extent::MainLandmark, 0) => {
                    out.push_str("\nRead: the page's main landmark, which is all of it.")
                }
                (Extent::MainLandmark, n) => {
                    let _ = write!(
                        out,
                        "\nRead: the page's main landmark; {} characters outside it were left out \
                         (wholePage reads them).",
                        thousands(*n)
                    );
                }
                (Extent::LessNavigation, 0) => out
                    .push_str("\nRead: the whole page (it marks no navigation, banner or footer)."),
                (Extent::LessNavigation, n) => {
                    let _ = write!(
                        out,
                        "\nRead: the page less its navigation, banner and footer, which held {} \
                         characters (wholePage reads them).",
                        thousands(*n)
                    );
                }
            }
            if let Some(unread) = unread_past_nesting {
                let _ = write!(
                    out,
                    "\nThe page nests its elements more than {NESTING_LIMIT} deep; its last {} \
                     bytes of HTML, from there on, were not read.",
                    thousands(*unread)
                );
            }
            if page.text.is_empty() {
                out.push_str("\nIt holds no readable text.");
                return out;
            }
        }
        Source::Text { content_type } => {
            let _ = write!(out, "\nIt is {content_type}, returned as served.");
            if page.text.is_empty() {
                return out;
            }
        }
    }
    out.push('\n');
    render_view(&page.view, &mut out);
    out
}

/// A window or a find, as a result shows it: the daemon renders a PDF's text with it too.
pub fn render_view(view: &View, out: &mut String) {
    match view {
        View::Window {
            offset,
            end,
            total,
            text,
        } => {
            if *offset >= *total {
                let _ = write!(
                    out,
                    "Offset {} is past the end: the text has {} characters.",
                    thousands(*offset),
                    thousands(*total)
                );
                return;
            }
            let whole = *offset == 0 && *end == *total;
            if whole {
                let _ = write!(out, "All {} characters:\n\n{text}", thousands(*total));
                return;
            }
            let _ = write!(
                out,
                "Characters {}–{} of {}:\n\n{text}",
                thousands(*offset),
                thousands(*end),
                thousands(*total)
            );
            if end < total {
                let _ = write!(
                    out,
                    "\n\n[{} more characters follow; read on from offset {end}.]",
                    thousands(total - end)
                );
            } else {
                out.push_str("\n\n[End of the text.]");
            }
        }
        View::Found {
            found,
            offset_ignored,
        } => render_found(found, *offset_ignored, out),
    }
}

fn render_found(found: &Found, offset_ignored: Option<usize>, out: &mut String) {
    let _ = write!(
        out,
        "Find searched all {} characters read",
        thousands(found.total)
    );
    if let Some(offset) = offset_ignored {
        let _ = write!(
            out,
            "; a find searches the whole text, so offset {offset} was not used"
        );
    }
    out.push('.');
    for hits in &found.phrases {
        let _ = write!(out, "\n\"{}\": ", hits.phrase);
        match hits.offsets.len() {
            0 => out.push_str("not found."),
            n => {
                let shown: Vec<String> = hits
                    .offsets
                    .iter()
                    .take(FIND_HITS_SHOWN)
                    .map(|o| thousands(*o))
                    .collect();
                let _ = write!(
                    out,
                    "{} place{}, at {}",
                    thousands(n),
                    if n == 1 { "" } else { "s" },
                    shown.join(", ")
                );
                if let Some(next) = hits.offsets.get(FIND_HITS_SHOWN) {
                    let _ = write!(
                        out,
                        "; {} more not shown, the next at {} (a longer phrase narrows them)",
                        thousands(hits.not_shown()),
                        thousands(*next)
                    );
                }
                out.push('.');
            }
        }
    }
    if !found.not_searched.is_empty() {
        let names: Vec<String> = found
            .not_searched
            .iter()
            .map(|p| format!("\"{p}\""))
            .collect();
        let _ = write!(
            out,
            "\nNot searched, since a find takes at most {FIND_PHRASES_MAX} phrases: {}.",
            names.join(", ")
        );
    }
    if let Some(whole) = &found.whole {
        let _ = write!(
            out,
            "\nThe places found would take more text than the page holds, so here is the whole \
             of it:\n\n{whole}"
        );
        return;
    }
    for span in &found.spans {
        let _ = write!(
            out,
            "\n\n--- characters {}–{} (a window from offset {} reads on from here) ---\n{}",
            thousands(span.start),
            thousands(span.end),
            span.start,
            span.text
        );
    }
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
