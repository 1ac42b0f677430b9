//! A find: where each of a few phrases occurs, case-insensitively, with a bounded span around
//! each and the offset a window reads it from; shared text shown once; the page whole where
//! the spans would take more than it.

use collegium_web_page::{
    FIND_CONTEXT_CHARS, FIND_HITS_SHOWN, FIND_PHRASES_MAX, Reading, find, render_view, view,
};

fn phrases(list: &[&str]) -> Vec<String> {
    list.iter().map(|p| (*p).to_owned()).collect()
}

fn filler(n: usize) -> String {
    "lorem ipsum dolor sit amet ".repeat(n)
}

fn chars_at(text: &str, offset: usize, len: usize) -> String {
    text.chars().skip(offset).take(len).collect()
}

#[test]
fn each_hit_is_found_regardless_of_case_at_its_character_offset() {
    // Characters of several widths before the hit, one of which lowercases to two.
    let text = format!(
        "İstanbul 東京 🦀 {} The Invoice Number is 4471. {}",
        filler(200),
        filler(200)
    );
    let found = find(&text, &phrases(&["invoice NUMBER"]));
    let hits = &found.phrases[0];
    assert_eq!(hits.offsets.len(), 1);
    assert_eq!(chars_at(&text, hits.offsets[0], 14), "Invoice Number");
    assert_eq!(found.spans.len(), 1);
    let span = &found.spans[0];
    assert!(
        span.text.contains("The Invoice Number is 4471."),
        "{}",
        span.text
    );
    assert_eq!(span.start, hits.offsets[0] - FIND_CONTEXT_CHARS);
    assert_eq!(
        span.text,
        chars_at(&text, span.start, span.end - span.start)
    );
}

#[test]
fn a_phrase_matches_across_a_line_break() {
    let text = format!("{}total\namount due{}", filler(50), filler(50));
    assert_eq!(
        find(&text, &phrases(&["Total amount"])).phrases[0]
            .offsets
            .len(),
        1
    );
}

#[test]
fn overlapping_spans_are_shown_once() {
    let text = format!("{} alpha beta gamma {}", filler(100), filler(100));
    let found = find(&text, &phrases(&["alpha", "gamma"]));
    assert_eq!(found.spans.len(), 1, "{:?}", found.spans);
    assert_eq!(found.spans[0].hits.len(), 2);
    assert_eq!(found.spans[0].text.matches("alpha beta gamma").count(), 1);
}

#[test]
fn a_phrase_with_no_hit_says_so() {
    let text = filler(100);
    let found = view(
        &text,
        &Reading {
            find: phrases(&["ipsum", "refund policy"]),
            ..Reading::default()
        },
    );
    let mut out = String::new();
    render_view(&found, &mut out);
    assert!(out.contains("\"refund policy\": not found."), "{out}");
    assert!(out.contains("\"ipsum\": 100 places"), "{out}");
}

#[test]
fn a_find_searches_the_whole_text_and_says_so_beside_an_offset() {
    let text = format!("needle at the start {}", filler(1_000));
    let found = view(
        &text,
        &Reading {
            offset: Some(20_000),
            find: phrases(&["NEEDLE"]),
            ..Reading::default()
        },
    );
    let mut out = String::new();
    render_view(&found, &mut out);
    assert!(
        out.contains("a find searches the whole text, so offset 20000 was not used"),
        "{out}"
    );
    assert!(out.contains("\"NEEDLE\": 1 place, at 0."), "{out}");
    assert!(out.contains("needle at the start"), "{out}");
}

#[test]
fn hits_past_the_bound_are_counted_with_where_the_next_is() {
    let text = (0..25)
        .map(|n| format!("{} marker {n} ", filler(30)))
        .collect::<String>();
    let found = find(&text, &phrases(&["marker"]));
    assert_eq!(found.phrases[0].offsets.len(), 25);
    assert_eq!(found.spans.len(), FIND_HITS_SHOWN);
    let mut out = String::new();
    render_view(
        &view(
            &text,
            &Reading {
                find: phrases(&["marker"]),
                ..Reading::default()
            },
        ),
        &mut out,
    );
    let next = collegium_web_page::thousands(found.phrases[0].offsets[FIND_HITS_SHOWN]);
    assert!(
        out.contains(&format!("15 more not shown, the next at {next}")),
        "{out}"
    );
}

#[test]
fn where_the_spans_would_outweigh_the_page_the_page_is_returned_whole() {
    let text = "Price: 10. Price: 12. Price: 15. Shipping is free.";
    let found = find(text, &phrases(&["price"]));
    assert_eq!(found.whole.as_deref(), Some(text));
    assert!(found.spans.is_empty());
    let mut out = String::new();
    render_view(
        &view(
            text,
            &Reading {
                find: phrases(&["price"]),
                ..Reading::default()
            },
        ),
        &mut out,
    );
    assert!(
        out.contains("would take more text than the page holds, so here is the whole of it"),
        "{out}"
    );
    assert!(out.ends_with(text), "{out}");
}

#[test]
fn only_a_few_phrases_are_searched_and_the_rest_are_named() {
    let many: Vec<String> = (0..FIND_PHRASES_MAX + 2)
        .map(|n| format!("word{n}"))
        .collect();
    let found = find(&filler(10), &many);
    assert_eq!(found.phrases.len(), FIND_PHRASES_MAX);
    assert_eq!(
        found.not_searched,
        vec![
            format!("word{FIND_PHRASES_MAX}"),
            format!("word{}", FIND_PHRASES_MAX + 1)
        ]
    );
}
