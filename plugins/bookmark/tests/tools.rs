//! The bookmark plugin's tools on the path a call takes, with an in-memory
//! store (§3.14). The daemon's storage, grants and prompts are the
//! end-to-end tests' (tests/e2e/tests/plugin_bookmark.rs).

use collegium_proto::toolset::v1::{Gate, ToolResult, tool_result};
use collegium_sdk::NoSettings;
use collegium_sdk::testing::Driver;
use serde_json::{Value, json};

async fn driver() -> Driver<NoSettings> {
    Driver::start(bookmark::plugin()).await.expect("started")
}

fn success(result: ToolResult) -> (String, Option<collegium_proto::toolset::v1::Disclosure>) {
    match result.outcome {
        Some(tool_result::Outcome::Success(s)) => (s.text, s.disclosure),
        other => panic!("not a success: {other:?}"),
    }
}

fn invalid(result: ToolResult) -> String {
    match result.outcome {
        Some(tool_result::Outcome::InvalidArguments(r)) => r.message,
        other => panic!("not invalid arguments: {other:?}"),
    }
}

async fn save(d: &Driver<NoSettings>, arguments: Value) -> ToolResult {
    d.invoke(d.call("save", &arguments), "decision")
        .await
        .expect("answered")
}

async fn list(d: &Driver<NoSettings>, arguments: Value) -> String {
    success(
        d.invoke(d.call("list", &arguments), "")
            .await
            .expect("answered"),
    )
    .0
}

fn stored(d: &Driver<NoSettings>) -> Vec<Value> {
    d.memory
        .snapshot()
        .into_iter()
        .map(|(_, json)| serde_json::from_str(&json).expect("json"))
        .collect()
}

#[tokio::test]
async fn s3_14_save_and_remove_gate_and_list_reads_beside_others() {
    let d = driver().await;
    let tools: Vec<(&str, i32, bool)> = d
        .described
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.gate, t.concurrent))
        .collect();
    assert_eq!(
        tools,
        vec![
            ("save", Gate::Approval as i32, false),
            ("list", Gate::None as i32, true),
            ("remove", Gate::Approval as i32, false),
        ]
    );
    assert_eq!(d.described.storage_collections[0].name, "bookmarks");
    let skill = &d.described.skills[0];
    assert_eq!(skill.name, "saving-bookmarks");
    assert_eq!(skill.tools, vec!["bookmark::save", "bookmark::list"]);
}

#[tokio::test]
async fn s3_14_the_save_prompt_shows_the_exact_fields() {
    let d = driver().await;
    let prompt = d
        .render(d.call(
            "save",
            &json!({"url": "https://doc.rust-lang.org/book/", "title": "Rust book", "tag": "rust"}),
        ))
        .await
        .expect("rendered");
    assert_eq!(
        prompt.payload,
        "Save this bookmark?\n\nurl:   https://doc.rust-lang.org/book/\ntitle: Rust book\nnote:  (none)\ntag:   rust"
    );
    assert_eq!(
        prompt.summary,
        "save the bookmark https://doc.rust-lang.org/book/"
    );
}

#[tokio::test]
async fn s3_14_a_saved_address_shows_the_record_its_save_replaces() {
    let d = driver().await;
    success(
        save(
            &d,
            json!({"url": "https://go.dev", "title": "Go home", "note": "for Ana"}),
        )
        .await,
    );
    let prompt = d
        .render(d.call(
            "save",
            &json!({"url": "https://go.dev", "title": "Go tour"}),
        ))
        .await
        .expect("rendered");
    assert!(
        prompt.payload.contains(
            "This address is already saved; approving replaces that bookmark:\n\nid:    r1\nurl:   https://go.dev\ntitle: Go home\nnote:  for Ana\ntag:   (none)\nsaved by @mira in ~research"
        ),
        "{}",
        prompt.payload
    );
    let (text, disclosure) =
        success(save(&d, json!({"url": "https://go.dev", "title": "Go tour"})).await);
    assert!(
        text.starts_with("Saved, replacing the earlier bookmark"),
        "{text}"
    );
    let disclosure = disclosure.expect("disclosed");
    assert_eq!(disclosure.reference, "r1");
    assert_eq!(
        disclosure.superseded,
        vec!["the bookmark https://go.dev titled \"Go home\"".to_string()]
    );
    let records = stored(&d);
    assert_eq!(records.len(), 1, "one bookmark per address: {records:?}");
    assert_eq!(records[0]["title"], "Go tour");
    assert_eq!(records[0]["note"], "", "the replaced note is not kept");
}

#[tokio::test]
async fn s3_14_an_approved_save_is_stored_and_disclosed() {
    let d = driver().await;
    let (text, disclosure) = success(
        save(
            &d,
            json!({"url": " https://doc.rust-lang.org/book/ ", "title": "Rust book", "note": "start here", "tag": "rust"}),
        )
        .await,
    );
    assert!(text.starts_with("Saved:\nid:    r1\n"), "{text}");
    let disclosure = disclosure.expect("disclosed");
    assert_eq!(
        disclosure.description,
        "the bookmark https://doc.rust-lang.org/book/"
    );
    assert!(disclosure.body.contains("title: Rust book"));
    assert_eq!(
        stored(&d),
        vec![
            json!({"url": "https://doc.rust-lang.org/book/", "title": "Rust book", "note": "start here",
                    "tag": "rust", "saved_by": "mira", "channel": "research"})
        ]
    );
}

#[tokio::test]
async fn s3_14_a_save_the_tool_refuses_says_what_to_do_instead() {
    let d = driver().await;
    for (arguments, says) in [
        (
            json!({"url": "doc.rust-lang.org", "title": "Rust"}),
            "give the page's full address",
        ),
        (
            json!({"url": "https://a.example", "title": "  "}),
            "the title is empty",
        ),
        (
            json!({"url": "https://a.example", "title": "A", "tag": "Two Words"}),
            "join words with `-`",
        ),
    ] {
        let message = invalid(save(&d, arguments.clone()).await);
        assert!(message.contains(says), "{arguments}: {message}");
    }
    assert!(stored(&d).is_empty());
}

#[tokio::test]
async fn s3_14_list_finds_any_case_in_title_address_or_note_and_by_tag() {
    let d = driver().await;
    for (url, title, note, tag) in [
        ("https://doc.rust-lang.org/book/", "Rust book", "", "rust"),
        ("https://go.dev", "Go tour", "beside the rust one", "go"),
        ("https://rust-lang.org", "Home page", "", "web"),
        ("https://example.com", "Unrelated", "", "web"),
    ] {
        success(
            save(
                &d,
                json!({"url": url, "title": title, "note": note, "tag": tag}),
            )
            .await,
        );
    }
    let found = list(&d, json!({"contains": "RUST"})).await;
    assert_eq!(
        found,
        "Bookmarks holding \"RUST\":\n\
         - r1 · Rust book · https://doc.rust-lang.org/book/ [rust]\n\
         - r2 · Go tour · https://go.dev [go] — beside the rust one\n\
         - r3 · Home page · https://rust-lang.org [web]"
    );
    let tagged = list(&d, json!({"contains": "rust", "tag": "web"})).await;
    assert_eq!(
        tagged,
        "Bookmarks tagged web holding \"rust\":\n- r3 · Home page · https://rust-lang.org [web]"
    );
    assert_eq!(
        list(&d, json!({"contains": "zig"})).await,
        "No bookmark holding \"zig\"."
    );
    let queries = d.memory.queries();
    assert!(
        queries.iter().any(|q| q.conditions.len() == 2),
        "tag and contains in one AND"
    );
}

#[tokio::test]
async fn s3_14_list_says_when_more_match_than_it_shows() {
    let d = driver().await;
    for n in 0..3 {
        success(
            save(
                &d,
                json!({"url": format!("https://e.example/{n}"), "title": format!("Page {n}")}),
            )
            .await,
        );
    }
    let found = list(&d, json!({"limit": 2})).await;
    assert!(found.contains("- r1 · Page 0"), "{found}");
    assert!(found.contains("- r2 · Page 1"), "{found}");
    assert!(!found.contains("Page 2"), "{found}");
    assert!(found.ends_with("The first 2 are shown and more match: ask with a higher limit, or narrow it with `contains` or `tag`."), "{found}");
    let refused = invalid(
        d.invoke(d.call("list", &json!({"limit": 0})), "")
            .await
            .expect("answered"),
    );
    assert!(refused.contains("outside 1 to 200"), "{refused}");
}

#[tokio::test]
async fn s3_14_the_remove_prompt_shows_the_record_as_stored() {
    let d = driver().await;
    success(
        save(
            &d,
            json!({"url": "https://doc.rust-lang.org/book/", "title": "Rust book"}),
        )
        .await,
    );
    let prompt = d
        .render(d.call("remove", &json!({"id": "r1"})))
        .await
        .expect("rendered");
    assert_eq!(
        prompt.payload,
        "Remove this bookmark?\n\nid:    r1\nurl:   https://doc.rust-lang.org/book/\ntitle: Rust book\nnote:  (none)\ntag:   (none)\nsaved by @mira in ~research"
    );
    let (text, disclosure) = success(
        d.invoke(d.call("remove", &json!({"id": "r1"})), "decision")
            .await
            .expect("answered"),
    );
    assert!(text.starts_with("Removed:\nid:    r1"), "{text}");
    assert_eq!(disclosure.expect("disclosed").reference, "r1");
    assert!(stored(&d).is_empty());
}

#[tokio::test]
async fn s3_14_removing_an_unknown_id_names_the_way_on() {
    let d = driver().await;
    let prompt = d
        .render(d.call("remove", &json!({"id": "r9"})))
        .await
        .expect("rendered");
    assert_eq!(
        prompt.payload,
        "No bookmark has the id `r9`: approving removes nothing."
    );
    let refused = invalid(
        d.invoke(d.call("remove", &json!({"id": "r9"})), "decision")
            .await
            .expect("answered"),
    );
    assert_eq!(
        refused,
        "no bookmark has the id `r9`: bookmark::list shows each bookmark's id"
    );
}
