//! The PDF route of `web::fetch` (§3.4): the browser worker hands back a
//! PDF it fetched, and the daemon has the PDF worker read it (workers never
//! call each other). The text comes back page by page, each under a marker
//! giving its number, and is windowed and searched as a page is. A read
//! stopped short says how far it got and why; one stopped before its first
//! page, a scan, or a PDF the parser cannot read is a refusal the model
//! reads, naming what happened.

use std::fmt::Write as _;
use std::time::{Duration, SystemTime};

use collegium_proto::pdf::v1::{FailureKind, Stop};
use collegium_proto::toolset::v1::Document;
use collegium_web_page::{Reading, render_view, status_line, view};
use serde_json::Value;

use super::pdf::{PdfEvent, PdfWorker};

/// The characters of text a PDF's read stops at, keeping whole pages: a
/// fetch's window reads on through them, and no page's text is held
/// past this (§3.4, "the ceiling a page's markdown has").
pub const PDF_TEXT_CEILING: u64 = 2_000_000;

/// A PDF read as the model reads it: the text (`Ok`, with the content it
/// read, for §3.8) or the refusal standing in its place (`Err`).
pub struct PdfText {
    pub text: String,
    pub content: String,
}

/// Reads `document` with `worker`, the call's arguments choosing the window
/// or the find, within `within`.
pub async fn read(
    worker: Option<&PdfWorker>,
    document: &Document,
    arguments: &Value,
    within: Duration,
    call_id: &str,
) -> Result<PdfText, String> {
    let head = head(document);
    let Some(worker) = worker else {
        return Err(format!(
            "{head}\nIt is a PDF, and this deployment's PDF reader is not running, so it was not read."
        ));
    };
    let deadline = SystemTime::now() + within;
    let read = worker
        .read(
            document.content.clone(),
            deadline,
            PDF_TEXT_CEILING,
            call_id,
        )
        .await
        .map_err(|e| format!("{head}\n{e}"))?;
    let events = read
        .collect()
        .await
        .map_err(|e| format!("{head}\nThe PDF reader failed the read: {e}"))?;
    let mut pages = String::new();
    let mut ending = None;
    for event in events {
        match event {
            PdfEvent::Page { number, text } => {
                let _ = write!(pages, "--- page {number} ---\n{}\n\n", text.trim_end());
            }
            PdfEvent::End {
                pages_read,
                total_pages,
                stopped,
            } => ending = Some(how_far(pages_read, total_pages, stopped)),
            PdfEvent::Failure {
                kind,
                limit,
                message,
                total_pages,
            } => {
                return Err(format!(
                    "{head}\n{}",
                    failure(kind, limit, &message, total_pages)
                ));
            }
        }
    }
    let pages = pages.trim_end().to_string();
    let reading = Reading {
        whole_page: false,
        offset: arguments.get("offset").and_then(Value::as_u64).map(|o| {
            // An offset past any text there is reads as past the end.
            usize::try_from(o).unwrap_or(usize::MAX)
        }),
        find: arguments
            .get("find")
            .and_then(Value::as_array)
            .map(|phrases| {
                phrases
                    .iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let mut text = head;
    if let Some(ending) = ending {
        let _ = write!(text, "\n{ending}");
    }
    text.push('\n');
    render_view(&view(&pages, &reading), &mut text);
    Ok(PdfText {
        text,
        content: pages,
    })
}

/// The first lines of a PDF's result, as a page's say where it came from.
fn head(document: &Document) -> String {
    let status = u16::try_from(document.status).unwrap_or(0);
    let mut head = format!("{} answered {}.", document.url, status_line(status));
    for note in &document.notes {
        let _ = write!(head, "\n{note}");
    }
    head
}

fn how_far(pages_read: u32, total: Option<u32>, stopped: Stop) -> String {
    let of = total.map(|t| format!(" of {t}")).unwrap_or_default();
    let pages = |n: u32| if n == 1 { "page" } else { "pages" };
    match stopped {
        Stop::Complete => format!(
            "It is a PDF, read as its text layer: all {pages_read} {}, each under a marker giving its number.",
            pages(pages_read)
        ),
        Stop::TextCeiling => format!(
            "It is a PDF, read as its text layer: the first {pages_read} {}{of}, each under a marker giving its number. The read stopped there because the next page would take the text past {PDF_TEXT_CEILING} characters, as much as a result reads; the pages after it were not read.",
            pages(pages_read)
        ),
        Stop::Deadline => format!(
            "It is a PDF, read as its text layer: the first {pages_read} {}{of}, each under a marker giving its number. The read stopped there at the call's deadline; the pages after it were not read, and may carry text.",
            pages(pages_read)
        ),
        Stop::MemoryCap => format!(
            "It is a PDF, read as its text layer: the first {pages_read} {}{of}, each under a marker giving its number. The read stopped there when the reader reached its memory cap; the pages after it were not read, and may carry text.",
            pages(pages_read)
        ),
        Stop::ParserFailed | Stop::Unspecified => format!(
            "It is a PDF, read as its text layer: the first {pages_read} {}{of}, each under a marker giving its number. The parser failed on the page after them; the pages after it were not read.",
            pages(pages_read)
        ),
    }
}

fn failure(kind: FailureKind, limit: Option<Stop>, message: &str, total: Option<u32>) -> String {
    let of = total.map(|t| format!(" of {t} pages")).unwrap_or_default();
    match kind {
        FailureKind::Scan => format!(
            "It is a PDF{of} with no text layer: a scan. Nothing here reads text from an image, so it cannot be read."
        ),
        FailureKind::LimitBeforeText => {
            let which = match limit {
                Some(Stop::Deadline) => "the call's deadline passed",
                Some(Stop::MemoryCap) => "the reader reached its memory cap",
                Some(Stop::TextCeiling) => "its first page alone is longer than a result reads",
                _ => "a limit was reached",
            };
            format!(
                "It is a PDF{of}, and its reading stopped before its first page: {which}. This is not a scan: the pages not reached may carry text."
            )
        }
        FailureKind::Unparseable => {
            format!("It is a PDF{of} the parser cannot read: {message}")
        }
        FailureKind::TooLarge => format!("It is a PDF that was not read: {message}"),
        FailureKind::Busy => "It is a PDF, and the PDF reader was busy with others until the call's deadline, so it was not read. Asking again may read it.".to_string(),
        FailureKind::Unspecified => format!("It is a PDF that was not read: {message}"),
    }
}
