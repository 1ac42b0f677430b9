//! What a read returns, and the framework's words for each ending (§3.4):
//! pages as they are read, then one end saying how far and why, or one
//! typed failure a model reads.

use collegium_proto::pdf::v1 as wire;

/// Why a read that returned pages stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Complete,
    TextCeiling,
    Deadline,
    MemoryCap,
    ParserFailed,
}

impl Stop {
    pub fn to_wire(self) -> wire::Stop {
        match self {
            Self::Complete => wire::Stop::Complete,
            Self::TextCeiling => wire::Stop::TextCeiling,
            Self::Deadline => wire::Stop::Deadline,
            Self::MemoryCap => wire::Stop::MemoryCap,
            Self::ParserFailed => wire::Stop::ParserFailed,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::TextCeiling => "text ceiling",
            Self::Deadline => "deadline",
            Self::MemoryCap => "memory cap",
            Self::ParserFailed => "parser failed",
        }
    }
}

/// A read that returned no text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// Every page read, none with text.
    Scan {
        total: u32,
    },
    /// A limit stopped the read before any page with text.
    LimitBeforeText {
        limit: Stop,
        pages_read: u32,
        total: Option<u32>,
        /// The numbers the message quotes: the ceiling in characters, the
        /// cap in bytes.
        bound: u64,
    },
    Unparseable {
        detail: String,
    },
    TooLarge {
        bytes: u64,
        cap: u64,
    },
    Busy {
        slots: u32,
    },
}

const MIB: u64 = 1024 * 1024;

impl Failure {
    pub fn kind(&self) -> wire::FailureKind {
        match self {
            Self::Scan { .. } => wire::FailureKind::Scan,
            Self::LimitBeforeText { .. } => wire::FailureKind::LimitBeforeText,
            Self::Unparseable { .. } => wire::FailureKind::Unparseable,
            Self::TooLarge { .. } => wire::FailureKind::TooLarge,
            Self::Busy { .. } => wire::FailureKind::Busy,
        }
    }

    /// The failure in the framework's words, naming what stopped the read
    /// and what, if anything, may help.
    pub fn message(&self) -> String {
        match self {
            Self::Scan { total } => format!(
                "This PDF has no text layer: none of its {total} pages holds any text, so it is a scan (images of pages). Nothing here reads text from an image."
            ),
            Self::LimitBeforeText {
                limit,
                pages_read,
                bound,
                ..
            } => {
                let why = match limit {
                    Stop::Deadline => "its deadline passed".to_string(),
                    Stop::MemoryCap => format!(
                        "parsing it took more than the memory cap of {} MiB a PDF may use",
                        bound / MIB
                    ),
                    Stop::TextCeiling => format!(
                        "its first page with text holds more than the ceiling of {bound} characters a result can hold, and pages are only ever returned whole"
                    ),
                    Stop::Complete | Stop::ParserFailed => "it stopped".to_string(),
                };
                let read = match pages_read {
                    0 => "before its first page was read".to_string(),
                    n => format!("after {n} pages without text"),
                };
                format!(
                    "The PDF was not read: {why}, {read}. It is not known to be a scan: pages not reached may carry text."
                )
            }
            Self::Unparseable { detail } => {
                format!("The PDF could not be parsed, so none of its text was read: {detail}.")
            }
            Self::TooLarge { bytes, cap } => format!(
                "The PDF is {bytes} bytes, over the {} MiB a PDF may be; it was not read, since a PDF cut short does not parse.",
                cap / MIB
            ),
            Self::Busy { slots } => format!(
                "The PDF was not read: all {slots} PDF reading slots stayed busy until this read's deadline passed. Asking again may read it."
            ),
        }
    }

    pub fn to_wire(&self) -> wire::Failure {
        let (limit, pages_read, total_pages) = match self {
            Self::LimitBeforeText {
                limit,
                pages_read,
                total,
                ..
            } => (limit.to_wire(), *pages_read, *total),
            Self::Scan { total } => (wire::Stop::Unspecified, *total, Some(*total)),
            _ => (wire::Stop::Unspecified, 0, None),
        };
        wire::Failure {
            kind: self.kind() as i32,
            limit: limit as i32,
            message: self.message(),
            total_pages,
            pages_read,
        }
    }
}

/// One event of a read, in order: pages, then one end or one failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    Page {
        number: u32,
        text: String,
    },
    End {
        pages_read: u32,
        total: Option<u32>,
        stopped: Stop,
    },
    Failure(Failure),
}

impl Event {
    pub fn to_wire(&self) -> wire::PdfTextEvent {
        use wire::pdf_text_event::Event as E;
        let event = match self {
            Self::Page { number, text } => E::Page(wire::Page {
                number: *number,
                text: text.clone(),
            }),
            Self::End {
                pages_read,
                total,
                stopped,
            } => E::End(wire::End {
                pages_read: *pages_read,
                total_pages: *total,
                stopped: stopped.to_wire() as i32,
            }),
            Self::Failure(failure) => E::Failure(failure.to_wire()),
        };
        wire::PdfTextEvent { event: Some(event) }
    }
}
