//! The example plugin `bookmark`, built with the SDK, and the plugin `echo`,
//! written against the proto types alone, through the real daemon (§3.14,
//! §3.5, issue 22): each boots, is offered only to the agents granted it,
//! and answers calls over the wire.

use e2e::Harness;
use e2e::clearing::{confirm, eventually};
use e2e::people::now_ms;
use e2e::scenario::{
    calls, ended_turn, plugin_records, reply, square_with, store, tool_results, turn_requests,
};
use serde_json::{Value, json};

/// The tools a completion offered the model, by name.
fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

fn system(request: &Value) -> String {
    request["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// Grants @mira each `bookmark` tool by name, and its skill.
fn grant_mira_bookmark(h: &Harness) {
    grant_mira(
        h,
        "\"bookmark::save\", \"bookmark::list\", \"bookmark::remove\"",
    );
}

/// Grants @mira `grants` beside `workspace`, and the `bookmark` skill.
fn grant_mira(h: &Harness, grants: &str) {
    let config = std::fs::read_to_string(&h.config).expect("config");
    let config = config.replacen(
        "grants = [\"workspace\"]",
        &format!("grants = [\"workspace\", {grants}]\nskills = [\"bookmark::saving-bookmarks\"]"),
        1,
    );
    std::fs::write(&h.config, config).expect("write config");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_only_agents_granted_bookmark_are_offered_it_and_see_its_skill() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.install_bookmark_plugin();
    // The whole namespace: it holds the skill's tools though the plugin
    // describes them only after the configuration is checked (§3.5, §3.14).
    grant_mira(&h, "\"bookmark\"");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("agents are listening");
    let ready = seen
        .iter()
        .find(|v| v["message"] == "plugin ready")
        .unwrap_or_else(|| panic!("no plugin ready line in {seen:#?}"));
    assert_eq!(ready["plugin"], "bookmark");
    assert_eq!(ready["tools"], 3);
    h.person("ana", &[]).await;

    // @theo holds no bookmark tool: none is offered, and a call by name is
    // the unknown-tool result.
    let theo = h.dm("ana", "theo").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("bookmark__list", json!({}))]),
            reply("I keep no bookmarks."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &theo, "list the bookmarks").await;
    h.wait_post(&theo, "theo", "I keep no bookmarks.", since)
        .await;
    let requests = turn_requests(&h);
    assert_eq!(requests.len(), 2, "two completions of @theo's turn");
    assert!(
        !offered(&requests[0])
            .iter()
            .any(|t| t.starts_with("bookmark__")),
        "{:?}",
        offered(&requests[0])
    );
    assert!(!system(&requests[0]).contains("bookmark::saving-bookmarks"));
    let results = tool_results(&requests[1]);
    assert!(
        results[0].starts_with("You hold no tool named `bookmark__list`."),
        "{results:?}"
    );

    // @mira holds the tools and the skill: all three tools, and the
    // skill in her manifest.
    let mira = h.dm("ana", "mira").await;
    h.model
        .sim
        .script("demo-model", vec![reply("Ready to save.")]);
    let since = now_ms() - 1;
    h.say("ana", &mira, "hello").await;
    h.wait_post(&mira, "mira", "Ready to save.", since).await;
    let request = turn_requests(&h).pop().expect("mira's completion");
    let tools = offered(&request);
    for tool in ["bookmark__save", "bookmark__list", "bookmark__remove"] {
        assert!(tools.contains(&tool.to_string()), "{tool} in {tools:?}");
    }
    assert!(
        system(&request).contains(
            "- bookmark::saving-bookmarks: Save a link someone will want again as a bookmark, titled and tagged so it is found later."
        ),
        "{}",
        system(&request)
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_written_against_the_proto_alone_boots_and_answers() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.install_proto_plugin();
    h.grant_mira(&["workspace", "echo"]);
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    let seen = daemon.wait_for("agents are listening");
    let ready = seen
        .iter()
        .find(|v| v["message"] == "plugin ready")
        .unwrap_or_else(|| panic!("no plugin ready line in {seen:#?}"));
    assert_eq!(ready["plugin"], "echo");
    assert_eq!(ready["tools"], 2);
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("echo__shout", json!({"text": "hello"}))]),
            calls(&[("echo__stamp", json!({"text": "sealed"}))]),
            reply("Shouted and stamped."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "shout, then stamp").await;
    let prompt = h.wait_post(&dm, "mira", "Approval needed", since).await;
    assert!(
        prompt.message.contains("Stamp this text?\n\nsealed"),
        "the plugin's own rendering: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Shouted and stamped.", since)
        .await;
    let last = turn_requests(&h).pop().expect("completions");
    assert_eq!(tool_results(&last), vec!["HELLO", "[stamped] sealed"]);
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}

/// The bookmarks the store holds for the plugin, as JSON.
fn bookmarks(h: &Harness) -> Vec<(String, Value)> {
    plugin_records(h, "bookmark", "bookmarks")
}

/// §3.14, §8.5: approve a save and the record and its disclosure are in the
/// store and the trace; deny one and nothing is stored; `list` finds "RUST"
/// in "Rust book"; the records survive `/collegium clear`; a `remove`
/// prompt shows the stored title whatever the model wrote beside the call.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_bookmark_saves_lists_and_removes_through_the_daemons_storage() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.install_bookmark_plugin();
    grant_mira_bookmark(&h);
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;

    // Approved: stored, disclosed, traced.
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "bookmark__save",
                json!({"url": "https://doc.rust-lang.org/book/", "title": "Rust book", "tag": "rust"}),
            )]),
            reply("Saved it."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira save the Rust book").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    assert!(
        prompt.message.contains(
            "Save this bookmark?\n\nurl:   https://doc.rust-lang.org/book/\ntitle: Rust book\nnote:  (none)\ntag:   rust"
        ),
        "the exact fields: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Saved it.", since).await;
    let saved = bookmarks(&h);
    assert_eq!(saved.len(), 1, "{saved:?}");
    let (id, record) = &saved[0];
    assert_eq!(record["title"], "Rust book");
    assert_eq!(record["saved_by"], "mira");
    assert_eq!(record["channel"], "town-square");
    let turn = ended_turn(&h, "mira", &square).await;
    let call = store(&h)
        .turn_events(&turn.id)
        .expect("trace")
        .into_iter()
        .find(|e| e.kind.as_str() == "result" && e.tool.as_deref() == Some("bookmark::save"))
        .and_then(|e| e.call_id)
        .expect("the save's result in the trace");
    let recorded = store(&h)
        .worker_call(&format!("{}/{call}", turn.id))
        .expect("query")
        .expect("dispatched");
    let disclosure = recorded.disclosure.expect("the save disclosed its record");
    assert!(
        disclosure.body.contains(&format!("id:    {id}"))
            && disclosure.body.contains("title: Rust book"),
        "{}",
        disclosure.body
    );

    // Denied: nothing stored.
    h.model.sim.script(
        "demo-model",
        vec![calls(&[(
            "bookmark__save",
            json!({"url": "https://go.dev/tour/", "title": "Go tour"}),
        )])],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira save the Go tour").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    h.click("ana", &prompt.id, "deny").await;
    h.wait_post(&square, "mira", "How would you like me to proceed?", since)
        .await;
    assert_eq!(bookmarks(&h).len(), 1, "a denied save stores nothing");

    // The query grammar: any case.
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("bookmark__list", json!({"contains": "RUST"}))]),
            reply("Listed."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira which Rust bookmarks?").await;
    h.wait_post(&square, "mira", "Listed.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert_eq!(
        results.last().map(String::as_str),
        Some(
            format!(
                "Bookmarks holding \"RUST\":\n- {id} · Rust book · https://doc.rust-lang.org/book/ [rust]"
            )
            .as_str()
        ),
        "{results:?}"
    );

    // A clear keeps plugin records (§8.5).
    let since = now_ms() - 1;
    confirm(&h, "ana", &square, "/collegium clear").await;
    h.wait_post(&square, "collegium", "@ana's command", since)
        .await;
    eventually("the channel is cleared", async || {
        store(&h).cleared_before(&square).expect("read").is_some()
    })
    .await;
    assert_eq!(bookmarks(&h).len(), 1, "records survive /collegium clear");

    // The remove prompt reads the record as stored, whatever the model
    // wrote beside the call.
    let mut remove = calls(&[("bookmark__remove", json!({"id": id}))]);
    remove.text = Some("Removing the Go tour bookmark.".into());
    h.model
        .sim
        .script("demo-model", vec![remove, reply("Removed.")]);
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira remove it").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    assert!(
        prompt.message.contains(&format!(
            "Remove this bookmark?\n\nid:    {id}\nurl:   https://doc.rust-lang.org/book/\ntitle: Rust book"
        )),
        "the stored record: {}",
        prompt.message
    );
    assert!(
        !prompt.message.contains("Go tour"),
        "not the model's words: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Removed.", since).await;
    assert!(bookmarks(&h).is_empty());
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}

/// §3.5, §3.14: a whole plugin namespace holds a skill's tools while the
/// configuration is checked, before the plugin has described them; once it
/// has, a skill naming a tool it does not serve is refused, naming the
/// agent, the skill and the tool.
#[tokio::test(flavor = "multi_thread")]
async fn s3_5_a_skill_naming_a_tool_its_plugin_does_not_serve_is_refused_once_it_has_described_itself()
 {
    let h = Harness::start().await;
    h.provision().await.expect("provisioned");
    let dir = h.install_bookmark_plugin();
    let skill = dir.join("skills/saving-bookmarks/SKILL.md");
    let text = std::fs::read_to_string(&skill).expect("SKILL.md");
    let tools = "tools: [bookmark::save, bookmark::list]";
    assert!(text.contains(tools), "{text}");
    std::fs::write(
        &skill,
        text.replace(tools, "tools: [bookmark::save, bookmark::archive]"),
    )
    .expect("write SKILL.md");
    grant_mira(&h, "\"bookmark\"");
    let out = std::process::Command::new(e2e::binary("collegium"))
        .args(["config", "check"])
        .arg(&h.config)
        .output()
        .expect("collegium config check");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{said}");
    assert!(
        said.contains("(mira): the skill `")
            && said
                .contains("calls `bookmark::archive`, which the plugin `bookmark` does not serve"),
        "{said}"
    );
}
