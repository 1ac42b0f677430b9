//! A fetched response, judged: the page read, or the typed result that stands in its place
//! (§3.4, web::fetch).

use url::Url;

use crate::extent::Extent;
use crate::markdown::{PageText, read_html};
use crate::media::{self, BodyKind, ContentType};
use crate::retry::Retried;
use crate::signs::{self, BotCheck};
use crate::view::{Reading, View, view};

/// A page asking for JavaScript and holding fewer letters and digits than this in what was
/// read is an application shell: the notice is the page.
const SCRIPT_SHELL_READABLE_MAX: usize = 200;

/// The response as the HTTP client got it, after its redirects.
#[derive(Debug, Clone, Copy)]
pub struct Response<'a> {
    pub requested: &'a Url,
    pub final_url: &'a Url,
    pub status: u16,
    pub content_type: Option<&'a str>,
    /// The headers the signs read (`server`, `cf-ray`, `cf-mitigated`, `x-amzn-waf-action`,
    /// `x-served-by` …); passing all of them is fine.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
    pub retried: Option<Retried>,
}

/// Where a result came from: what every result says first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    pub requested: Url,
    pub url: Url,
    pub status: u16,
    pub retried: Option<Retried>,
}

/// What was read of a page or a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Html {
        title: Option<String>,
        extent: Extent,
        left_out_chars: usize,
        /// Bytes of HTML past the nesting bound, not read.
        unread_past_nesting: Option<usize>,
    },
    /// Textual non-HTML, returned as served.
    Text { content_type: String },
}

/// A page or text read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub served: Served,
    pub source: Source,
    /// Everything read: the result's content, whatever part of it the view shows.
    pub text: String,
    pub view: View,
}

/// Why a fetch is refused in favour of a browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The page yields nothing without JavaScript.
    NeedsScript {
        scripts: usize,
        asks_for_javascript: bool,
    },
    /// A 401, 403 or 429 over HTML, whatever it says.
    StatusRefused { title: Option<String> },
    /// A 503 on a CDN's own refusal page.
    CdnRefused { cdn: &'static str },
    /// A bot check in the page's place, at any status.
    BotCheck {
        check: BotCheck,
        title: Option<String>,
    },
}

/// What a fetch came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    Page(Page),
    /// A success with an empty body.
    Empty {
        served: Served,
    },
    /// An error status over nothing readable.
    Status {
        served: Served,
    },
    /// A PDF, for the PDF route to read.
    Pdf {
        served: Served,
        bytes: Vec<u8>,
    },
    /// A type nothing here reads.
    NotRead {
        served: Served,
        content_type: Option<String>,
        bytes: usize,
    },
    Refused {
        served: Served,
        refusal: Refusal,
    },
}

impl Fetched {
    pub fn served(&self) -> &Served {
        match self {
            Fetched::Page(page) => &page.served,
            Fetched::Empty { served }
            | Fetched::Status { served }
            | Fetched::Pdf { served, .. }
            | Fetched::NotRead { served, .. }
            | Fetched::Refused { served, .. } => served,
        }
    }
}

fn success(status: u16) -> bool {
    (200..300).contains(&status)
}

pub fn classify(response: &Response<'_>, reading: &Reading) -> Fetched {
    let served = Served {
        requested: response.requested.clone(),
        url: response.final_url.clone(),
        status: response.status,
        retried: response.retried,
    };
    let content_type = response.content_type.and_then(ContentType::parse);
    let body = response.body;
    if body.iter().all(u8::is_ascii_whitespace) {
        return if success(response.status) {
            Fetched::Empty { served }
        } else {
            Fetched::Status { served }
        };
    }
    match media::kind(content_type.as_ref(), body) {
        BodyKind::Pdf => Fetched::Pdf {
            served,
            bytes: body.to_vec(),
        },
        BodyKind::Binary => Fetched::NotRead {
            served,
            content_type: content_type.map(|c| c.essence),
            bytes: body.len(),
        },
        BodyKind::Text => {
            let text = media::decode(body, content_type.as_ref(), false);
            let view = view(&text, reading);
            let content_type = content_type.map_or_else(|| "text/plain".to_owned(), |c| c.essence);
            Fetched::Page(Page {
                served,
                source: Source::Text { content_type },
                text,
                view,
            })
        }
        BodyKind::Html => {
            let html = media::decode(body, content_type.as_ref(), true);
            let page = read_html(&html, response.final_url, reading.whole_page);
            html_outcome(served, &html, page, response.headers, reading)
        }
    }
}

fn html_outcome(
    served: Served,
    html: &str,
    page: PageText,
    headers: &[(&str, &str)],
    reading: &Reading,
) -> Fetched {
    let lower = signs::scanned(html);
    let status = served.status;
    if let Some(check) =
        signs::bot_check(&lower, page.title.as_deref(), headers, page.readable_chars)
    {
        let refusal = Refusal::BotCheck {
            check,
            title: page.title,
        };
        return Fetched::Refused { served, refusal };
    }
    if matches!(status, 401 | 403 | 429) {
        return Fetched::Refused {
            served,
            refusal: Refusal::StatusRefused { title: page.title },
        };
    }
    if status == 503
        && let Some(cdn) = signs::cdn_refusal_page(&lower, headers)
    {
        return Fetched::Refused {
            served,
            refusal: Refusal::CdnRefused { cdn },
        };
    }
    let read_readable = page.read_readable_chars;
    if !success(status) && page.readable_chars == 0 {
        return Fetched::Status { served };
    }
    let shell = (page.scripts > 0 && read_readable == 0)
        || (page.asks_for_javascript && read_readable < SCRIPT_SHELL_READABLE_MAX);
    if success(status) && shell {
        let refusal = Refusal::NeedsScript {
            scripts: page.scripts,
            asks_for_javascript: page.asks_for_javascript,
        };
        return Fetched::Refused { served, refusal };
    }
    let view = view(&page.markdown, reading);
    let source = Source::Html {
        title: page.title,
        extent: page.extent,
        left_out_chars: page.left_out_chars,
        unread_past_nesting: page.unread_past_nesting,
    };
    Fetched::Page(Page {
        served,
        source,
        text: page.markdown,
        view,
    })
}
