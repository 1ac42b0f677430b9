//! The browser client in headless system Chromium (`browser/click-through.mjs`,
//! Playwright driving `/usr/bin/chromium`): a person signs in, posts, clicks an
//! interactive button, fills and submits the dialog the integration opens, and
//! sees the integration's rewrite of the post. The integration is a real HTTP
//! server in this test, so the click and the submission cross the wire as
//! they do for Collegium's daemon. A screenshot is saved under
//! `tests/output/browser/`.

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Value, json};
use support::{Client, allow_integrations, bot, first_admin, id, person, team_and_channel};

#[derive(Clone)]
struct Integration {
    sim: Client,
    bot: Client,
    url: String,
    calls: Arc<Mutex<Vec<(String, Value)>>>,
}

/// A click opens the reason dialog with the trigger id, inside the handler,
/// before the trigger id can expire.
async fn on_click(State(i): State<Integration>, Json(body): Json<Value>) -> Json<Value> {
    i.calls
        .lock()
        .expect("lock")
        .push(("click".into(), body.clone()));
    let opened = i
        .sim
        .post(
            "actions/dialogs/open",
            json!({
                "trigger_id": body["trigger_id"],
                "url": format!("{}/dialog", i.url),
                "dialog": {
                    "callback_id": "deny-reason",
                    "title": "Deny with reason",
                    "elements": [{"display_name": "Reason", "name": "reason", "type": "textarea"}],
                    "submit_label": "Deny",
                    "notify_on_cancel": true,
                    "state": body["post_id"],
                }
            }),
        )
        .await;
    assert_eq!(opened.status, 200, "dialogs/open: {}", opened.body);
    Json(json!({}))
}

/// The submission rewrites the prompt into its terminal state.
async fn on_dialog(State(i): State<Integration>, Json(body): Json<Value>) -> Json<Value> {
    i.calls
        .lock()
        .expect("lock")
        .push(("dialog".into(), body.clone()));
    let post_id = body["state"].as_str().unwrap_or_default().to_string();
    let reason = body["submission"]["reason"].as_str().unwrap_or_default();
    i.bot
        .put(
            &format!("posts/{post_id}/patch"),
            json!({"message": format!("Denied by ada: {reason}"), "props": {"attachments": []}}),
        )
        .await
        .expect(200);
    Json(json!({}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_person_signs_in_posts_clicks_a_button_and_submits_a_dialog_in_chromium() {
    let running = support::start().await;
    allow_integrations(&running.url).await;
    let (admin, _) = first_admin(&running.url).await;
    let (_, ada) = person(&running.url, "ada").await;
    let (approver, approver_user) = bot(&admin, "approver").await;
    let (_, channel) =
        team_and_channel(&admin, "demo", "deploys", "O", &[&ada, &approver_user]).await;
    let channel_id = id(&channel);

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let integration = Integration {
        sim: Client::anonymous(&running.url),
        bot: approver.clone(),
        url: format!("http://{}", listener.local_addr().expect("addr")),
        calls: Arc::default(),
    };
    let app = axum::Router::new()
        .route("/click", post(on_click))
        .route("/dialog", post(on_dialog))
        .with_state(integration.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });

    // The approver answers the person's post with a button, as an approval
    // prompt would.
    let prompt = {
        let sim = Client::anonymous(&running.url);
        let approver = approver.clone();
        let click_url = format!("{}/click", integration.url);
        let channel_id = channel_id.clone();
        tokio::spawn(async move {
            sim.post("/_sim/wait", json!({"kind": "post", "channel_id": channel_id, "user": "ada", "contains": "please deploy", "timeout_ms": 60000}))
                .await
                .expect(200);
            approver
                .post(
                    "posts",
                    json!({
                        "channel_id": channel_id,
                        "message": "Deploy requested. Decide below.",
                        "props": {"attachments": [{
                            "text": "Deploy the release to production?",
                            "actions": [{"id": "reason", "name": "Deny with reason", "integration": {"url": click_url, "context": {"approval": "a1"}}}]
                        }]}
                    }),
                )
                .await
                .expect(201)
        })
    };

    let browser_dir = Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("browser");
    assert!(
        browser_dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run tests/setup.sh"
    );
    let output_dir = Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("../output/browser");
    std::fs::create_dir_all(&output_dir).expect("output dir");
    let screenshot = output_dir.join("click-through.png");
    let _ = std::fs::remove_file(&screenshot);
    let run = tokio::process::Command::new("node")
        .current_dir(&browser_dir)
        .arg("click-through.mjs")
        .args([
            "--url",
            &running.url,
            "--username",
            "ada",
            "--password",
            support::PERSON_PASSWORD,
        ])
        .args([
            "--channel",
            "deploys",
            "--message",
            "please deploy",
            "--action",
            "reason",
        ])
        .args([
            "--dialog-field",
            "reason",
            "--dialog-value",
            "not on a Friday",
        ])
        .args(["--expect-text", "Denied by ada: not on a Friday"])
        .arg("--screenshot")
        .arg(&screenshot)
        .output()
        .await
        .expect("run node");
    assert!(
        run.status.success(),
        "the browser run failed:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(std::fs::metadata(&screenshot).expect("screenshot").len() > 1000);

    let prompt = prompt.await.expect("prompt");
    let calls = integration.calls.lock().expect("lock").clone();
    let ada_id = id(&ada);
    let (_, click) = calls
        .iter()
        .find(|(kind, _)| kind == "click")
        .expect("a click reached the integration");
    assert_eq!(click["user_id"], ada_id.as_str());
    assert_eq!(click["user_name"], "ada");
    assert_eq!(click["post_id"], prompt["id"]);
    assert_eq!(click["context"], json!({"approval": "a1"}));
    let (_, dialog) = calls
        .iter()
        .find(|(kind, _)| kind == "dialog")
        .expect("the dialog was submitted");
    assert_eq!(dialog["type"], "dialog_submission");
    assert_eq!(dialog["user_id"], ada_id.as_str());
    assert_eq!(dialog["callback_id"], "deny-reason");
    assert_eq!(dialog["submission"]["reason"], "not on a Friday");
    assert_eq!(dialog["cancelled"], false);
    let post = admin
        .get(&format!("posts/{}", id(&prompt)))
        .await
        .expect(200);
    assert_eq!(post["message"], "Denied by ada: not on a Friday");
    assert_eq!(
        post["props"]["attachments"],
        json!([]),
        "the buttons are gone"
    );
}
