//! Approvals (§3.7, §5.4, §6.2, §6.4, §8.1): a gated call stops for a
//! person; the prompt is the agent's, shows the payload, and is decided by
//! a person in the channel through the signed decision route; the decision
//! reaches the model only as the call's result.

use collegium_control::callbacks::DECISION_ROUTE as DECISION;
use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{
    callback, calls, ended_turn, reply, store, tool_results, turn_requests, with_fixture,
    with_fixture_from,
};
use mattermost_wire::model::Post;
use serde_json::{Value, json};

fn write_call() -> model_sim::script::Scripted {
    calls(&[(
        "fixture__write",
        json!({"path": "notes/plan.txt", "content": "ship on Friday\u{202E}"}),
    )])
}

fn asked_tools(record: &std::path::Path) -> Vec<String> {
    fixture_toolset::asked(record)
        .iter()
        .map(|a| a["tool"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The prompt the agent posted, once it exists.
async fn prompt(h: &Harness, channel: &str, since: i64) -> Post {
    h.wait_post(channel, "mira", "Approval needed", since).await
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_an_approved_call_runs_once_with_its_decision_recorded() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model
        .sim
        .script("demo-model", vec![write_call(), reply("Written.")]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    assert!(
        prompt.message.contains("`fixture::write`"),
        "{}",
        prompt.message
    );
    assert!(
        prompt
            .message
            .contains("action 1 of 10 in this turn; asked by @ana: “write the plan down”")
    );
    assert!(
        prompt
            .message
            .contains("```text\nwrite notes/plan.txt:\nship on Friday\\u{202E}\n```"),
        "the plugin's own rendering, the hidden character shown (§3.14): {}",
        prompt.message
    );
    assert!(
        !prompt.message.contains("\"content\""),
        "the rendering, not the arguments: {}",
        prompt.message
    );
    assert_eq!(prompt.props["collegium_role"], "prompt");
    assert!(
        asked_tools(&record).is_empty(),
        "nothing runs before the decision"
    );
    let posts = h.posts(&dm).await;
    let status = posts
        .iter()
        .find(|p| p.props.get("collegium_role") == Some(&json!("status")))
        .expect("the status post opens while the turn waits");
    assert!(
        status.message.contains("🔐 _waiting on a decision since"),
        "{}",
        status.message
    );

    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written.", since).await;
    assert_eq!(
        asked_tools(&record),
        ["write"],
        "runs once, after the approval"
    );
    let decided = h.wait_edit(&prompt.id, "Approved by @ana").await;
    assert!(
        decided.attachments().is_empty(),
        "the decided prompt has no buttons"
    );
    let store = store(&h);
    let turn = ended_turn(&h, "mira", &dm).await;
    let call = store
        .turn_events(&turn.id)
        .expect("trace")
        .into_iter()
        .find(|e| e.kind.as_str() == "result" && e.tool.as_deref() == Some("fixture::write"))
        .and_then(|e| e.call_id)
        .expect("the write's result");
    let recorded = store
        .worker_call(&format!("{}/{call}", turn.id))
        .expect("query")
        .expect("dispatched");
    assert!(
        recorded.call.decision_id.is_some(),
        "the dispatch names its decision"
    );
    assert_eq!(
        recorded.disclosure.map(|d| d.body),
        Some("ship on Friday\u{202E}".to_string()),
        "what the write disclosed is kept with the call (§3.4, §8.3)"
    );
    let last = turn_requests(&h).pop().expect("completions");
    assert!(
        !last["messages"].to_string().contains("Approval needed"),
        "the prompt never enters the window"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_4_a_bare_denial_ends_the_turn_and_asks_how_to_proceed() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script("demo-model", vec![write_call()]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    h.click("ana", &prompt.id, "deny").await;
    let notice = h
        .wait_post(&dm, "mira", "How would you like me to proceed?", since)
        .await;
    assert!(
        notice.message.contains("@ana denied fixture::write"),
        "{}",
        notice.message
    );
    assert!(asked_tools(&record).is_empty(), "a denied call never runs");
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("denied"));
    assert!(
        store(&h).queued("mira", &dm).expect("queue").is_empty(),
        "a denial is a person's act: nothing is queued again"
    );
    h.wait_edit(&prompt.id, "Denied by @ana").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_denial_with_reason_is_the_calls_result_and_the_turn_continues() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![write_call(), reply("Understood, I will not write it.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    h.click("ana", &prompt.id, "reason").await;
    h.wait_dialog("ana").await;
    h.submit_dialog("ana", &dm, json!({"reason": "the plan is not final"}))
        .await;
    h.wait_post(&dm, "mira", "Understood", since).await;
    assert!(asked_tools(&record).is_empty());
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(
        results[0].contains("@ana denied it, and said: “the plan is not final”"),
        "{results:?}"
    );
    h.wait_edit(&prompt.id, "the plan is not final").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_4_forged_outsider_and_second_decisions_change_nothing() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana", "bo"]).await;
    h.model.sim.script(
        "demo-model",
        vec![write_call(), reply("Done after approval.")],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write the plan down").await;
    let prompt = prompt(&h, &square, since).await;
    assert!(
        prompt
            .message
            .contains("asked by @ana: “Mira write the plan down”"),
        "an agent's mention is stripped from the prompt: {}",
        prompt.message
    );
    let approval = h.decision_for_prompt(&prompt.id).await;
    let key = h
        .credentials()
        .command
        .expect("command")
        .token
        .into_exposed();
    let forge = |user: &str, signature: &str| {
        json!({"user_id": user, "channel_id": square, "post_id": prompt.id, "trigger_id": "t",
               "context": {"action": "approve", "approval": approval, "signature": signature}})
    };
    let (unsigned, _) = callback(&h, DECISION, &forge(&h.user("ana").await.id, "00")).await;
    assert_eq!(unsigned, 403, "a forged signature is refused");
    use collegium_control::approvals::sign::{button, sign};
    // A signature answers one button of one prompt (§6.4): the one a client
    // saw on "Deny with reason" does not approve.
    let reason = sign(&key, &button(&approval, "reason", None));
    let (replayed, _) = callback(&h, DECISION, &forge(&h.user("ana").await.id, &reason)).await;
    assert_eq!(
        replayed, 403,
        "a button's signature replayed as another's is refused"
    );
    let signature = sign(&key, &button(&approval, "approve", None));
    // Joining the team joins Town Square, as on a real server: the outsider
    // is on no team at all.
    let outsider = h.stranger("cy").await;
    let (_, answer) = callback(&h, DECISION, &forge(&outsider, &signature)).await;
    assert!(
        answer["ephemeral_text"]
            .as_str()
            .is_some_and(|t| t.contains("Only a person in this channel")),
        "{answer}"
    );
    let bot = h.user("theo").await.id;
    let (_, answer) = callback(&h, DECISION, &forge(&bot, &signature)).await;
    assert!(
        answer["ephemeral_text"]
            .as_str()
            .is_some_and(|t| t.contains("Only a person may decide")),
        "{answer}"
    );
    assert!(asked_tools(&record).is_empty(), "nothing was decided");

    h.click("bo", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Done after approval.", since)
        .await;
    assert_eq!(asked_tools(&record), ["write"]);
    // A click that raced the first (its buttons were still on screen) is
    // told the decision it lost to, and changes nothing.
    let mut late = forge(
        &h.user("ana").await.id,
        &sign(&key, &button(&approval, "deny", None)),
    );
    late["context"]["action"] = json!("deny");
    let (_, answer) = callback(&h, DECISION, &late).await;
    assert_eq!(
        answer["ephemeral_text"], "Already decided: approved by @bo.",
        "{answer}"
    );
    assert_eq!(asked_tools(&record), ["write"], "the call ran once");
}

fn read(key: &str, words: &str) -> model_sim::script::Scripted {
    model_sim::script::Scripted {
        text: Some(words.into()),
        ..calls(&[("fixture__read", json!({ "key": key }))])
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_3_a_spent_budget_asks_to_extend_and_an_approval_grants_it_again() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0\naction_budget = 2").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            read("a", "Reading a."),
            read("b", "Reading b."),
            read("c", "Reading c, the third."),
            reply("All three read."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read a, b and c").await;
    let prompt = h.wait_post(&dm, "mira", "More actions needed", since).await;
    assert!(
        prompt.message.contains("Mira has used 2 of 2 actions"),
        "{}",
        prompt.message
    );
    assert!(
        prompt.message.contains("`fixture::read` ×2"),
        "{}",
        prompt.message
    );
    assert!(
        prompt
            .message
            .contains("Its last words: “Reading c, the third.”"),
        "{}",
        prompt.message
    );
    assert_eq!(
        asked_tools(&record).len(),
        2,
        "the third waits for the person"
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "All three read.", since).await;
    assert_eq!(
        asked_tools(&record).len(),
        3,
        "the context was kept and the call ran"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s5_4_a_declined_extension_ends_the_turn_and_asks_how_to_proceed() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0\naction_budget = 2").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![read("a", ""), read("b", ""), read("c", "")],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read a, b and c").await;
    let prompt = h.wait_post(&dm, "mira", "More actions needed", since).await;
    assert!(
        prompt
            .message
            .contains("It wrote nothing beside its calls."),
        "{}",
        prompt.message
    );
    h.click("ana", &prompt.id, "deny").await;
    h.wait_post(&dm, "mira", "@ana did not extend my action budget", since)
        .await;
    assert_eq!(asked_tools(&record).len(), 2);
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("budget_exhausted"));
}

/// The plan `long_plan_prompt` asks for.
fn long_plan() -> String {
    "line of the plan\n".repeat(200)
}

/// Ana asks @mira in a DM to write a plan of 3,400 characters, far over a
/// lowered post limit; the DM, when she asked, and the approval prompt.
async fn long_plan_prompt(h: &Harness) -> (String, i64, Post) {
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let content = long_plan();
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "fixture__write",
                json!({"path": "plan.txt", "content": content}),
            )]),
            reply("Written whole."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the long plan").await;
    let prompt = prompt(h, &dm, since).await;
    (dm, since, prompt)
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_payload_over_the_post_limit_shows_a_prefix_and_attaches_the_whole() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(&["workspace", "fixture"]);
    let limit: Value = reqwest::Client::new()
        .put(format!("{}/_sim/settings", h.mattermost.url))
        .json(&json!({"max_post_size": 1000}))
        .send()
        .await
        .expect("settings")
        .json()
        .await
        .expect("json");
    assert!(!limit.is_null());
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let (dm, since, prompt) = long_plan_prompt(&h).await;
    let content = long_plan();
    assert!(prompt.message.chars().count() <= 1000);
    assert!(
        prompt
            .message
            .contains("the whole of it is attached as `fixture-write-payload.txt`"),
        "{}",
        prompt.message
    );
    assert_eq!(
        prompt.file_ids.len(),
        1,
        "the payload rides along as a file"
    );
    let file: mattermost_wire::model::FileInfo = h
        .admin
        .get(&format!("files/{}/info", prompt.file_ids[0]))
        .await
        .expect("file info");
    let payload = format!("write plan.txt:\n{content}");
    assert_eq!(file.name, "fixture-write-payload.txt");
    assert_eq!(
        usize::try_from(file.size).expect("size"),
        payload.len(),
        "the whole payload, as the plugin rendered it"
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written whole.", since).await;
    let asked = fixture_toolset::asked(&record);
    assert_eq!(
        asked[0]["arguments"]["content"].as_str(),
        Some(content.as_str()),
        "the tool gets the whole payload"
    );
}

/// §3.14, §6.2: where a plugin cannot render a gated call, the person reads
/// the exact arguments instead, told in the framework's words that the
/// rendering is unavailable; nothing the plugin said reaches the prompt.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_plugin_that_cannot_render_a_call_leaves_its_arguments_shown() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let path = format!("{}-plan.txt", fixture_toolset::UNRENDERABLE);
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "fixture__write",
                json!({"path": path, "content": "ship on Friday"}),
            )]),
            reply("Written."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    let arguments =
        serde_json::to_string_pretty(&json!({"path": path, "content": "ship on Friday"}))
            .expect("json");
    assert!(
        prompt.message.contains(&format!(
            "⚠ The plugin's own rendering of this call is unavailable (it answered with an error); its arguments are shown exactly as the tool will receive them.\n```json\n{arguments}\n```"
        )),
        "{}",
        prompt.message
    );
    assert!(
        !prompt
            .message
            .contains(fixture_toolset::UNRENDERABLE_BECAUSE),
        "the plugin's words stay out of the prompt: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written.", since).await;
    assert_eq!(asked_tools(&record), ["write"], "approved, it runs");
}

/// §5.3, §7.2: a call naming a tool the agent does not hold spends one
/// attempt, so the next prompt's count and the stored count agree on it.
#[tokio::test(flavor = "multi_thread")]
async fn s7_2_a_call_to_a_tool_not_held_spends_one_attempt() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("web__fetch", json!({"url": "https://example.com"}))]),
            write_call(),
            reply("Written."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    assert!(
        prompt.message.contains("action 2 of 10 in this turn"),
        "the misnamed call was one attempt: {}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written.", since).await;
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(store(&h).action_count(&turn.id).expect("query"), Some(2));
}

/// §8.2, §5.3, §4.5: the stored action count is the budget's own count —
/// a rejected post and a call denied before it ran count, a budget-exempt
/// tool does not — and so agrees with the prompt's "action N of M".
#[tokio::test(flavor = "multi_thread")]
async fn s8_2_the_stored_action_count_counts_what_the_budget_counts() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("*** --- ***"),
            calls(&[("builtins__now", json!({}))]),
            write_call(),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    assert!(
        prompt.message.contains("action 2 of 10 in this turn"),
        "{}",
        prompt.message
    );
    h.click("ana", &prompt.id, "deny").await;
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("denied"));
    assert!(asked_tools(&record).is_empty(), "the write never ran");
    assert_eq!(
        store(&h).action_count(&turn.id).expect("query"),
        Some(2),
        "the rejected post and the denied write; not builtins::now"
    );
}

/// §5.1, §5.3: a turn whose context is over its ceiling never parks a
/// person: the gated call is not run and the turn ends as context
/// exhausted, with no prompt posted.
#[tokio::test(flavor = "multi_thread")]
async fn s5_1_a_turn_over_its_ceiling_never_asks_a_person_first() {
    let (h, _daemon, record) =
        with_fixture("debounce_window_ms = 0\nturn_ceiling_tokens = 8000").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    let mut big = write_call();
    big.text = Some("a thought that goes on ".repeat(2_000));
    h.model.sim.script("demo-model", vec![big]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    h.wait_post(&dm, "mira", "against a ceiling of 8000", since)
        .await;
    let turn = ended_turn(&h, "mira", &dm).await;
    assert_eq!(turn.exit_kind.as_deref(), Some("context_ceiling"));
    assert!(
        !h.posts(&dm)
            .await
            .iter()
            .any(|p| p.message.contains("Approval needed")),
        "no person was asked"
    );
    assert!(asked_tools(&record).is_empty(), "nothing ran");
}

/// §3.7, §7.4: a colleague's request names the colleague and, beside it,
/// the person its chain descends from, quoting that person's words — never
/// the colleague's as though a person had said them.
#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_colleagues_request_quotes_the_person_its_chain_descends_from() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("@mira please write the plan down."),
            write_call(),
            reply("Written."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@theo have the plan written").await;
    let prompt = prompt(&h, &square, since).await;
    assert!(
        prompt.message.contains(
            "asked by the colleague Theo the Operator, working for @ana: “Theo the Operator have the plan written”"
        ),
        "{}",
        prompt.message
    );
    assert!(
        !prompt.message.contains("please write the plan down"),
        "{}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Written.", since).await;
}

/// §3.7, §5.3: after an extension the prompt's count stands against the
/// budget as extended, not the first grant.
#[tokio::test(flavor = "multi_thread")]
async fn s3_7_the_action_count_stays_true_after_an_extension() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0\naction_budget = 2").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![
            read("a", ""),
            read("b", ""),
            write_call(),
            reply("Written."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read a and b, then write").await;
    let extension = h.wait_post(&dm, "mira", "More actions needed", since).await;
    h.click("ana", &extension.id, "approve").await;
    let prompt = prompt(&h, &dm, since).await;
    assert!(
        prompt.message.contains("action 3 of 4 in this turn"),
        "{}",
        prompt.message
    );
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written.", since).await;
}

/// §8.1, §5.3: a declined extension is a person ending the turn, and the
/// closing line names them.
#[tokio::test(flavor = "multi_thread")]
async fn s8_1_the_closing_line_names_who_declined_an_extension() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0\naction_budget = 2").await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model.sim.script(
        "demo-model",
        vec![read("a", ""), read("b", ""), read("c", "")],
    );
    let since = now_ms() - 1;
    h.say("ana", &dm, "read a, b and c").await;
    let prompt = h.wait_post(&dm, "mira", "More actions needed", since).await;
    h.click("ana", &prompt.id, "deny").await;
    let status = e2e::scenario::status_post(&h, &dm).await;
    h.wait_edit(&status.id, "Budget extension declined by @ana after")
        .await;
}

/// §3.7, §6.2: the post limit is read when a prompt is cut to fit it, so a
/// limit an administrator lowered after boot still gets a bounded prefix
/// and the whole payload attached, not a prompt refused whole.
#[tokio::test(flavor = "multi_thread")]
async fn s6_2_a_post_limit_lowered_after_boot_bounds_the_approval_prompt() {
    let (h, _daemon, record) = with_fixture("debounce_window_ms = 0").await;
    let lowered: Value = reqwest::Client::new()
        .put(format!("{}/_sim/settings", h.mattermost.url))
        .json(&json!({"max_post_size": 1000}))
        .send()
        .await
        .expect("settings")
        .json()
        .await
        .expect("json");
    assert!(!lowered.is_null());
    let (dm, since, prompt) = long_plan_prompt(&h).await;
    assert!(prompt.message.chars().count() <= 1000);
    assert_eq!(prompt.file_ids.len(), 1, "{}", prompt.message);
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&dm, "mira", "Written whole.", since).await;
    assert_eq!(asked_tools(&record), ["write"]);
}

/// §3.7, A4: Mattermost gives up on an action whose answer is slow (its
/// outgoing-integration timeout) and hangs up, which drops the request in
/// the daemon. A decision recorded by then must still reach the turn
/// waiting on it, and the prompt lose its buttons, though no answer carried
/// the rewrite back. The `test-hooks` build holds the click in that window.
#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_click_mattermost_gave_up_on_still_reaches_its_turn() {
    let mut launcher = std::process::Command::new(e2e::binary("collegium"));
    launcher.env(collegium_control::callbacks::DECIDE_DELAY_MS, "3000");
    let (h, _daemon, record) = with_fixture_from("debounce_window_ms = 0", &[], launcher).await;
    h.person("ana", &[]).await;
    let dm = h.dm("ana", "mira").await;
    h.model
        .sim
        .script("demo-model", vec![write_call(), reply("Written.")]);
    let since = now_ms() - 1;
    h.say("ana", &dm, "write the plan down").await;
    let prompt = prompt(&h, &dm, since).await;
    h.sim_settings(json!({"outgoing_integration_requests_timeout_secs": 1}))
        .await;
    let answered = h.click("ana", &prompt.id, "approve").await;
    assert!(
        answered.get("update").is_none(),
        "Mattermost gave up before the daemon answered: {answered}"
    );
    h.wait_post(&dm, "mira", "Written.", since).await;
    assert_eq!(asked_tools(&record), ["write"], "the approval ran the call");
    let decided = h.wait_edit(&prompt.id, "Approved by @ana").await;
    assert!(
        decided.attachments().is_empty(),
        "the decided prompt has no buttons"
    );
}

/// §3.7: any person in the channel may decide, however many it holds.
/// Mattermost lists a channel's members 200 at a time; the boot's
/// reconcile read only the first page and forgot everyone after it, who
/// were then refused as not in the channel.
#[tokio::test(flavor = "multi_thread")]
async fn s3_7_a_person_past_the_first_page_of_members_decides() {
    let (h, daemon, record) = with_fixture("debounce_window_ms = 0").await;
    drop(daemon);
    h.sim_settings(json!({"max_users_per_team": 1000})).await;
    let mut crowd = Vec::new();
    for n in 0..205 {
        let name = format!("crowd{n:03}");
        crowd.push((h.person(&name, &["town-square"]).await, name));
    }
    // Members are listed in the order of their ids: the crowd's greatest
    // comes after at least 204 others, past the first page of 200.
    let (_, last) = crowd.into_iter().max().expect("a crowd");
    // The boot reconciles every channel's members from Mattermost.
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = h.channel("town-square").await.id;
    h.model
        .sim
        .script("demo-model", vec![write_call(), reply("Written.")]);
    let since = now_ms() - 1;
    h.say(&last, &square, "@mira write the plan down").await;
    let prompt = prompt(&h, &square, since).await;
    h.click(&last, &prompt.id, "approve").await;
    h.wait_edit(&prompt.id, &format!("Approved by @{last}"))
        .await;
    h.wait_post(&square, "mira", "Written.", since).await;
    assert_eq!(asked_tools(&record), ["write"]);
}
