//! Conformance: integrations — slash commands (contract §A.9, §D), interactive
//! buttons (§A.10, §C.1–§C.3), dialogs (§C.4) and the private-address guard
//! (§C.6), §F.1 items 18–22. Each test runs its integration as a real HTTP
//! server on 127.0.0.1.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::{Client, Integration, Reply, Socket, World, assert_id, clock, id, named, settings};

/// A team, a channel, and people in both, with the admin as team admin.
struct Scene {
    world: World,
    team: Value,
    channel: Value,
    ada: Client,
    ada_user: Value,
    bea: Client,
    bea_user: Value,
}

async fn scene() -> Scene {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let team = world.team("acme").await;
    let channel = world.channel(&team, "general", "O").await;
    world
        .members(&team, &channel, &[&ada_user, &bea_user])
        .await;
    Scene {
        world,
        team,
        channel,
        ada,
        ada_user,
        bea,
        bea_user,
    }
}

fn command_body(team: &Value, trigger: &str, url: &str) -> Value {
    json!({
        "team_id": id(team), "trigger": trigger, "url": url, "method": "P",
        "display_name": "Agents", "description": "Talk to agents",
        "auto_complete": true, "auto_complete_desc": "Talk to agents",
        "auto_complete_hint": "[what]", "username": "", "icon_url": "",
        "creator_id": "aaaaaaaaaaaaaaaaaaaaaaaaaa", "token": "forgedtokenxxxxxxxxxxxxxxx"
    })
}

async fn register(scene: &Scene, trigger: &str, url: &str) -> Value {
    scene
        .world
        .admin
        .post("commands", command_body(&scene.team, trigger, url))
        .await
        .expect(201)
}

async fn execute(client: &Client, scene: &Scene, command: &str) -> support::Answer {
    client
        .post(
            "commands/execute",
            json!({"command": command, "channel_id": id(&scene.channel), "team_id": id(&scene.team)}),
        )
        .await
}

/// A post by the admin carrying buttons whose integration is `url`.
async fn prompt(scene: &Scene, url: &str) -> Value {
    scene
        .world
        .admin
        .post(
            "posts",
            json!({
                "channel_id": id(&scene.channel),
                "message": "Deploy?",
                "props": {"attachments": [{"text": "Decide", "actions": [
                    {"id": "approve", "name": "Approve", "style": "primary",
                     "integration": {"url": url, "context": {"action": "approve", "approvalId": "a42"}}},
                    {"id": "deny", "name": "Deny", "integration": {"url": url, "context": {"action": "deny"}}}
                ]}]}
            }),
        )
        .await
        .expect(201)
}

async fn click(client: &Client, post: &Value, action: &str) -> support::Answer {
    client
        .post(&format!("posts/{}/actions/{action}", id(post)), json!({}))
        .await
}

fn form_keys(form: &[(String, String)]) -> BTreeSet<String> {
    form.iter().map(|(k, _)| k.clone()).collect()
}

fn field<'a>(form: &'a [(String, String)], key: &str) -> &'a str {
    form.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {key} in {form:?}"))
}

/// What the simulator recorded of its calls to integrations.
async fn outgoing(world: &World) -> Vec<Value> {
    world
        .anonymous()
        .get("/_sim/outgoing")
        .await
        .expect(200)
        .as_array()
        .expect("records")
        .clone()
}

// ---- slash command registration -------------------------------------------

#[tokio::test]
async fn registration_answers_201_with_a_server_token_and_the_caller_as_creator() {
    let scene = scene().await;
    let command = register(&scene, "Agents", "http://127.0.0.1:9/cmd").await;
    assert_id(&command["id"]);
    assert_id(&command["token"]);
    assert_ne!(command["token"], "forgedtokenxxxxxxxxxxxxxxx");
    assert_eq!(command["creator_id"], scene.world.admin_user["id"]);
    assert_eq!(command["trigger"], "agents", "triggers are lowercased");
    assert_eq!(command["team_id"], scene.team["id"]);
    assert_eq!(command["url"], "http://127.0.0.1:9/cmd");
    assert_eq!(command["method"], "P");
    assert_eq!(command["auto_complete"], true);
    assert_eq!(command["auto_complete_desc"], "Talk to agents");
    assert_eq!(command["auto_complete_hint"], "[what]");
    assert_eq!(command["display_name"], "Agents");
    assert_eq!(command["description"], "Talk to agents");
    assert_eq!(command["delete_at"], 0);
    // Managing commands is for team and system admins.
    scene
        .ada
        .post(
            "commands",
            command_body(&scene.team, "mine", "http://127.0.0.1:9/x"),
        )
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn registration_refuses_taken_and_built_in_triggers_and_invalid_fields() {
    let scene = scene().await;
    register(&scene, "agents", "http://127.0.0.1:9/cmd").await;
    let try_register = |body: Value| {
        let admin = scene.world.admin.clone();
        async move { admin.post("commands", body).await }
    };
    for trigger in ["agents", "AGENTS", "echo", "join", "shrug"] {
        try_register(command_body(&scene.team, trigger, "http://127.0.0.1:9/cmd"))
            .await
            .expect_error(400, "api.command.duplicate_trigger.app_error");
    }
    try_register(command_body(
        &scene.team,
        "/slash",
        "http://127.0.0.1:9/cmd",
    ))
    .await
    .expect_error(400, "model.command.is_valid.trigger.app_error");
    try_register(command_body(
        &scene.team,
        "two words",
        "http://127.0.0.1:9/cmd",
    ))
    .await
    .expect_error(400, "model.command.is_valid.trigger.app_error");
    try_register(command_body(&scene.team, "ftp", "ftp://127.0.0.1/cmd"))
        .await
        .expect_error(400, "model.command.is_valid.url.app_error");
    let mut bad_method = command_body(&scene.team, "method", "http://127.0.0.1:9/cmd");
    bad_method["method"] = json!("X");
    try_register(bad_method)
        .await
        .expect_error(400, "model.command.is_valid.method.app_error");
}

#[tokio::test]
async fn updates_keep_token_creator_and_create_at_and_refuse_a_team_change() {
    let scene = scene().await;
    let other_team = scene.world.team("other").await;
    let command = register(&scene, "agents", "http://127.0.0.1:9/cmd").await;
    let path = format!("commands/{}", id(&command));

    let listed = scene
        .world
        .admin
        .get(&format!(
            "commands?team_id={}&custom_only=true",
            id(&scene.team)
        ))
        .await
        .expect(200);
    assert_eq!(
        listed,
        json!([command.clone()]),
        "tokens and creators are listed"
    );

    let mut changed = command.clone();
    changed["description"] = json!("Changed");
    changed["token"] = json!("forgedtokenxxxxxxxxxxxxxxx");
    changed["creator_id"] = json!("aaaaaaaaaaaaaaaaaaaaaaaaaa");
    changed["create_at"] = json!(1);
    let updated = scene.world.admin.put(&path, changed).await.expect(200);
    assert_eq!(updated["description"], "Changed");
    assert_eq!(updated["token"], command["token"]);
    assert_eq!(updated["creator_id"], command["creator_id"]);
    assert_eq!(updated["create_at"], command["create_at"]);

    let mut moved = command.clone();
    moved["team_id"] = other_team["id"].clone();
    scene
        .world
        .admin
        .put(&path, moved)
        .await
        .expect_error(400, "api.command.team_mismatch.app_error");
    let mut wrong_id = command.clone();
    wrong_id["id"] = json!("aaaaaaaaaaaaaaaaaaaaaaaaaa");
    scene
        .world
        .admin
        .put(&path, wrong_id)
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");

    let deleted = scene.world.admin.delete(&path).await.expect(200);
    assert_eq!(deleted, json!({"status": "OK"}));
    let listed = scene
        .world
        .admin
        .get(&format!(
            "commands?team_id={}&custom_only=true",
            id(&scene.team)
        ))
        .await
        .expect(200);
    assert_eq!(listed, json!([]));
}

#[tokio::test]
async fn autocomplete_lists_the_teams_commands_with_tokens_blanked() {
    let scene = scene().await;
    let command = register(&scene, "agents", "http://127.0.0.1:9/cmd").await;
    let listed = scene
        .ada
        .get(&format!("teams/{}/commands/autocomplete", id(&scene.team)))
        .await
        .expect(200);
    let listed = listed.as_array().expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["id"], command["id"]);
    assert_eq!(listed[0]["trigger"], "agents");
    assert_eq!(listed[0]["token"], "");
    assert_eq!(listed[0]["auto_complete_hint"], "[what]");
}

#[tokio::test]
async fn commands_are_501_while_disabled() {
    let scene = scene().await;
    let integration = Integration::start().await;
    register(&scene, "agents", &integration.at("/cmd")).await;
    scene
        .world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableCommands": false}}),
        )
        .await
        .expect(200);
    scene
        .world
        .admin
        .post(
            "commands",
            command_body(&scene.team, "other", "http://127.0.0.1:9/x"),
        )
        .await
        .expect_error(501, "api.command.disabled.app_error");
    execute(&scene.ada, &scene, "/agents hi")
        .await
        .expect_error(501, "api.command.disabled.app_error");
    assert!(integration.requests().is_empty());
}

// ---- slash command execution ---------------------------------------------

#[tokio::test]
async fn execution_posts_the_d2_fields_as_a_form_with_the_command_token() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/cmd", Reply::json(json!({"text": "on it"})));
    let command = register(&scene, "agents", &integration.at("/cmd")).await;
    let token = command["token"].as_str().expect("token");

    let answer = execute(&scene.ada, &scene, "/Agents status @bea ~general now")
        .await
        .expect(200);
    assert_eq!(answer["text"], "on it");

    let request = integration.single();
    assert_eq!(request.method, "POST");
    assert_eq!(
        request.header("authorization").as_deref(),
        Some(format!("Token {token}").as_str())
    );
    assert_eq!(
        request.header("content-type").as_deref(),
        Some("application/x-www-form-urlencoded")
    );
    assert_eq!(
        request.header("accept").as_deref(),
        Some("application/json")
    );
    let form = request.form();
    let expected: BTreeSet<String> = [
        "token",
        "team_id",
        "team_domain",
        "channel_id",
        "channel_name",
        "user_id",
        "user_name",
        "command",
        "text",
        "trigger_id",
        "response_url",
        "user_mentions",
        "user_mentions_ids",
        "channel_mentions",
        "channel_mentions_ids",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(form_keys(&form), expected);
    assert_eq!(field(&form, "token"), token);
    assert_eq!(field(&form, "team_id"), id(&scene.team));
    assert_eq!(field(&form, "team_domain"), "acme");
    assert_eq!(field(&form, "channel_id"), id(&scene.channel));
    assert_eq!(field(&form, "channel_name"), "general");
    assert_eq!(field(&form, "user_id"), id(&scene.ada_user));
    assert_eq!(field(&form, "user_name"), "ada");
    assert_eq!(field(&form, "command"), "/agents");
    assert_eq!(field(&form, "text"), "status @bea ~general now");
    assert_eq!(field(&form, "user_mentions"), "bea");
    assert_eq!(field(&form, "user_mentions_ids"), id(&scene.bea_user));
    assert_eq!(field(&form, "channel_mentions"), "general");
    assert_eq!(field(&form, "channel_mentions_ids"), id(&scene.channel));
    assert!(!field(&form, "trigger_id").is_empty());
    let response_url = field(&form, "response_url");
    let hook = response_url
        .strip_prefix(&format!("{}/hooks/commands/", scene.world.base))
        .unwrap_or_else(|| panic!("response_url {response_url}"));
    assert_id(&json!(hook));

    // Without mentions, the mention fields are absent.
    execute(&scene.ada, &scene, "/agents plain")
        .await
        .expect(200);
    let form = integration.requests()[1].form();
    assert!(!form_keys(&form).contains("user_mentions"), "{form:?}");
    assert_eq!(field(&form, "text"), "plain");
}

#[tokio::test]
async fn method_g_sends_the_same_fields_as_a_query_string() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let mut body = command_body(&scene.team, "agents", &integration.at("/cmd"));
    body["method"] = json!("G");
    let command = scene.world.admin.post("commands", body).await.expect(201);
    execute(&scene.ada, &scene, "/agents hi").await.expect(200);
    let request = integration.single();
    assert_eq!(request.method, "GET");
    let form = request.form();
    assert_eq!(
        field(&form, "token"),
        command["token"].as_str().expect("token")
    );
    assert_eq!(field(&form, "text"), "hi");
    assert_eq!(
        request.header("authorization").as_deref(),
        Some(format!("Token {}", command["token"].as_str().expect("token")).as_str())
    );
}

#[tokio::test]
async fn an_ephemeral_answer_reaches_only_the_invoker_and_is_not_stored() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply(
        "/cmd",
        Reply::json(json!({"response_type": "ephemeral", "text": "just you"})),
    );
    register(&scene, "agents", &integration.at("/cmd")).await;
    let (mut ada_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;

    execute(&scene.ada, &scene, "/agents hi").await.expect(200);
    let frames = ada_socket.drain_events().await;
    let ephemeral = named(&frames, "ephemeral_message");
    assert_eq!(ephemeral.len(), 1, "{frames:?}");
    assert!(named(&frames, "posted").is_empty());
    let post = Socket::inner(ephemeral[0], "post");
    assert_eq!(post["message"], "just you");
    assert_eq!(post["type"], "system_ephemeral");
    assert_eq!(post["user_id"], scene.ada_user["id"]);
    assert_eq!(post["channel_id"], scene.channel["id"]);
    assert_eq!(post["props"]["from_webhook"], "true");
    assert!(bea_socket.drain_events().await.is_empty());
    let list = scene
        .ada
        .get(&format!("channels/{}/posts", id(&scene.channel)))
        .await
        .expect(200);
    assert!(!list.to_string().contains("just you"));
}

#[tokio::test]
async fn an_in_channel_answer_is_a_post_by_the_invoker_marked_from_webhook() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply(
        "/cmd",
        Reply::json(json!({"response_type": "in_channel", "text": "for all", "username": "robot"})),
    );
    register(&scene, "agents", &integration.at("/cmd")).await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;

    execute(&scene.ada, &scene, "/agents hi").await.expect(200);
    let frames = bea_socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert_eq!(posted.len(), 1, "{frames:?}");
    let post = Socket::inner(posted[0], "post");
    assert_eq!(post["message"], "for all");
    assert_eq!(
        post["user_id"], scene.ada_user["id"],
        "the invoker is the author"
    );
    assert_eq!(post["props"]["from_webhook"], "true");
    assert!(
        post["props"].get("override_username").is_none(),
        "overrides are off"
    );
    assert_eq!(posted[0]["data"]["sender_name"], "@ada");

    scene
        .world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnablePostUsernameOverride": true}}),
        )
        .await
        .expect(200);
    execute(&scene.ada, &scene, "/agents again")
        .await
        .expect(200);
    let frames = bea_socket.drain_events().await;
    let post = Socket::inner(named(&frames, "posted")[0], "post");
    assert_eq!(post["props"]["override_username"], "robot");
}

#[tokio::test]
async fn an_in_channel_answer_in_a_dm_mentions_both_members_the_invoker_included() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply(
        "/cmd",
        Reply::json(json!({"response_type": "in_channel", "text": "status"})),
    );
    register(&scene, "agents", &integration.at("/cmd")).await;
    let dm = scene
        .ada
        .post(
            "channels/direct",
            json!([id(&scene.ada_user), id(&scene.bea_user)]),
        )
        .await
        .expect(201);
    let (mut ada_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;
    scene
        .ada
        .post(
            "commands/execute",
            json!({"command": "/agents", "channel_id": id(&dm), "team_id": id(&scene.team)}),
        )
        .await
        .expect(200);
    for (socket, user) in [
        (&mut ada_socket, &scene.ada_user),
        (&mut bea_socket, &scene.bea_user),
    ] {
        let frames = socket.drain_events().await;
        let posted = named(&frames, "posted");
        assert_eq!(posted.len(), 1, "{frames:?}");
        assert_eq!(Socket::inner(posted[0], "mentions"), json!([id(user)]));
    }
}

#[tokio::test]
async fn a_plain_text_answer_is_taken_whole_as_an_ephemeral_text() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/cmd", Reply::text("{\"text\": \"not parsed\"}"));
    register(&scene, "agents", &integration.at("/cmd")).await;
    let (mut socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let answer = execute(&scene.ada, &scene, "/agents hi").await.expect(200);
    assert_eq!(answer["text"], "{\"text\": \"not parsed\"}");
    let frames = socket.drain_events().await;
    let post = Socket::inner(named(&frames, "ephemeral_message")[0], "post");
    assert_eq!(post["message"], "{\"text\": \"not parsed\"}");
}

#[tokio::test]
async fn unknown_triggers_are_404_and_failing_integrations_500() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/fail", Reply::status(503));
    register(&scene, "fails", &integration.at("/fail")).await;
    register(&scene, "gone", "http://127.0.0.1:1/closed").await;

    execute(&scene.ada, &scene, "/nosuch")
        .await
        .expect_error(404, "api.command.execute_command.not_found.app_error");
    execute(&scene.ada, &scene, "no slash")
        .await
        .expect_error(400, "api.command.execute_command.start.app_error");
    execute(&scene.ada, &scene, "/fails now")
        .await
        .expect_error(500, "api.command.execute_command.failed_resp.app_error");
    execute(&scene.ada, &scene, "/gone now")
        .await
        .expect_error(500, "api.command.execute_command.failed.app_error");
    // A person outside the channel may not run commands in it.
    let (carl, carl_user) = scene.world.person("carl").await;
    scene.world.add_to_team(&scene.team, &carl_user).await;
    let private = scene.world.channel(&scene.team, "secret", "P").await;
    carl.post(
        "commands/execute",
        json!({"command": "/fails", "channel_id": id(&private), "team_id": id(&scene.team)}),
    )
    .await
    .expect_error(403, "api.context.permissions.app_error");
}

// ---- interactive buttons --------------------------------------------------

#[tokio::test]
async fn a_click_sends_exactly_the_c2_fields_with_no_authentication() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let post = prompt(&scene, &integration.at("/click")).await;

    let answer = click(&scene.ada, &post, "approve").await.expect(200);
    assert_eq!(answer["status"], "OK");
    let trigger_id = answer["trigger_id"].as_str().expect("trigger id");
    assert!(!trigger_id.is_empty());

    let request = integration.single();
    assert_eq!(request.method, "POST");
    assert_eq!(request.path, "/click");
    assert!(
        request.header("authorization").is_none(),
        "clicks are never signed"
    );
    assert!(
        request
            .header("content-type")
            .is_some_and(|v| v.starts_with("application/json")),
        "{request:?}"
    );
    assert_eq!(
        request.header("accept").as_deref(),
        Some("application/json")
    );
    let body = request.json();
    assert_eq!(
        body,
        json!({
            "user_id": id(&scene.ada_user), "user_name": "ada",
            "channel_id": id(&scene.channel), "channel_name": "general",
            "team_id": id(&scene.team), "team_domain": "acme",
            "post_id": id(&post), "trigger_id": trigger_id,
            "type": "button", "data_source": "",
            "context": {"action": "approve", "approvalId": "a42"}
        })
    );
}

#[tokio::test]
async fn an_update_without_props_keeps_the_buttons_and_with_props_replaces_them() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let post = prompt(&scene, &integration.at("/click")).await;
    scene
        .world
        .admin
        .post(&format!("posts/{}/pin", id(&post)), json!({}))
        .await
        .expect(200);
    let (mut socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;

    integration.reply(
        "/click",
        Reply::json(json!({"update": {"message": "Approved by ada"}})),
    );
    click(&scene.ada, &post, "approve").await.expect(200);
    let now = scene
        .ada
        .get(&format!("posts/{}", id(&post)))
        .await
        .expect(200);
    assert_eq!(now["message"], "Approved by ada");
    assert_eq!(
        now["props"]["attachments"], post["props"]["attachments"],
        "absent props keep the buttons"
    );
    assert_eq!(now["is_pinned"], true, "an update keeps the pin");
    assert!(now["edit_at"].as_i64().expect("edit_at") > 0);
    let frames = socket.drain_events().await;
    let edited = named(&frames, "post_edited");
    assert_eq!(edited.len(), 1, "{frames:?}");
    assert_eq!(
        Socket::inner(edited[0], "post")["message"],
        "Approved by ada"
    );
    // The kept buttons still work: their integration was kept with them.
    integration.reply(
        "/click",
        Reply::json(json!({"update": {"message": "Closed", "props": {"attachments": []}}})),
    );
    click(&scene.bea, &post, "deny").await.expect(200);
    let now = scene
        .ada
        .get(&format!("posts/{}", id(&post)))
        .await
        .expect(200);
    assert_eq!(now["message"], "Closed");
    assert_eq!(
        now["props"],
        json!({"attachments": []}),
        "present props replace them"
    );
    click(&scene.bea, &post, "deny")
        .await
        .expect_error(404, "api.post.do_action.action_id.app_error");
}

#[tokio::test]
async fn ephemeral_text_goes_to_the_clicker_alone_threaded_under_the_post() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply(
        "/click",
        Reply::json(json!({"ephemeral_text": "Already decided"})),
    );
    let post = prompt(&scene, &integration.at("/click")).await;
    let (mut ada_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;

    click(&scene.ada, &post, "approve").await.expect(200);
    let frames = ada_socket.drain_events().await;
    let ephemeral = named(&frames, "ephemeral_message");
    assert_eq!(ephemeral.len(), 1, "{frames:?}");
    let notice = Socket::inner(ephemeral[0], "post");
    assert_eq!(notice["message"], "Already decided");
    assert_eq!(notice["type"], "system_ephemeral");
    assert_eq!(notice["user_id"], scene.ada_user["id"]);
    assert_eq!(notice["channel_id"], scene.channel["id"]);
    assert_eq!(
        notice["root_id"], post["id"],
        "threaded under the clicked root"
    );
    assert!(bea_socket.drain_events().await.is_empty());
    let now = scene
        .ada
        .get(&format!("posts/{}", id(&post)))
        .await
        .expect(200);
    assert_eq!(now["message"], "Deploy?", "no update, no change");
}

#[tokio::test]
async fn a_failing_unreachable_or_garbled_integration_makes_the_click_400() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/down", Reply::status(500));
    integration.reply("/garbled", Reply::text("this is not json"));
    for url in [
        integration.at("/down"),
        integration.at("/garbled"),
        "http://127.0.0.1:1/closed".to_string(),
    ] {
        let post = prompt(&scene, &url).await;
        click(&scene.ada, &post, "approve")
            .await
            .expect_error(400, "api.post.do_action.action_integration.app_error");
        let now = scene
            .ada
            .get(&format!("posts/{}", id(&post)))
            .await
            .expect(200);
        assert_eq!(now["message"], "Deploy?", "nothing else happens");
    }
}

#[tokio::test]
async fn clicks_need_a_known_alphanumeric_action_and_a_readable_channel() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let post = prompt(&scene, &integration.at("/click")).await;
    click(&scene.ada, &post, "nosuch")
        .await
        .expect_error(404, "api.post.do_action.action_id.app_error");
    click(&scene.ada, &post, "with-dash")
        .await
        .expect_error(404, "api.context.404.app_error");
    click(&scene.ada, &post, "with_underscore")
        .await
        .expect_error(404, "api.context.404.app_error");
    let private = scene.world.channel(&scene.team, "secret", "P").await;
    let hidden = scene
        .world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&private), "message": "x", "props": {"attachments": [{"actions": [
                {"id": "go", "name": "Go", "integration": {"url": integration.at("/click")}}
            ]}]}}),
        )
        .await
        .expect(201);
    click(&scene.ada, &hidden, "go")
        .await
        .expect_error(403, "api.context.permissions.app_error");
    assert!(integration.requests().is_empty());
}

// ---- dialogs ------------------------------------------------------------

fn dialog(trigger_id: &str, url: &str) -> Value {
    json!({
        "trigger_id": trigger_id,
        "url": url,
        "dialog": {
            "callback_id": "deny-reason", "title": "Deny with reason",
            "elements": [{"display_name": "Reason", "name": "reason", "type": "textarea"}],
            "submit_label": "Deny", "notify_on_cancel": true, "state": "a42"
        }
    })
}

#[tokio::test]
async fn a_dialog_opens_without_a_session_and_only_for_the_triggers_user() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let post = prompt(&scene, &integration.at("/click")).await;
    let (mut ada_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;
    let answer = click(&scene.ada, &post, "deny").await.expect(200);
    let trigger_id = answer["trigger_id"].as_str().expect("trigger");
    assert_eq!(integration.single().json()["trigger_id"], trigger_id);

    let opened = scene
        .world
        .anonymous()
        .post(
            "actions/dialogs/open",
            dialog(trigger_id, &integration.at("/dialog")),
        )
        .await
        .expect(200);
    assert_eq!(opened, json!({"status": "OK"}));
    let frames = ada_socket.drain_events().await;
    let events = named(&frames, "open_dialog");
    assert_eq!(events.len(), 1, "{frames:?}");
    assert_eq!(events[0]["broadcast"]["user_id"], scene.ada_user["id"]);
    let opened_dialog = Socket::inner(events[0], "dialog");
    assert_eq!(opened_dialog["url"], integration.at("/dialog"));
    assert_eq!(opened_dialog["dialog"]["callback_id"], "deny-reason");
    assert_eq!(opened_dialog["dialog"]["state"], "a42");
    assert_eq!(opened_dialog["dialog"]["elements"][0]["name"], "reason");
    assert!(bea_socket.drain_events().await.is_empty());

    scene
        .world
        .anonymous()
        .post(
            "actions/dialogs/open",
            dialog("nosuchtriggerxxxxxxxxxxxxx", &integration.at("/d")),
        )
        .await
        .expect_error(400, "interactive_message.decode_trigger_id.missing_data");
    let mut no_url = dialog(trigger_id, "");
    no_url["url"] = json!("");
    scene
        .world
        .anonymous()
        .post("actions/dialogs/open", no_url)
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
}

#[tokio::test]
async fn a_trigger_id_expires_after_its_lifetime() {
    let scene = scene().await;
    let integration = Integration::start().await;
    settings(&scene.world.base, json!({"trigger_id_lifetime_ms": 3000})).await;
    clock(&scene.world.base, json!({"freeze": true})).await;
    let post = prompt(&scene, &integration.at("/click")).await;
    let first = click(&scene.ada, &post, "deny").await.expect(200);
    let second = click(&scene.ada, &post, "deny").await.expect(200);
    clock(&scene.world.base, json!({"advance_ms": 3000})).await;
    scene
        .world
        .anonymous()
        .post(
            "actions/dialogs/open",
            dialog(
                first["trigger_id"].as_str().expect("trigger"),
                &integration.at("/d"),
            ),
        )
        .await
        .expect(200);
    clock(&scene.world.base, json!({"advance_ms": 1})).await;
    scene
        .world
        .anonymous()
        .post(
            "actions/dialogs/open",
            dialog(
                second["trigger_id"].as_str().expect("trigger"),
                &integration.at("/d"),
            ),
        )
        .await
        .expect_error(400, "interactive_message.decode_trigger_id.expired");
}

#[tokio::test]
async fn a_submission_carries_the_session_user_and_relays_the_integrations_errors() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply(
        "/dialog",
        Reply::json(json!({"error": "Refused", "errors": {"reason": "Too short"}, "junk": 1})),
    );
    let answer = scene
        .bea
        .post(
            "actions/dialogs/submit",
            json!({
                "url": integration.at("/dialog"), "callback_id": "deny-reason", "state": "a42",
                "user_id": id(&scene.ada_user), "channel_id": id(&scene.channel),
                "team_id": id(&scene.team), "submission": {"reason": "no"}, "cancelled": false
            }),
        )
        .await
        .expect(200);
    assert_eq!(
        answer,
        json!({"error": "Refused", "errors": {"reason": "Too short"}})
    );
    let body = integration.single().json();
    assert_eq!(
        body,
        json!({
            "type": "dialog_submission", "callback_id": "deny-reason", "state": "a42",
            "user_id": id(&scene.bea_user), "channel_id": id(&scene.channel),
            "team_id": id(&scene.team), "submission": {"reason": "no"}, "cancelled": false
        }),
        "user_id is the session's, and the URL is not sent on"
    );

    // A channel the submitter cannot read is refused before any call.
    let private = scene.world.channel(&scene.team, "secret", "P").await;
    scene
        .bea
        .post(
            "actions/dialogs/submit",
            json!({"url": integration.at("/dialog"), "callback_id": "x", "channel_id": id(&private),
                   "team_id": id(&scene.team), "submission": {}}),
        )
        .await
        .expect_error(403, "api.context.permissions.app_error");
    assert_eq!(integration.requests().len(), 1);

    integration.reply("/dialog", Reply::status(500));
    scene
        .bea
        .post(
            "actions/dialogs/submit",
            json!({"url": integration.at("/dialog"), "callback_id": "x", "channel_id": id(&scene.channel),
                   "team_id": id(&scene.team), "submission": {}}),
        )
        .await
        .expect_error(400, "api.post.do_action.action_integration.app_error");
    integration.reply("/dialog", Reply::json(json!({})));
    let closed = scene
        .bea
        .post(
            "actions/dialogs/submit",
            json!({"url": integration.at("/dialog"), "callback_id": "x", "channel_id": id(&scene.channel),
                   "team_id": id(&scene.team), "submission": {}}),
        )
        .await
        .expect(200);
    assert_eq!(closed, json!({}));
}

#[tokio::test]
async fn cancelling_tells_the_integration_only_when_it_asked() {
    let scene = scene().await;
    let integration = Integration::start().await;
    let post = prompt(&scene, &integration.at("/click")).await;
    let sim = scene.world.anonymous();
    for notify in [false, true] {
        let answer = click(&scene.ada, &post, "deny").await.expect(200);
        let mut body = dialog(
            answer["trigger_id"].as_str().expect("trigger"),
            &integration.at("/dialog"),
        );
        body["dialog"]["notify_on_cancel"] = json!(notify);
        sim.post("actions/dialogs/open", body).await.expect(200);
        let cancelled = sim
            .post(
                "/_sim/dialog/cancel",
                json!({"as": "ada", "channel_id": id(&scene.channel)}),
            )
            .await
            .expect(200);
        assert_eq!(cancelled["notified"], notify);
    }
    let submissions: Vec<Value> = integration
        .requests()
        .iter()
        .filter(|r| r.path == "/dialog")
        .map(|r| r.json())
        .collect();
    assert_eq!(submissions.len(), 1);
    assert_eq!(submissions[0]["cancelled"], true);
    assert_eq!(submissions[0]["submission"], json!({}));
    assert_eq!(submissions[0]["user_id"], scene.ada_user["id"]);
}

// ---- the private-address guard ------------------------------------------

/// A fresh scene whose server keeps the default of refusing private
/// addresses unless told otherwise.
async fn guarded_scene(allowlist: &str) -> Scene {
    let scene = scene().await;
    settings(
        &scene.world.base,
        json!({"allowed_untrusted_internal_connections": allowlist}),
    )
    .await;
    scene
}

#[tokio::test]
async fn loopback_integrations_are_refused_by_default_as_forbidden_addresses() {
    let fresh = World::bare().await;
    let config = fresh.admin.get("config").await.expect(200);
    assert_eq!(
        config["ServiceSettings"]["AllowedUntrustedInternalConnections"],
        ""
    );

    let scene = guarded_scene("").await;
    let integration = Integration::start().await;
    register(&scene, "agents", &integration.at("/cmd")).await;
    execute(&scene.ada, &scene, "/agents hi")
        .await
        .expect_error(500, "api.command.execute_command.failed.app_error");
    let post = prompt(&scene, &integration.at("/click")).await;
    click(&scene.ada, &post, "approve")
        .await
        .expect_error(400, "api.post.do_action.action_integration.app_error");
    scene
        .ada
        .post(
            "actions/dialogs/submit",
            json!({"url": integration.at("/dialog"), "callback_id": "x",
                   "channel_id": id(&scene.channel), "team_id": id(&scene.team), "submission": {}}),
        )
        .await
        .expect_error(400, "api.post.do_action.action_integration.app_error");
    assert!(
        integration.requests().is_empty(),
        "nothing reached the integration"
    );
    let records = outgoing(&scene.world).await;
    assert_eq!(records.len(), 3);
    for record in records {
        let error = record["error"].as_str().expect("an error");
        assert!(error.contains("address forbidden"), "{error}");
        assert!(
            error.contains("AllowedUntrustedInternalConnections"),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_cidr_entry_allows_every_address_inside_it() {
    let scene = guarded_scene("10.0.0.0/8 127.0.0.0/8").await;
    let integration = Integration::start().await;
    register(&scene, "agents", &integration.at("/cmd")).await;
    execute(&scene.ada, &scene, "/agents hi").await.expect(200);
    let port = integration.url.rsplit(':').next().expect("port");
    register(&scene, "byname", &format!("http://localhost:{port}/cmd")).await;
    execute(&scene.ada, &scene, "/byname hi").await.expect(200);
    assert_eq!(integration.requests().len(), 2);
}

#[tokio::test]
async fn a_host_name_entry_allows_urls_naming_that_host_only() {
    let scene = guarded_scene("example.internal,localhost").await;
    let integration = Integration::start().await;
    let port = integration.url.rsplit(':').next().expect("port");
    register(&scene, "byname", &format!("http://localhost:{port}/cmd")).await;
    register(&scene, "byip", &integration.at("/cmd")).await;
    execute(&scene.ada, &scene, "/byname hi").await.expect(200);
    execute(&scene.ada, &scene, "/byip hi")
        .await
        .expect_error(500, "api.command.execute_command.failed.app_error");
    assert_eq!(integration.requests().len(), 1);
}

#[tokio::test]
async fn a_bare_ip_entry_matches_only_urls_that_literally_use_that_ip() {
    let scene = guarded_scene("127.0.0.1").await;
    let integration = Integration::start().await;
    let port = integration.url.rsplit(':').next().expect("port");
    register(&scene, "byip", &integration.at("/cmd")).await;
    register(&scene, "byname", &format!("http://localhost:{port}/cmd")).await;
    execute(&scene.ada, &scene, "/byip hi").await.expect(200);
    // localhost resolves to 127.0.0.1, but a bare IP is no CIDR: it names a
    // host, and this URL names another.
    execute(&scene.ada, &scene, "/byname hi")
        .await
        .expect_error(500, "api.command.execute_command.failed.app_error");
    assert_eq!(integration.requests().len(), 1);
}

// ---- response_url (contract §D.3) -------------------------------------------

/// Executes `/agents hi` as ada and answers the `response_url` the
/// integration was given.
async fn response_url(scene: &Scene, integration: &Integration) -> String {
    execute(&scene.ada, scene, "/agents hi").await.expect(200);
    let requests = integration.requests();
    let form = requests.last().expect("a request").form();
    field(&form, "response_url").to_string()
}

/// POSTs `body` to a response URL as an integration would, unauthenticated.
async fn answer_later(url: &str, body: Value) -> support::Answer {
    let path = url::Url::parse(url).expect("url").path().to_string();
    Client::anonymous(&url[..url.len() - path.len()])
        .post(&path, body)
        .await
}

#[tokio::test]
async fn response_url_answers_ephemerally_or_in_channel_and_each_execution_has_its_own() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/cmd", Reply::json(json!({"text": "working on it"})));
    register(&scene, "agents", &integration.at("/cmd")).await;
    let (mut ada_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.ada.token.as_deref().expect("token"),
    )
    .await;
    let (mut bea_socket, _) = Socket::open(
        &scene.world.ws(),
        scene.bea.token.as_deref().expect("token"),
    )
    .await;
    let url = response_url(&scene, &integration).await;
    let other = response_url(&scene, &integration).await;
    assert_ne!(url, other, "a hook per execution");
    ada_socket.drain_events().await;

    // Ephemeral (the default): the invoker alone, in the channel, unstored.
    let answer = answer_later(&url, json!({"text": "done, privately"})).await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, json!("ok"));
    assert_eq!(
        answer
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok()),
        Some("text/plain")
    );
    let frames = ada_socket.drain_events().await;
    let ephemeral = named(&frames, "ephemeral_message");
    assert_eq!(ephemeral.len(), 1, "{frames:?}");
    let post = Socket::inner(ephemeral[0], "post");
    assert_eq!(post["message"], "done, privately");
    assert_eq!(post["channel_id"], scene.channel["id"]);
    assert_eq!(post["user_id"], scene.ada_user["id"]);
    assert!(named(&bea_socket.drain_events().await, "ephemeral_message").is_empty());

    // In channel: a post by the invoker that everyone sees.
    answer_later(
        &url,
        json!({"response_type": "in_channel", "text": "done, for all"}),
    )
    .await
    .expect(200);
    let frames = bea_socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert_eq!(posted.len(), 1, "{frames:?}");
    let post = Socket::inner(posted[0], "post");
    assert_eq!(post["message"], "done, for all");
    assert_eq!(post["user_id"], scene.ada_user["id"]);
    assert_eq!(post["props"]["from_webhook"], "true");

    // A body that is not JSON is the text of an ephemeral answer.
    let plain = Client::anonymous(&scene.world.base)
        .send_bytes(
            "POST",
            url::Url::parse(&url).expect("url").path(),
            "text/plain",
            b"plain words".to_vec(),
        )
        .await;
    assert_eq!(plain.status, 200);
    let frames = ada_socket.drain_events().await;
    let post = Socket::inner(named(&frames, "ephemeral_message")[0], "post");
    assert_eq!(post["message"], "plain words");

    // JSON that does not parse is refused.
    Client::anonymous(&scene.world.base)
        .send_bytes(
            "POST",
            url::Url::parse(&url).expect("url").path(),
            "application/json",
            b"{not json".to_vec(),
        )
        .await
        .expect_error(400, "web.command_webhook.parse.app_error");
}

#[tokio::test]
async fn response_url_takes_five_answers_lives_thirty_minutes_and_refuses_unknown_hooks() {
    let scene = scene().await;
    let integration = Integration::start().await;
    integration.reply("/cmd", Reply::json(json!({})));
    register(&scene, "agents", &integration.at("/cmd")).await;
    let url = response_url(&scene, &integration).await;
    for n in 1..=5 {
        answer_later(&url, json!({"text": format!("answer {n}")}))
            .await
            .expect(200);
    }
    answer_later(&url, json!({"text": "a sixth"}))
        .await
        .expect_error(400, "app.command_webhook.try_use.invalid");

    // A fresh hook answers until 30 minutes have passed, then reads as
    // one that never existed.
    clock(&scene.world.base, json!({"freeze": true})).await;
    let fresh = response_url(&scene, &integration).await;
    clock(&scene.world.base, json!({"advance_ms": 30 * 60 * 1000 - 1})).await;
    answer_later(&fresh, json!({"text": "just in time"}))
        .await
        .expect(200);
    clock(&scene.world.base, json!({"advance_ms": 1})).await;
    answer_later(&fresh, json!({"text": "too late"}))
        .await
        .expect_error(404, "app.command_webhook.get.missing");

    let base = &scene.world.base;
    answer_later(
        &format!("{base}/hooks/commands/{}", "a".repeat(26)),
        json!({"text": "x"}),
    )
    .await
    .expect_error(404, "app.command_webhook.get.missing");
    answer_later(
        &format!("{base}/hooks/commands/short"),
        json!({"text": "x"}),
    )
    .await
    .expect_error(400, "api.context.invalid_url_param.app_error");
}
