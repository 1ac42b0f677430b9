//! What a response comes to: the page, or the typed result standing in its place, each
//! saying what it is in words that name web::navigate only to an agent holding it.

use std::time::Duration;

use collegium_web_page::{Fetched, Reading, Refusal, Retried, Source};

use super::{Served, holds_navigate, holds_nothing, page};

const CLOUDFLARE_HEADERS: &[(&str, &str)] = &[
    ("server", "cloudflare"),
    ("cf-ray", "8f1c2d3e4f5a6b7c-FRA"),
    ("cf-mitigated", "challenge"),
];

fn refused(fetched: &Fetched) -> &Refusal {
    match fetched {
        Fetched::Refused { refusal, .. } => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_cloudflare_challenge_is_a_bot_check_naming_the_browser() {
    let body = page("cloudflare_challenge.html");
    let served = Served {
        headers: CLOUDFLARE_HEADERS,
        ..Served::html(403, &body)
    };
    let fetched = served.fetch(&Reading::default());
    let Refusal::BotCheck { check, title } = refused(&fetched) else {
        panic!("{fetched:?}")
    };
    assert_eq!(check.by, Some("Cloudflare"));
    assert_eq!(title.as_deref(), Some("Just a moment..."));
    let text = fetched.render(&holds_navigate);
    assert!(
        text.contains("a bot check by Cloudflare stands in the page's place"),
        "{text}"
    );
    assert!(text.contains("403 Forbidden"), "{text}");
    assert!(
        text.contains("What was served is the check, not the page."),
        "{text}"
    );
    assert!(
        text.contains("web::navigate opens it in a browser"),
        "{text}"
    );
    assert!(
        !text.contains("Verifying you are human"),
        "the body is not presented as the page: {text}"
    );
    let without = fetched.render(&holds_nothing);
    assert!(!without.contains("web::navigate"), "{without}");
    assert!(!without.contains("browser"), "{without}");
}

#[test]
fn a_bot_check_is_one_at_any_status_and_without_its_headers() {
    let body = page("cloudflare_challenge.html");
    for status in [200, 503] {
        let fetched = Served::html(status, &body).fetch(&Reading::default());
        assert!(
            matches!(refused(&fetched), Refusal::BotCheck { .. }),
            "{status}: {fetched:?}"
        );
    }
}

#[test]
fn a_captcha_on_a_page_with_content_is_a_form_not_a_check() {
    let body = page("login_with_captcha.html");
    let fetched = Served::html(200, &body).fetch(&Reading::default());
    assert!(matches!(fetched, Fetched::Page(_)), "{fetched:?}");
    let wall = r#"<html><head><title>Checking</title></head><body><h1>One more step</h1><p>Please verify you are human.</p><div class="h-captcha" data-sitekey="x"></div></body></html>"#;
    let fetched = Served::html(200, wall).fetch(&Reading::default());
    assert!(
        matches!(refused(&fetched), Refusal::BotCheck { check, .. } if check.by.is_none()),
        "{fetched:?}"
    );
}

#[test]
fn a_401_403_or_429_over_html_is_refused_whatever_it_says() {
    let body = "<html><head><title>Members only</title></head><body><main><h1>Members only</h1><p>This article is for subscribers. Sign in to read on, or subscribe for unlimited access to our journalism.</p></main></body></html>";
    for status in [401, 403, 429] {
        let fetched = Served::html(status, body).fetch(&Reading::default());
        assert!(
            matches!(refused(&fetched), Refusal::StatusRefused { .. }),
            "{status}"
        );
        let text = fetched.render(&holds_navigate);
        assert!(
            text.contains(&collegium_web_page::status_line(status)),
            "{text}"
        );
        assert!(
            text.contains("describes the refusal, not the page"),
            "{text}"
        );
        assert!(text.contains("titled \"Members only\""), "{text}");
        assert!(text.contains("web::navigate"), "{text}");
        assert!(!text.contains("subscribers"), "{text}");
        assert!(!fetched.render(&holds_nothing).contains("web::navigate"));
    }
}

#[test]
fn a_503_on_a_cdns_refusal_page_is_refused_naming_the_cdn() {
    let cloudflare = page("cloudflare_503.html");
    let fetched = Served {
        headers: &[("server", "cloudflare"), ("cf-ray", "1-FRA")],
        ..Served::html(503, &cloudflare)
    }
    .fetch(&Reading::default());
    assert_eq!(
        refused(&fetched),
        &Refusal::CdnRefused { cdn: "Cloudflare" }
    );
    let akamai = page("akamai_503.html");
    let fetched = Served {
        headers: &[("server", "AkamaiGHost")],
        ..Served::html(503, &akamai)
    }
    .fetch(&Reading::default());
    assert_eq!(refused(&fetched), &Refusal::CdnRefused { cdn: "Akamai" });
    let text = fetched.render(&holds_navigate);
    assert!(
        text.contains(
            "Akamai, which stands in front of the site, answered with its own refusal page"
        ),
        "{text}"
    );
    assert!(text.contains("web::navigate"), "{text}");
}

#[test]
fn a_503_from_the_site_itself_is_the_sites_page() {
    let body = "<html><body><h1>Down for maintenance</h1><p>We will be back at 14:00 UTC.</p></body></html>";
    let fetched = Served::html(503, body).fetch(&Reading::default());
    let Fetched::Page(page) = &fetched else {
        panic!("{fetched:?}")
    };
    assert!(page.text.contains("back at 14:00 UTC"));
    assert!(fetched.render(&holds_navigate).starts_with(&format!(
        "{} answered 503 Service Unavailable.",
        super::PAGE_URL
    )));
}

#[test]
fn an_application_shell_yields_nothing_without_javascript() {
    let fetched = Served::html(200, &page("spa_shell.html")).fetch(&Reading::default());
    assert_eq!(
        refused(&fetched),
        &Refusal::NeedsScript {
            scripts: 1,
            asks_for_javascript: true
        }
    );
    let text = fetched.render(&holds_navigate);
    assert!(
        text.contains("the page yields nothing without JavaScript"),
        "{text}"
    );
    assert!(
        text.contains("web::navigate renders it in a browser that does"),
        "{text}"
    );
    assert!(!fetched.render(&holds_nothing).contains("web::navigate"));
    let scripts_only = r#"<html><body><div id="app"></div><script src="/a.js"></script><script src="/b.js"></script></body></html>"#;
    let fetched = Served::html(200, scripts_only).fetch(&Reading::default());
    assert_eq!(
        refused(&fetched),
        &Refusal::NeedsScript {
            scripts: 2,
            asks_for_javascript: false
        }
    );
    assert!(
        fetched
            .render(&holds_nothing)
            .contains("no readable text for its 2 scripts to fill in")
    );
}

#[test]
fn a_page_that_uses_script_but_has_text_is_read() {
    let body = r#"<html><body><main><p>Opening hours are nine to five on weekdays.</p></main><script src="/analytics.js"></script></body></html>"#;
    assert!(matches!(
        Served::html(200, body).fetch(&Reading::default()),
        Fetched::Page(_)
    ));
}

#[test]
fn an_empty_success_is_empty_and_names_no_browser() {
    for body in ["", "  \n"] {
        let fetched = Served::html(200, body).fetch(&Reading::default());
        assert!(matches!(fetched, Fetched::Empty { .. }), "{fetched:?}");
        let text = fetched.render(&holds_navigate);
        assert!(text.contains("The body is empty"), "{text}");
        assert!(
            !text.contains("web::navigate") && !text.contains("browser"),
            "{text}"
        );
    }
}

#[test]
fn an_error_status_over_nothing_readable_is_that_status() {
    for (status, body) in [
        (500, ""),
        (502, "<html><body><script>x()</script></body></html>"),
        (504, "<html></html>"),
    ] {
        let fetched = Served::html(status, body).fetch(&Reading::default());
        assert!(
            matches!(fetched, Fetched::Status { .. }),
            "{status}: {fetched:?}"
        );
        let text = fetched.render(&holds_navigate);
        assert!(
            text.contains(&collegium_web_page::status_line(status)),
            "{text}"
        );
        assert!(!text.contains("no page at this address"), "{text}");
        assert!(!text.contains("web::navigate"), "{text}");
    }
}

#[test]
fn only_a_404_or_410_says_there_is_no_page_and_that_a_built_address_proves_nothing() {
    for status in [404, 410] {
        let text = Served::html(status, "")
            .fetch(&Reading::default())
            .render(&holds_navigate);
        assert!(text.contains("There is no page at this address."), "{text}");
        assert!(text.contains("An address you built, rather than read off a page, proves nothing about the page you were after."), "{text}");
        let with_page = Served::html(
            status,
            "<html><body><h1>Not found</h1><p>Try the search box.</p></body></html>",
        )
        .fetch(&Reading::default());
        assert!(matches!(with_page, Fetched::Page(_)));
        assert!(
            with_page
                .render(&holds_navigate)
                .contains("proves nothing about the page you were after")
        );
    }
}

#[test]
fn textual_non_html_is_returned_as_served_at_any_status() {
    let json = r#"{"error":{"code":"rate_limited","message":"Slow down"}}"#;
    for (status, content_type) in [
        (200, "application/json"),
        (400, "application/problem+json"),
        (429, "application/json; charset=utf-8"),
    ] {
        let fetched = Served {
            content_type: Some(content_type),
            body: json.as_bytes(),
            ..Served::html(status, "")
        }
        .fetch(&Reading::default());
        let Fetched::Page(page) = &fetched else {
            panic!("{status}: {fetched:?}")
        };
        assert_eq!(page.text, json);
        assert!(matches!(&page.source, Source::Text { .. }));
        let text = fetched.render(&holds_navigate);
        assert!(text.ends_with(json), "{text}");
        assert!(!text.contains("web::navigate"), "{text}");
    }
    for content_type in [
        "text/csv",
        "text/plain",
        "application/xml",
        "text/javascript",
        "application/x-ndjson",
    ] {
        let fetched = Served {
            content_type: Some(content_type),
            body: b"a,b\n1,2\n",
            ..Served::html(200, "")
        }
        .fetch(&Reading::default());
        assert!(matches!(fetched, Fetched::Page(_)), "{content_type}");
    }
}

#[test]
fn a_long_text_is_windowed_and_found_like_a_page() {
    let log: String = (0..5_000)
        .map(|n| format!("2026-12-02T08:{:02}:00Z request {n} served\n", n % 60))
        .collect();
    let served = Served {
        content_type: Some("text/plain"),
        body: log.as_bytes(),
        ..Served::html(200, "")
    };
    let text = served.fetch(&Reading::default()).render(&holds_nothing);
    assert!(
        text.contains("more characters follow; read on from offset"),
        "{}",
        &text[..200]
    );
    let found = served
        .fetch(&Reading {
            find: vec!["request 4321 ".into()],
            ..Reading::default()
        })
        .render(&holds_nothing);
    assert!(found.contains("\"request 4321\": 1 place"), "{found}");
}

#[test]
fn a_pdf_is_handed_on_whatever_it_is_labelled() {
    let pdf = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n";
    for content_type in [
        Some("application/pdf"),
        Some("application/octet-stream"),
        None,
    ] {
        let fetched = Served {
            content_type,
            body: pdf,
            ..Served::html(200, "")
        }
        .fetch(&Reading::default());
        let Fetched::Pdf { bytes, .. } = &fetched else {
            panic!("{content_type:?}: {fetched:?}")
        };
        assert_eq!(bytes.as_slice(), pdf);
    }
}

#[test]
fn a_binary_type_is_not_read_and_says_what_it_was() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let fetched = Served {
        content_type: Some("image/png"),
        body: png,
        ..Served::html(200, "")
    }
    .fetch(&Reading::default());
    assert!(matches!(fetched, Fetched::NotRead { .. }), "{fetched:?}");
    let text = fetched.render(&holds_navigate);
    assert!(
        text.contains("It is image/png (16 bytes), which web::fetch does not read"),
        "{text}"
    );
    let unlabelled = Served {
        content_type: None,
        body: png,
        ..Served::html(200, "")
    }
    .fetch(&Reading::default());
    assert!(
        matches!(
            unlabelled,
            Fetched::NotRead {
                content_type: None,
                ..
            }
        ),
        "{unlabelled:?}"
    );
}

#[test]
fn a_retried_result_says_it_was_retried_and_after_what() {
    let body = "<html><body><p>Results for your query.</p></body></html>";
    let served = Served {
        retried: Some(Retried {
            first_status: 429,
            after: Duration::from_secs(2),
        }),
        ..Served::html(200, body)
    };
    let text = served.fetch(&Reading::default()).render(&holds_nothing);
    assert!(text.contains("Retried once: the first answer was 429 Too Many Requests, and it was asked again after 2 seconds."), "{text}");
    let refused = Served {
        retried: Some(Retried {
            first_status: 429,
            after: Duration::from_secs(1),
        }),
        ..Served::html(429, body)
    };
    assert!(
        refused
            .fetch(&Reading::default())
            .render(&holds_nothing)
            .contains("asked again after 1 second.")
    );
}

#[test]
fn a_redirected_result_names_both_addresses() {
    let served = Served {
        requested: "http://coastal.example/bridge",
        ..Served::html(200, "<p>Moved here.</p>")
    };
    let text = served.fetch(&Reading::default()).render(&holds_nothing);
    assert!(
        text.starts_with(&format!(
            "{} answered 200 OK (redirected from http://coastal.example/bridge).",
            super::PAGE_URL
        )),
        "{text}"
    );
}

#[test]
fn a_page_result_says_what_it_read_and_what_it_left_out() {
    let body = page("news.html");
    let text = Served::html(200, &body)
        .fetch(&Reading::default())
        .render(&holds_nothing);
    assert!(
        text.contains("Title: Harbour bridge reopens after repairs | The Coastal Times"),
        "{text}"
    );
    assert!(
        text.contains("Read: the page less its navigation, banner and footer, which held "),
        "{text}"
    );
    assert!(text.contains("(wholePage reads them)"), "{text}");
    let whole = Served::html(200, &body)
        .fetch(&Reading {
            whole_page: true,
            ..Reading::default()
        })
        .render(&holds_nothing);
    assert!(whole.contains("Read: the whole page."), "{whole}");
    assert!(
        whole.contains("[Privacy](https://coastal.example/privacy)"),
        "{whole}"
    );
}

#[test]
fn a_link_without_text_is_not_readable_text() {
    let shell = r#"<html><body><div><a href="/home"><img src="/logo.png"></a></div><div id="root"></div><script src="/x.js"></script></body></html>"#;
    let fetched = Served::html(200, shell).fetch(&Reading::default());
    assert!(
        matches!(refused(&fetched), Refusal::NeedsScript { .. }),
        "{fetched:?}"
    );
}

#[test]
fn a_long_title_is_cut_and_says_so() {
    let body = format!(
        "<html><head><title>{}</title></head><body><p>Text.</p></body></html>",
        "word ".repeat(500)
    );
    let text = Served::html(200, &body)
        .fetch(&Reading::default())
        .render(&holds_nothing);
    assert!(text.contains("… (title cut at 200 characters)"), "{text}");
}
