//! web::fetch's reading of a response (§3.4): HTML as markdown, the page's main content, a
//! bounded window or a find, the typed results that stand in a page's place, and certificate
//! failures in the framework's words. Pure functions, no network: the browser worker fetches,
//! the daemon windows a PDF's text with the same `view`.

pub mod certificates;
mod classify;
mod dom;
mod extent;
mod find;
mod held;
pub mod markdown;
mod media;
mod render;
mod retry;
mod signs;
mod status;
mod view;
mod window;

pub use certificates::{CertificateProblem, DiagnosingVerifier, OtherProblem, Route};
pub use classify::{Fetched, Page, Refusal, Response, Served, Source, classify};
pub use extent::Extent;
pub use find::{
    FIND_CONTEXT_CHARS, FIND_HITS_SHOWN, FIND_PHRASES_MAX, Found, PhraseHits, Span, find,
};
pub use held::{Holds, NAVIGATE};
pub use markdown::{
    NESTING_LIMIT, PageText, SELECT_OPTIONS_SHOWN, decode_cloudflare_email, read_html,
};
pub use media::{BodyKind, ContentType};
pub use render::{render_view, thousands};
pub use retry::{DEFAULT_429_WAIT, RETRY_ANSWER_TIME, Retried, retry_wait};
pub use signs::{BotCheck, bot_check, cdn_refusal_page, gatekeeper};
pub use status::status_line;
pub use view::{Reading, View, view};
pub use window::{WINDOW_CHARS, Window, window};
