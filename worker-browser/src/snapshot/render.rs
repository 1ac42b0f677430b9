//! A snapshot as the markdown an action returns (§3.4 Browsing): the form
//! controls and any tab the page opened first, then the page, then the
//! controls past the bound. Hidden controls follow every visible one, under
//! a line saying they must be revealed first, so the bound falls on them
//! first; a drop-down's options are listed once, bounded, beside its ref.

use std::fmt::Write;

use super::{Control, Snapshot, first_difference};

/// How many controls are listed before the page; the rest follow it.
pub const CONTROLS_SHOWN: usize = 40;
/// How many options of one drop-down are listed.
pub const OPTIONS_SHOWN: usize = 20;
/// The characters of a result a reader sees before reading on by reference
/// (§3.8); a page that first differs past it says where.
pub const PAGE_VIEW_CHARS: usize = 8000;

/// What a result says beside the page.
#[derive(Debug, Default)]
pub struct Extras {
    /// Tabs the page opened for itself, closed: their addresses.
    pub closed_tabs: Vec<String>,
    /// The previous snapshot's page text, if the session showed one.
    pub previous_page: Option<String>,
}

pub fn render(snapshot: &Snapshot, extras: &Extras) -> String {
    let mut head = String::new();
    let title = if snapshot.title.trim().is_empty() {
        "(untitled)"
    } else {
        snapshot.title.trim()
    };
    let _ = writeln!(head, "Page: {title}\nAddress: {}", snapshot.url);
    match snapshot.status {
        Some(status) => {
            let _ = writeln!(head, "Status: {status}");
        }
        None => head.push_str("Status: none reported\n"),
    }
    for tab in &extras.closed_tabs {
        let _ = writeln!(
            head,
            "The page opened a tab for itself at {tab}; it was closed, and this session stays on the page above."
        );
    }
    let (visible, hidden): (Vec<&Control>, Vec<&Control>) =
        snapshot.controls.iter().partition(|c| !c.hidden);
    let ordered: Vec<(&Control, bool)> = visible
        .iter()
        .map(|c| (*c, false))
        .chain(hidden.iter().map(|c| (*c, true)))
        .collect();
    let shown = ordered.len().min(CONTROLS_SHOWN);
    let mut controls = String::new();
    if !ordered.is_empty() {
        let _ = writeln!(
            controls,
            "\nControls ({} visible, {} hidden):",
            visible.len(),
            hidden.len()
        );
    }
    list(&mut controls, &ordered[..shown]);
    if shown < ordered.len() {
        let _ = writeln!(
            controls,
            "{} more controls are listed after the page.",
            ordered.len() - shown
        );
    }
    let page_header = "\nThe page:\n";
    let difference = extras
        .previous_page
        .as_deref()
        .and_then(|before| first_difference(before, &snapshot.page));
    let mut note = String::new();
    if let Some(at) = difference {
        // The note's own length moves the offset it gives; two rounds settle
        // the digits.
        for _ in 0..3 {
            let offset = head.chars().count()
                + note.chars().count()
                + controls.chars().count()
                + page_header.chars().count()
                + at;
            if offset < PAGE_VIEW_CHARS {
                note.clear();
                break;
            }
            note = format!(
                "The page first differs from the previous snapshot at character {offset} of this result; what comes before it was shown already.\n"
            );
        }
    }
    let mut out = head;
    out.push_str(&note);
    out.push_str(&controls);
    out.push_str(page_header);
    out.push_str(if snapshot.page.trim().is_empty() {
        "(no visible text)"
    } else {
        &snapshot.page
    });
    out.push('\n');
    if shown < ordered.len() {
        out.push_str("\nMore controls:\n");
        list(&mut out, &ordered[shown..]);
    }
    out
}

/// Lists `controls`, putting the hidden line before the first hidden one.
fn list(out: &mut String, controls: &[(&Control, bool)]) {
    let mut hidden_said = false;
    for (control, hidden) in controls {
        if *hidden && !hidden_said {
            out.push_str(
                "Hidden — these must be revealed before they can be acted on (web::hover the element that opens them):\n",
            );
            hidden_said = true;
        }
        out.push_str(&line(control));
        out.push('\n');
    }
}

fn line(c: &Control) -> String {
    let mut s = format!("- [{}] {}", c.reference, c.kind);
    if !c.label.is_empty() {
        let _ = write!(s, " \"{}\"", c.label);
    }
    if let Some(value) = &c.value {
        let _ = write!(s, " = \"{value}\"");
    }
    match c.checked {
        Some(true) => s.push_str(" (checked)"),
        Some(false) => s.push_str(" (not checked)"),
        None => {}
    }
    if c.disabled {
        s.push_str(" (disabled)");
    }
    if c.hidden {
        s.push_str(" (hidden)");
    }
    if let Some(href) = &c.href {
        let _ = write!(s, " → {href}");
    }
    if let Some(options) = &c.options {
        if let Some(selected) = options.iter().find(|o| o.selected) {
            let _ = write!(s, " = \"{}\"", selected.label);
        }
        let listed: Vec<String> = options
            .iter()
            .take(OPTIONS_SHOWN)
            .map(|o| format!("\"{}\"", o.label))
            .collect();
        let _ = write!(s, "; options: {}", listed.join(", "));
        if options.len() > OPTIONS_SHOWN {
            let _ = write!(
                s,
                " (and {} more; web::select takes any by label or value)",
                options.len() - OPTIONS_SHOWN
            );
        }
    }
    s
}
