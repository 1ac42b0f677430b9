//! Bodies built to hurt: nesting deeper than a thread's stack, and more quoted levels than
//! an announcement should carry (§3.13: an unknown shape degrades, it never fails or drops).

use collegium_mail_thread::{split_html, split_text};

#[test]
fn s3_13_a_quote_nested_thousands_deep_splits_without_exhausting_the_stack_and_keeps_its_text() {
    let levels = 3_000;
    let mut body = String::from("top\n");
    for depth in 1..=levels {
        body.push_str(&">".repeat(depth));
        body.push_str(&format!(" level {depth}\n"));
    }
    let thread = split_text(&body);
    assert_eq!(thread.newest, "top");
    assert_eq!(
        thread.quoted.len(),
        100,
        "the split stops at 100 quoted messages"
    );
    assert_eq!(thread.quoted[0].body, "level 1");
    let last = &thread.quoted[99].body;
    let kept: Vec<&str> = last.lines().collect();
    assert_eq!(
        kept.len(),
        levels - 99,
        "the rest stays, as written, in the last"
    );
    assert!(kept[0].ends_with("level 100") && kept[kept.len() - 1].ends_with("level 3000"));
}

#[test]
fn s3_13_html_nested_thousands_deep_reads_without_exhausting_the_stack() {
    let levels = 2_000;
    let mut html = String::from("<p>top</p>");
    for depth in 0..levels {
        html.push_str(&format!("<div><blockquote type=\"cite\">level {depth}"));
    }
    let thread = split_html(&html);
    assert_eq!(thread.newest.trim(), "top");
    assert_eq!(thread.quoted.len(), 100);
    assert!(thread.quoted[0].body.contains("level 0"));
    assert!(thread.quoted[99].body.contains("level 1999"));
}
