//! HTML as markdown: nothing hidden, addresses absolute, images as alt text, drop-downs
//! inline and bounded, Cloudflare-cloaked addresses decoded.

use collegium_web_page::{SELECT_OPTIONS_SHOWN, decode_cloudflare_email, read_html};

use super::{PAGE_URL, markdown_of, page, url};

#[test]
fn a_news_page_reads_as_markdown_of_its_article() {
    let read = markdown_of(&page("news.html"));
    let md = &read.markdown;
    assert_eq!(
        read.title.as_deref(),
        Some("Harbour bridge reopens after repairs | The Coastal Times")
    );
    assert!(
        md.starts_with("# Harbour bridge reopens after repairs"),
        "{md}"
    );
    assert!(md.contains("**eight months**"), "{md}");
    // The article's own header and footer are the article's, not the page's.
    assert!(md.contains("By Ana Ruiz"), "{md}");
    assert!(md.contains("Filed under: Transport"), "{md}");
}

#[test]
fn an_image_is_its_alt_text_alone() {
    let md = markdown_of(&page("news.html")).markdown;
    assert!(md.contains("The bridge at dawn"), "{md}");
    for address in ["bridge.jpg", "logo.svg", "/img/", "!["] {
        assert!(!md.contains(address), "{address} in {md}");
    }
    let whole = read_html(&page("news.html"), &url(PAGE_URL), true).markdown;
    assert!(
        whole.contains("The Coastal Times"),
        "the logo's alt text: {whole}"
    );
    assert!(!whole.contains("logo.svg"), "{whole}");
    let no_alt = markdown_of(r#"<p>Before <img src="/pixel.gif"> after</p>"#).markdown;
    assert_eq!(no_alt, "Before after");
}

#[test]
fn links_are_absolute_against_the_page() {
    let md = markdown_of(&page("news.html")).markdown;
    assert!(
        md.contains("[engineers' report](https://coastal.example/news/reports/bridge-2026.pdf)"),
        "{md}"
    );
    assert!(md.contains("(https://coastal.example/a)"), "{md}");
}

#[test]
fn a_base_element_sets_what_links_resolve_against() {
    let html = r#"<head><base href="https://cdn.example/docs/v2/"></head><body><a href="intro.html">Intro</a></body>"#;
    assert_eq!(
        markdown_of(html).markdown,
        "[Intro](https://cdn.example/docs/v2/intro.html)"
    );
}

#[test]
fn a_script_link_keeps_its_text_and_loses_its_address() {
    let md = markdown_of(r#"<p><a href="javascript:void(0)">Show more</a></p>"#).markdown;
    assert!(md.contains("Show more"), "{md}");
    assert!(!md.contains("javascript"), "{md}");
}

#[test]
fn hidden_elements_script_style_and_templates_are_not_read() {
    let html = r#"<body>
      <p>Visible text.</p>
      <div style="color: red; DISPLAY : none !important">Inline display none</div>
      <div style="visibility:hidden">Invisible</div>
      <p hidden>Hidden attribute</p>
      <span aria-hidden="true">Aria hidden</span>
      <template><p>Template body</p></template>
      <script>var secret = "script text";</script>
      <style>.x { content: "style text" }</style>
      <dialog><p>Closed dialog</p></dialog>
      <dialog open><p>Open dialog</p></dialog>
      <iframe src="/ad">Iframe fallback</iframe>
    </body>"#;
    let md = markdown_of(html).markdown;
    assert!(md.contains("Visible text."), "{md}");
    assert!(md.contains("Open dialog"), "{md}");
    for gone in [
        "Inline display none",
        "Invisible",
        "Hidden attribute",
        "Aria hidden",
        "Template body",
        "script text",
        "style text",
        "Closed dialog",
        "Iframe fallback",
    ] {
        assert!(!md.contains(gone), "{gone} in {md}");
    }
}

#[test]
fn the_news_page_hides_nothing_it_should_show_and_shows_nothing_it_hides() {
    let md = read_html(&page("news.html"), &url(PAGE_URL), true).markdown;
    for gone in [
        "Advertisement",
        "Subscriber-only",
        "Decorative ornament",
        "dataLayer",
        "font-family",
    ] {
        assert!(!md.contains(gone), "{gone} in {md}");
    }
}

#[test]
fn a_cloudflare_cloaked_address_reads_as_the_browser_shows_it() {
    let md = markdown_of(&page("news.html")).markdown;
    assert!(
        md.contains("[newsroom@coastaltimes.com](mailto:newsroom@coastaltimes.com)"),
        "{md}"
    );
    assert!(!md.contains("email protected"), "{md}");
    assert!(!md.contains("cdn-cgi"), "{md}");
}

#[test]
fn the_decoding_is_cloudflares() {
    // Key 0x42, then "a@b.c" XOR 0x42.
    assert_eq!(
        decode_cloudflare_email("422302206c21").as_deref(),
        Some("a@b.c")
    );
    assert_eq!(
        decode_cloudflare_email("c5aba0b2b6b7aaaaa885a6aaa4b6b1a4a9b1aca8a0b6eba6aaa8").as_deref(),
        Some("newsroom@coastaltimes.com")
    );
    // UTF-8 decoded as the script's decodeURIComponent(escape(...)) does: "é@x.y" under key 0x10.
    assert_eq!(
        decode_cloudflare_email("10d3").as_deref(),
        None,
        "a lone UTF-8 lead byte does not decode"
    );
    let key = 0x10u8;
    let hex: String = std::iter::once(key)
        .chain("é@x.y".bytes().map(|b| b ^ key))
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(decode_cloudflare_email(&hex).as_deref(), Some("é@x.y"));
}

#[test]
fn a_cloak_that_does_not_decode_is_left_as_served() {
    for bad in ["", "4", "42230", "zz2302", "42"] {
        assert_eq!(decode_cloudflare_email(bad), None, "{bad:?}");
    }
    let html = r#"<p>Write to <a href="/cdn-cgi/l/email-protection#zz11"><span class="__cf_email__" data-cfemail="4223022">[email&#160;protected]</span></a></p>"#;
    let md = markdown_of(html).markdown;
    assert!(md.contains("email\u{a0}protected"), "{md}");
    assert!(
        md.contains("https://coastal.example/cdn-cgi/l/email-protection#zz11"),
        "{md}"
    );
}

#[test]
fn a_drop_down_lists_its_options_inline_bounded() {
    let options: String = (1..=300)
        .map(|n| {
            let selected = if n == 250 { " selected" } else { "" };
            format!("<option value=\"c{n}\"{selected}>Country {n}</option>")
        })
        .collect();
    let html =
        format!(r#"<form><label>Country <select name="country">{options}</select></label></form>"#);
    let md = markdown_of(&html).markdown;
    assert!(
        md.contains(r#"[drop-down "country": "Country 1", "Country 2""#),
        "{md}"
    );
    assert!(
        md.contains(&format!("\"Country {SELECT_OPTIONS_SHOWN}\"")),
        "{md}"
    );
    assert!(
        !md.contains(&format!("\"Country {}\"", SELECT_OPTIONS_SHOWN + 1)),
        "{md}"
    );
    assert!(
        md.contains("and 280 more options (\"Country 250\" selected among them)]"),
        "{md}"
    );
    assert!(
        md.chars().count() < 600,
        "bounded: {} characters",
        md.chars().count()
    );
}

#[test]
fn a_short_drop_down_is_listed_whole_with_its_choice() {
    let html = r#"<select aria-label="Sort by"><option>Newest</option><optgroup label="Price"><option selected>Lowest price</option><option>Highest price</option></optgroup></select>"#;
    assert_eq!(
        markdown_of(html).markdown,
        r#"[drop-down "Sort by": "Newest", "Lowest price" (selected), "Highest price"]"#
    );
}

#[test]
fn a_noscript_fallback_is_read_and_a_plea_for_javascript_is_not() {
    let html = r#"<main><p>Opening hours: 9 to 5.</p>
        <noscript><p>Call us on 555 0100 to book.</p></noscript>
        <noscript>Please enable JavaScript for the best experience.</noscript></main>"#;
    let read = markdown_of(html);
    assert!(
        read.markdown.contains("Call us on 555 0100"),
        "{}",
        read.markdown
    );
    assert!(
        !read.markdown.contains("enable JavaScript"),
        "{}",
        read.markdown
    );
    assert!(read.asks_for_javascript);
}

#[test]
fn a_page_nested_past_the_converters_depth_keeps_its_text() {
    // Deeper than the converter's recursion is allowed to go, within the nesting bound.
    let depth = collegium_web_page::NESTING_LIMIT - 2;
    let html = format!(
        "{}<p>deep text</p>{}",
        "<div>".repeat(depth),
        "</div>".repeat(depth)
    );
    let read = markdown_of(&html);
    assert!(read.markdown.contains("deep text"), "{}", read.markdown);
    assert_eq!(read.unread_past_nesting, None);
}

#[test]
fn a_page_nested_past_the_bound_is_read_up_to_it_and_says_how_much_was_not() {
    use collegium_web_page::NESTING_LIMIT;
    // 100,000 nested elements cost the parser minutes; the bound stops them before it.
    let opened = "<div>".repeat(100_000);
    let html = format!("<p>Before the tower.</p>{opened}<p>inside</p>");
    let read = markdown_of(&html);
    assert!(
        read.markdown.contains("Before the tower."),
        "{}",
        read.markdown
    );
    let read_bytes = "<p>Before the tower.</p>".len() + 5 * NESTING_LIMIT;
    assert_eq!(read.unread_past_nesting, Some(html.len() - read_bytes));
    let text = super::Served::html(200, &html)
        .fetch(&collegium_web_page::Reading::default())
        .render(&super::holds_nothing);
    assert!(
        text.contains(&format!(
            "nests its elements more than {NESTING_LIMIT} deep"
        )),
        "{text}"
    );
}

#[test]
fn long_lists_of_unclosed_items_and_void_elements_are_not_deep() {
    let items: String = (0..5_000)
        .map(|n| format!("<li>item {n}<br><img src=x alt=\"\">"))
        .collect();
    let cells: String = (0..3_000).map(|n| format!("<tr><td>{n}<td>cell")).collect();
    let scripts = "<script>if (a < b) { x = '<div><div><div>'; }</script>".repeat(1_000);
    let html =
        format!("<ul>{items}</ul><table>{cells}</table>{scripts}<!-- <div><div> --><p>end</p>");
    let read = markdown_of(&html);
    assert_eq!(read.unread_past_nesting, None);
    assert!(
        read.markdown.ends_with("end"),
        "{}",
        &read.markdown[read.markdown.len() - 40..]
    );
}

#[test]
fn a_declared_charset_decodes_the_body() {
    use collegium_web_page::{Fetched, Reading, Response, classify};
    // "Café" in windows-1252.
    let body = b"<html><body><p>Caf\xe9 cr\xe8me</p></body></html>";
    for content_type in ["text/html; charset=windows-1252", "text/html"] {
        let meta_body = [b"<meta charset=\"windows-1252\">".as_slice(), body].concat();
        let body: &[u8] = if content_type == "text/html" {
            &meta_body
        } else {
            body
        };
        let page_url = url(PAGE_URL);
        let response = Response {
            requested: &page_url,
            final_url: &page_url,
            status: 200,
            content_type: Some(content_type),
            headers: &[],
            body,
            retried: None,
        };
        let Fetched::Page(page) = classify(&response, &Reading::default()) else {
            panic!("a page")
        };
        assert_eq!(page.text, "Café crème", "{content_type}");
    }
}
