//! Signs that an HTML body is a refusal standing in the page's place: a bot check at any
//! status, or a CDN's own refusal page (§3.4).

/// A body whose readable text is under this many letters and digits is small enough that a
/// check's wording in it is the page, not a line on it.
const CHECK_PAGE_READABLE_MAX: usize = 600;

/// How much of a body the signs look at. A check's or a CDN's page is small (the known ones
/// are well under 64 KiB); a megabyte of page is content, and scanning it all would cost a
/// fetch more than its conversion.
const SCANNED_BYTES: usize = 256 * 1024;

/// The start of the body, ASCII lower-cased: every marker below is ASCII.
pub(crate) fn scanned(html: &str) -> String {
    let mut end = html.len().min(SCANNED_BYTES);
    while !html.is_char_boundary(end) {
        end -= 1;
    }
    html[..end].to_ascii_lowercase()
}

/// Selected response headers, names lower case.
pub type Headers<'a> = [(&'a str, &'a str)];

fn header<'a>(headers: &Headers<'a>, name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
}

/// Who stands in front of the site, as its response headers say.
pub fn gatekeeper(headers: &Headers<'_>) -> Option<&'static str> {
    let server = header(headers, "server")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let has = |name: &str| header(headers, name).is_some();
    if has("cf-ray") || has("cf-mitigated") || server.contains("cloudflare") {
        Some("Cloudflare")
    } else if server.contains("akamai") || has("akamai-grn") || has("x-akamai-transformed") {
        Some("Akamai")
    } else if has("x-fastly-request-id")
        || header(headers, "x-served-by").is_some_and(|v| v.contains("cache-"))
    {
        Some("Fastly")
    } else if has("x-datadome") || has("x-dd-b") {
        Some("DataDome")
    } else if has("x-iinfo")
        || header(headers, "x-cdn")
            .is_some_and(|v| v.contains("Imperva") || v.contains("Incapsula"))
    {
        Some("Imperva")
    } else if has("x-amzn-waf-action") {
        Some("AWS WAF")
    } else if server.contains("cloudfront") || has("x-amz-cf-id") {
        Some("CloudFront")
    } else if has("x-sucuri-id") || server.contains("sucuri") {
        Some("Sucuri")
    } else if server.contains("ddos-guard") {
        Some("DDoS-Guard")
    } else if has("x-vercel-id") || has("x-vercel-mitigated") {
        Some("Vercel")
    } else {
        None
    }
}

/// Markers only a bot check's own page carries, with the service that serves it.
const CHECK_PAGE_MARKERS: &[(&str, &str)] = &[
    ("_cf_chl_opt", "Cloudflare"),
    ("/cdn-cgi/challenge-platform/h/", "Cloudflare"),
    ("cf-browser-verification", "Cloudflare"),
    ("captcha-delivery.com", "DataDome"),
    ("_incapsula_resource", "Imperva"),
    ("px-captcha", "HUMAN (PerimeterX)"),
    ("gokuprops", "AWS WAF"),
    ("sucuri website firewall", "Sucuri"),
    ("vercel security checkpoint", "Vercel"),
];

/// Titles a bot check's page carries.
const CHECK_PAGE_TITLES: &[&str] = &[
    "just a moment...",
    "just a moment…",
    "attention required! | cloudflare",
    "ddos-guard",
    "vercel security checkpoint",
    "security check",
    "human verification",
    "are you a robot?",
    "access to this page has been denied",
    "pardon our interruption",
    "bot verification",
    "verifying your browser",
    "please verify you are a human",
];

/// What a check's page says to its reader. A captcha widget alone is not one: a login form
/// carries the same widget; a page that is short and says one of these is the check.
const CHECK_PHRASES: &[&str] = &[
    "verify you are human",
    "verify that you are human",
    "verifying you are human",
    "are you a robot",
    "not a robot",
    "unusual traffic",
    "checking your browser",
    "checking if the site connection is secure",
    "press & hold",
    "press and hold",
    "enable javascript and cookies to continue",
    "complete the security check",
    "prove you are human",
    "automated access",
    "suspected bot",
];

/// A bot check stands in the page's place: which service's, where one can be named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BotCheck {
    pub by: Option<&'static str>,
}

pub fn bot_check(
    html_lower: &str,
    title: Option<&str>,
    headers: &Headers<'_>,
    readable_chars: usize,
) -> Option<BotCheck> {
    let challenge_header = header(headers, "cf-mitigated")
        .is_some_and(|v| v.eq_ignore_ascii_case("challenge"))
        || header(headers, "x-amzn-waf-action").is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v == "captcha" || v == "challenge"
        })
        || header(headers, "x-vercel-mitigated")
            .is_some_and(|v| v.eq_ignore_ascii_case("challenge"));
    if challenge_header {
        return Some(BotCheck {
            by: gatekeeper(headers),
        });
    }
    if let Some((_, by)) = CHECK_PAGE_MARKERS
        .iter()
        .find(|(m, _)| html_lower.contains(m))
    {
        return Some(BotCheck { by: Some(by) });
    }
    let title = title.map(str::to_lowercase);
    if title
        .as_deref()
        .is_some_and(|t| CHECK_PAGE_TITLES.contains(&t))
    {
        return Some(BotCheck {
            by: gatekeeper(headers),
        });
    }
    if readable_chars < CHECK_PAGE_READABLE_MAX
        && CHECK_PHRASES.iter().any(|m| html_lower.contains(m))
    {
        return Some(BotCheck {
            by: gatekeeper(headers),
        });
    }
    None
}

/// Markers of a CDN's own error or refusal page, as opposed to the site's.
const CDN_PAGE_MARKERS: &[(&str, &str)] = &[
    ("cf-error-details", "Cloudflare"),
    ("cloudflare ray id", "Cloudflare"),
    ("cf-wrapper", "Cloudflare"),
    ("errors.edgesuite.net", "Akamai"),
    ("reference&#32;&#35;", "Akamai"),
    ("generated by cloudfront", "CloudFront"),
    ("guru meditation", "Fastly"),
    ("varnish cache server", "Fastly"),
    ("fastly error", "Fastly"),
    ("incapsula incident id", "Imperva"),
    ("ddos-guard", "DDoS-Guard"),
];

/// The CDN whose refusal page a 503 carries, if it is a CDN's page.
pub fn cdn_refusal_page(html_lower: &str, headers: &Headers<'_>) -> Option<&'static str> {
    CDN_PAGE_MARKERS
        .iter()
        .find(|(m, _)| html_lower.contains(m))
        .map(|(_, cdn)| *cdn)
        .or_else(|| {
            // Akamai's refusal is a bare "Access Denied" page with a reference number.
            (gatekeeper(headers) == Some("Akamai") && html_lower.contains("access denied"))
                .then_some("Akamai")
        })
}
