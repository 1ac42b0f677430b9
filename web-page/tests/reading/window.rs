//! A bounded window of one width, on character boundaries, saying where to read on.

use collegium_web_page::{Reading, View, WINDOW_CHARS, render_view, view, window};

fn long_text() -> String {
    // Lines of mixed scripts, so a byte cut would land inside a character.
    (0..2_000)
        .map(|n| format!("Line {n}: 東京 naïve café — 🦀 crab {n}\n"))
        .collect()
}

#[test]
fn a_short_text_is_shown_whole() {
    let shown = window("short text", 0);
    assert_eq!(
        (shown.offset, shown.end, shown.total, shown.text),
        (0, 10, 10, "short text")
    );
    assert_eq!(shown.next_offset(), None);
}

#[test]
fn a_long_text_is_shown_a_window_at_a_time_and_the_windows_rebuild_it() {
    let text = long_text();
    let total = text.chars().count();
    assert!(total > 3 * WINDOW_CHARS);
    let mut rebuilt = String::new();
    let mut offset = 0;
    let mut windows = 0;
    loop {
        let shown = window(&text, offset);
        assert_eq!(shown.total, total);
        assert_eq!(shown.offset, offset);
        let width = shown.text.chars().count();
        assert_eq!(width, shown.end - shown.offset);
        assert!(width <= WINDOW_CHARS, "{width}");
        rebuilt.push_str(shown.text);
        windows += 1;
        match shown.next_offset() {
            Some(next) => {
                assert!(
                    shown.text.ends_with('\n'),
                    "a window ends between lines where it can"
                );
                assert!(
                    width > WINDOW_CHARS - 1_000,
                    "and not far short of its width: {width}"
                );
                offset = next;
            }
            None => break,
        }
    }
    assert_eq!(rebuilt, text);
    assert!(windows >= 4);
}

#[test]
fn a_text_without_breaks_is_cut_on_a_character_boundary() {
    let text = "🦀".repeat(WINDOW_CHARS + 5);
    let shown = window(&text, 0);
    assert_eq!(shown.text.chars().count(), WINDOW_CHARS);
    assert_eq!(shown.next_offset(), Some(WINDOW_CHARS));
    assert_eq!(window(&text, WINDOW_CHARS).text, "🦀".repeat(5));
}

#[test]
fn an_offset_past_the_end_says_how_long_the_text_is() {
    let shown = window("abc", 10);
    assert!(shown.past_end());
    assert_eq!(shown.text, "");
    let mut out = String::new();
    render_view(
        &view(
            "abc",
            &Reading {
                offset: Some(10),
                ..Reading::default()
            },
        ),
        &mut out,
    );
    assert_eq!(out, "Offset 10 is past the end: the text has 3 characters.");
}

#[test]
fn a_window_says_the_total_what_is_not_shown_and_where_to_read_on() {
    let text = long_text();
    let total = text.chars().count();
    let shown = view(
        &text,
        &Reading {
            offset: Some(5),
            ..Reading::default()
        },
    );
    let View::Window { end, .. } = &shown else {
        panic!("a window")
    };
    let mut out = String::new();
    render_view(&shown, &mut out);
    let thousands = collegium_web_page::thousands;
    assert!(
        out.starts_with(&format!(
            "Characters 5–{} of {}:",
            thousands(*end),
            thousands(total)
        )),
        "{}",
        &out[..80]
    );
    assert!(
        out.ends_with(&format!(
            "[{} more characters follow; read on from offset {end}.]",
            thousands(total - end)
        )),
        "{}",
        &out[out.len() - 120..]
    );
}
