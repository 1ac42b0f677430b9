//! The main-landmark rule: the one main landmark where the page marks exactly one, else the
//! page less its navigation, banner and footer; what that left out counted.

use collegium_web_page::{Extent, read_html};

use super::{PAGE_URL, markdown_of, page, url};

#[test]
fn a_page_without_a_main_is_read_less_its_navigation_banner_and_footer() {
    let read = markdown_of(&page("news.html"));
    assert_eq!(read.extent, Extent::LessNavigation);
    for chrome in ["World", "Business", "Search", "Privacy", "© 2026"] {
        assert!(
            !read.markdown.contains(chrome),
            "{chrome} in {}",
            read.markdown
        );
    }
    assert!(
        read.markdown.contains("Most read"),
        "an aside is content: {}",
        read.markdown
    );
    assert!(read.left_out_chars > 0);
}

#[test]
fn what_was_left_out_is_counted_and_whole_page_reads_it() {
    let html = page("news.html");
    let main = markdown_of(&html);
    let whole = read_html(&html, &url(PAGE_URL), true);
    assert_eq!(whole.extent, Extent::WholePage);
    assert_eq!(whole.left_out_chars, 0);
    for chrome in [
        "[World](https://coastal.example/world)",
        "Privacy",
        "© 2026 The Coastal Times",
    ] {
        assert!(
            whole.markdown.contains(chrome),
            "{chrome} in {}",
            whole.markdown
        );
    }
    // The count is of the markdown the left-out parts make: read whole, the page is the main
    // content and those parts, give or take the breaks between them.
    let whole_chars = whole.markdown.chars().count();
    let parts = main.markdown.chars().count() + main.left_out_chars;
    assert!(
        whole_chars.abs_diff(parts) <= 8,
        "whole {whole_chars}, main and left out {parts}"
    );
}

#[test]
fn the_one_main_landmark_is_read_alone() {
    let read = markdown_of(&page("one_main.html"));
    assert_eq!(
        read.extent,
        Extent::MainLandmark,
        "the hidden <main> is not a landmark"
    );
    assert_eq!(
        read.markdown,
        "# Release 4.2\n\nFaster start-up and a new plugin API."
    );
    let whole = read_html(&page("one_main.html"), &url(PAGE_URL), true).markdown;
    assert!(whole.contains("Sidebar: older releases"), "{whole}");
    assert!(!whole.contains("template main"), "{whole}");
    let left = read.left_out_chars;
    let outside = whole.chars().count() - read.markdown.chars().count();
    assert!(
        left.abs_diff(outside) <= 8,
        "left out {left}, outside the main {outside}"
    );
}

#[test]
fn two_main_landmarks_fall_back_to_the_page_less_its_chrome() {
    let read = markdown_of(&page("two_mains.html"));
    assert_eq!(read.extent, Extent::LessNavigation);
    let md = &read.markdown;
    assert!(md.contains("Configuring the widget"), "{md}");
    assert!(md.contains("Related questions"), "{md}");
    assert!(
        md.contains("Changelog"),
        "a section's own header stays: {md}"
    );
    for chrome in ["DocsSite", "Sign in", "Guide", "Licensed CC-BY"] {
        assert!(!md.contains(chrome), "{chrome} in {md}");
    }
}

#[test]
fn a_main_marked_twice_on_one_element_is_one_landmark() {
    let html = r#"<nav><a href="/">Home</a></nav><main role="main"><p>Only this.</p></main>"#;
    let read = markdown_of(html);
    assert_eq!(read.extent, Extent::MainLandmark);
    assert_eq!(read.markdown, "Only this.");
}

#[test]
fn a_header_inside_an_article_is_the_articles_but_an_explicit_banner_is_not() {
    let html = r#"<body>
        <header><p>Site masthead</p></header>
        <article><header><h1>Story title</h1></header><p>Story body.</p><footer>Story footnote</footer></article>
        <section><footer>Section credits</footer></section>
        <div><header role="banner">Explicit banner</header></div>
        <div role="navigation">Skip links</div>
        <footer>Page footer</footer>
    </body>"#;
    let md = markdown_of(html).markdown;
    for kept in [
        "Story title",
        "Story body.",
        "Story footnote",
        "Section credits",
    ] {
        assert!(md.contains(kept), "{kept} missing from {md}");
    }
    for gone in [
        "Site masthead",
        "Explicit banner",
        "Skip links",
        "Page footer",
    ] {
        assert!(!md.contains(gone), "{gone} in {md}");
    }
}
