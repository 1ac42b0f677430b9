//! web::fetch through the worker's own client, against sites served on
//! loopback (§3.4): the page read, a 429/503 retried once, a redirect out of
//! scope refused, the PDF handed back, certificates told in the framework's
//! words, and, without the own-network declaration, loopback refused with
//! the site never reached.

mod support;

use std::sync::Arc;
use std::time::Duration;

use collegium_proto::toolset::v1::{Call, ToolResult, tool_result::Outcome};
use collegium_web_scope::{Scope, ScopeSettings, own_addresses};
use collegium_worker_browser::call::WebCall;
use collegium_worker_browser::fetch::{Fetcher, Trust};
use collegium_worker_kit::admission::now_ms;
use serde_json::{Value, json};
use support::site::{Answer, Site};

fn fetcher(own_network_browsable: bool, trust: &Trust) -> Fetcher {
    let scope = Scope::new(
        ScopeSettings {
            own_network_browsable,
            closed_hosts: vec!["intranet.test".into()],
        },
        own_addresses().expect("own addresses"),
    )
    .expect("scope");
    Fetcher::new(Arc::new(scope), trust).expect("fetcher")
}

fn call(arguments: Value, held: &[&str], within: Duration) -> WebCall {
    WebCall::read(&Call {
        tool: "fetch".into(),
        arguments_json: arguments.to_string().into_bytes(),
        held_tools: held.iter().map(|t| (*t).to_string()).collect(),
        deadline_unix_ms: now_ms() + u64::try_from(within.as_millis()).expect("millis"),
        ..Call::default()
    })
    .expect("a call")
}

async fn fetch(fetcher: &Fetcher, url: &str, held: &[&str]) -> ToolResult {
    fetcher
        .fetch(&call(json!({"url": url}), held, Duration::from_secs(20)))
        .await
}

/// The outcome's kind and the text the model reads.
fn read(result: &ToolResult) -> (&'static str, String) {
    match result.outcome.as_ref().expect("an outcome") {
        Outcome::Success(s) => ("success", s.text.clone()),
        Outcome::Refusal(r) => ("refusal", r.message.clone()),
        Outcome::InvalidArguments(r) => ("invalid", r.message.clone()),
        Outcome::Unresolved(r) => ("unresolved", r.message.clone()),
        Outcome::Failure(r) => ("failure", r.message.clone()),
    }
}

const ARTICLE: &str = r#"<!doctype html><html><head><title>Quarterly report</title></head>
<body><header><nav><a href="/a">Home</a> <a href="/b">Products</a></nav></header>
<main><h1>Revenue grew</h1><p>Revenue grew by twelve percent in the third quarter.</p>
<img src="/chart.png" alt="A chart of revenue by month"></main>
<footer>Contact: press@example.com, 1 Main Street</footer></body></html>"#;

#[tokio::test]
async fn s3_4_a_page_is_read_as_its_main_content_saying_what_was_left_out() {
    let site = Site::start().await;
    site.script("/report", vec![Answer::html(ARTICLE)]);
    let result = fetch(&fetcher(true, &Trust::default()), &site.url("/report"), &[]).await;
    let (kind, text) = read(&result);
    assert_eq!(kind, "success", "{text}");
    assert!(text.contains("answered 200 OK"), "{text}");
    assert!(text.contains("Revenue grew by twelve percent"), "{text}");
    assert!(text.contains("A chart of revenue by month"), "{text}");
    assert!(
        !text.contains("chart.png"),
        "an image is its alt text alone: {text}"
    );
    assert!(
        !text.contains("Products"),
        "the navigation is left out: {text}"
    );
    assert!(
        text.contains("were left out (wholePage reads them)"),
        "{text}"
    );
    let Some(Outcome::Success(success)) = &result.outcome else {
        unreachable!()
    };
    assert!(
        success
            .content_key
            .as_deref()
            .is_some_and(|k| k.contains("Revenue grew")),
        "an identical re-read is judged by what was read (§3.8)"
    );
    let whole = fetcher(true, &Trust::default())
        .fetch(&call(
            json!({"url": site.url("/report"), "wholePage": true}),
            &[],
            Duration::from_secs(20),
        ))
        .await;
    assert!(
        read(&whole).1.contains("Products"),
        "wholePage reads the rest"
    );
}

#[tokio::test]
async fn s3_4_a_find_returns_where_each_phrase_occurs() {
    let site = Site::start().await;
    let filler = "<p>Nothing to see in this paragraph.</p>".repeat(600);
    site.script(
        "/long",
        vec![Answer::html(&format!(
            "<html><body><main>{filler}<p>The invoice number is INV-4471.</p>{filler}</main></body></html>"
        ))],
    );
    let result = fetcher(true, &Trust::default())
        .fetch(&call(
            json!({"url": site.url("/long"), "find": ["invoice number"]}),
            &[],
            Duration::from_secs(20),
        ))
        .await;
    let (kind, text) = read(&result);
    assert_eq!(kind, "success", "{text}");
    assert!(text.contains("Find searched all"), "{text}");
    assert!(text.contains("INV-4471"), "{text}");
    assert!(
        text.len() < 4000,
        "a find is a small answer: {} bytes",
        text.len()
    );
}

#[tokio::test]
async fn s3_4_a_503_naming_a_wait_is_asked_once_more_and_the_result_says_so() {
    let site = Site::start().await;
    site.script(
        "/busy",
        vec![
            Answer::new("503 Service Unavailable", "text/plain", "busy").header("Retry-After", "2"),
            Answer::html("<html><body><main><p>Here at last.</p></main></body></html>"),
        ],
    );
    let result = fetch(&fetcher(true, &Trust::default()), &site.url("/busy"), &[]).await;
    let (kind, text) = read(&result);
    assert_eq!(kind, "success", "{text}");
    assert!(text.contains("Here at last."), "{text}");
    assert!(
        text.contains("Retried once: the first answer was 503 Service Unavailable, and it was asked again after 2 seconds."),
        "{text}"
    );
    assert_eq!(site.requests().len(), 2);
}

#[tokio::test]
async fn s3_4_a_wait_past_the_timeout_is_not_made_and_a_429_page_names_the_browser_only_when_held()
{
    let site = Site::start().await;
    site.script(
        "/slow-down",
        vec![
            Answer::new(
                "429 Too Many Requests",
                "text/html",
                "<html><head><title>Too many requests</title></head><body><p>Slow down.</p></body></html>",
            )
            .header("Retry-After", "3600"),
        ],
    );
    let fetcher = fetcher(true, &Trust::default());
    let (kind, text) = read(&fetch(&fetcher, &site.url("/slow-down"), &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(!text.contains("Retried"), "{text}");
    assert!(
        !text.contains("web::navigate"),
        "not held, not named: {text}"
    );
    let (_, text) = read(&fetch(&fetcher, &site.url("/slow-down"), &["web::navigate"]).await);
    assert!(text.contains("web::navigate"), "held, named: {text}");
    assert_eq!(site.requests().len(), 2, "one request per fetch, no retry");
}

#[tokio::test]
async fn s3_4_a_404_says_there_is_no_page_and_a_json_error_is_returned_as_served() {
    let site = Site::start().await;
    site.script(
        "/api",
        vec![Answer::new(
            "500 Internal Server Error",
            "application/json",
            r#"{"error":"quota exceeded for key"}"#,
        )],
    );
    let fetcher = fetcher(true, &Trust::default());
    let (kind, text) = read(&fetch(&fetcher, &site.url("/missing"), &[]).await);
    assert_eq!(kind, "success", "{text}");
    assert!(text.contains("There is no page at this address"), "{text}");
    let (_, text) = read(&fetch(&fetcher, &site.url("/api"), &[]).await);
    assert!(text.contains("quota exceeded for key"), "{text}");
    assert!(text.contains("returned as served"), "{text}");
}

#[tokio::test]
async fn s3_4_a_redirect_out_of_scope_is_refused_naming_the_hop() {
    let site = Site::start().await;
    site.script(
        "/to-file",
        vec![Answer::new("302 Found", "text/plain", "").header("Location", "file:///etc/passwd")],
    );
    site.script(
        "/to-closed",
        vec![
            Answer::new("307 Temporary Redirect", "text/plain", "")
                .header("Location", "http://WIKI.Intranet.Test./start"),
        ],
    );
    let fetcher = fetcher(true, &Trust::default());
    let (kind, text) = read(&fetch(&fetcher, &site.url("/to-file"), &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.starts_with("file:"), "{text}");
    let (kind, text) = read(&fetch(&fetcher, &site.url("/to-closed"), &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.contains("closed to agents"), "{text}");
}

#[tokio::test]
async fn s3_4_without_the_own_network_declared_loopback_is_refused_and_never_reached() {
    let site = Site::start().await;
    site.script("/report", vec![Answer::html(ARTICLE)]);
    let fetcher = fetcher(false, &Trust::default());
    for url in [
        site.url("/report"),
        format!("http://localhost:{}/report", site.address.port()),
        format!("http://0x7f.1:{}/report", site.address.port()),
    ] {
        let (kind, text) = read(&fetch(&fetcher, &url, &[]).await);
        assert_eq!(kind, "refusal", "{url}: {text}");
        assert!(
            text.contains("127.0.0.1") || text.contains("localhost"),
            "{text}"
        );
    }
    assert!(site.requests().is_empty(), "the site was never reached");
}

#[tokio::test]
async fn s3_4_a_pdf_is_handed_back_whole_for_the_pdf_route() {
    let site = Site::start().await;
    let pdf = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n".to_vec();
    site.script(
        "/paper.pdf",
        vec![Answer::new("200 OK", "application/pdf", pdf.clone())],
    );
    let result = fetch(
        &fetcher(true, &Trust::default()),
        &site.url("/paper.pdf"),
        &[],
    )
    .await;
    let Some(Outcome::Success(success)) = &result.outcome else {
        panic!("{result:?}")
    };
    let document = success.document.as_ref().expect("a document");
    assert_eq!(document.media_type, "application/pdf");
    assert_eq!(document.content, pdf);
    assert_eq!(document.status, 200);
    assert!(success.text.is_empty(), "the daemon builds the text");
}

#[tokio::test]
async fn s3_4_a_body_past_the_cap_is_refused_whole_not_read_in_part() {
    let site = Site::start().await;
    let huge = vec![b'a'; collegium_worker_browser::fetch::BODY_CAP + 1];
    site.script("/huge", vec![Answer::new("200 OK", "text/plain", huge)]);
    let (kind, text) =
        read(&fetch(&fetcher(true, &Trust::default()), &site.url("/huge"), &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.contains("more than a fetch reads"), "{text}");
}

#[tokio::test]
async fn s3_4_arguments_the_tool_does_not_take_are_refused() {
    let fetcher = fetcher(true, &Trust::default());
    let missing = fetcher
        .fetch(&call(json!({"offset": 3}), &[], Duration::from_secs(5)))
        .await;
    assert_eq!(read(&missing).0, "invalid");
    let (kind, text) = read(&fetch(&fetcher, "not a url", &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.contains("not a URL"), "{text}");
    let (kind, text) = read(&fetch(&fetcher, "ftp://example.com/file", &[]).await);
    assert_eq!(kind, "refusal", "{text}");
    assert!(text.contains("ftp"), "{text}");
}
