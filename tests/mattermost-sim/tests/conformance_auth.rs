//! Conformance: health, accounts, sessions, bots and tokens — contract §0.3
//! (ids, timestamps, error body, `me`), §A.1, §A.11 (setting gates, `GET
//! /config`), §B.1 (a revoked token's socket) and §F.1 items 1–3.

mod support;

use serde_json::{Value, json};
use support::{
    ADMIN_PASSWORD, Client, PERSON_PASSWORD, Socket, WAIT, World, assert_id, assert_millis, id,
    login,
};

#[tokio::test]
async fn ping_answers_status_ok_without_a_session() {
    let running = support::start().await;
    let answer = Client::anonymous(&running.url).get("system/ping").await;
    let body = answer.expect(200);
    assert_eq!(body["status"], "OK");
}

#[tokio::test]
async fn the_first_account_on_an_empty_server_becomes_its_system_admin() {
    let running = support::start().await;
    let anonymous = Client::anonymous(&running.url);
    let first = anonymous
        .post(
            "users",
            json!({"username": "Root", "email": "root@example.com", "password": ADMIN_PASSWORD}),
        )
        .await
        .expect(201);
    assert_id(&first["id"]);
    assert_millis(&first["create_at"]);
    assert_eq!(first["create_at"], first["update_at"]);
    assert_eq!(first["delete_at"], 0);
    assert_eq!(first["username"], "root", "usernames are stored lowercased");
    assert_eq!(first["email"], "root@example.com");
    assert_eq!(first["is_bot"], false);
    let roles: Vec<&str> = first["roles"].as_str().expect("roles").split(' ').collect();
    assert!(
        roles.contains(&"system_admin") && roles.contains(&"system_user"),
        "{roles:?}"
    );
    assert!(first.get("password").is_none(), "sanitised: {first}");

    // Sign-up is open on the simulator by default; the second account is a
    // plain user.
    let second = anonymous
        .post(
            "users",
            json!({"username": "bea", "email": "bea@example.com", "password": PERSON_PASSWORD}),
        )
        .await
        .expect(201);
    assert_eq!(second["roles"], "system_user");
}

#[tokio::test]
async fn a_closed_server_refuses_anonymous_sign_up_but_not_an_admin() {
    let world = World::bare().await;
    let patched = world
        .admin
        .put(
            "config/patch",
            json!({"TeamSettings": {"EnableOpenServer": false}}),
        )
        .await
        .expect(200);
    assert_eq!(patched["TeamSettings"]["EnableOpenServer"], false);

    world
        .anonymous()
        .post(
            "users",
            json!({"username": "eve", "email": "eve@example.com", "password": PERSON_PASSWORD}),
        )
        .await
        .expect_error(403, "api.user.create_user.no_open_server");
    let made = world
        .admin
        .post(
            "users",
            json!({"username": "eve", "email": "eve@example.com", "password": PERSON_PASSWORD}),
        )
        .await
        .expect(201);
    assert_eq!(made["roles"], "system_user");
}

#[tokio::test]
async fn sign_up_validates_username_email_and_password() {
    let world = World::bare().await;
    let sign_up = |username: &str, email: &str, password: &str| {
        let anonymous = world.anonymous();
        let body = json!({"username": username, "email": email, "password": password});
        async move { anonymous.post("users", body).await }
    };
    for reserved in ["all", "channel", "matterbot", "system"] {
        sign_up(
            reserved,
            &format!("{reserved}@example.com"),
            PERSON_PASSWORD,
        )
        .await
        .expect_error(400, "model.user.is_valid.username.app_error");
    }
    sign_up("bad name", "bad@example.com", PERSON_PASSWORD)
        .await
        .expect_error(400, "model.user.is_valid.username.app_error");
    sign_up("Admin", "other@example.com", PERSON_PASSWORD)
        .await
        .expect_error(400, "app.user.save.username_exists.app_error");
    sign_up("other", "ADMIN@example.com", PERSON_PASSWORD)
        .await
        .expect_error(400, "app.user.save.email_exists.app_error");
    sign_up("other", "not-an-email", PERSON_PASSWORD)
        .await
        .expect_error(400, "model.user.is_valid.email.app_error");
    // The default minimum is 8 characters (PasswordSettings.MinimumLength).
    sign_up("other", "other@example.com", "short")
        .await
        .expect_error(400, "model.user.is_valid.pwd_min_length.app_error");
    sign_up("other", "other@example.com", "eight888")
        .await
        .expect(201);
}

#[tokio::test]
async fn login_answers_the_user_and_a_token_header_by_username_or_email() {
    let world = World::bare().await;
    for login_id in ["admin", "ADMIN@example.com"] {
        let answer = world
            .anonymous()
            .post(
                "users/login",
                json!({"login_id": login_id, "password": ADMIN_PASSWORD, "token": null}),
            )
            .await;
        let token = answer
            .headers
            .get("Token")
            .expect("a Token header")
            .to_str()
            .expect("ascii")
            .to_string();
        let user = answer.expect(200);
        assert_eq!(user["id"], world.admin_user["id"]);
        assert!(user.get("password").is_none(), "sanitised: {user}");
        assert_id(&Value::String(token.clone()));
        let me = world
            .anonymous()
            .with_token(&token)
            .get("users/me")
            .await
            .expect(200);
        assert_eq!(me["id"], world.admin_user["id"]);
    }
}

#[tokio::test]
async fn wrong_credentials_answer_401_invalid_credentials() {
    let world = World::bare().await;
    for (login_id, password) in [("admin", "wrong-password"), ("nobody", ADMIN_PASSWORD)] {
        let answer = world
            .anonymous()
            .post(
                "users/login",
                json!({"login_id": login_id, "password": password}),
            )
            .await;
        assert!(answer.headers.get("Token").is_none());
        answer.expect_error(401, "api.user.login.invalid_credentials_email_username");
    }
}

#[tokio::test]
async fn missing_unknown_and_revoked_tokens_answer_401_session_expired() {
    let world = World::bare().await;
    world
        .anonymous()
        .get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    world
        .anonymous()
        .with_token("nosuchtokenxxxxxxxxxxxxxxx")
        .get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    let body = world
        .anonymous()
        .with_token("nosuchtokenxxxxxxxxxxxxxxx")
        .get("users/me")
        .await
        .body;
    // The whole error body, as `@mattermost/client` reads it.
    for key in [
        "id",
        "message",
        "detailed_error",
        "request_id",
        "status_code",
        "is_oauth",
    ] {
        assert!(body.get(key).is_some(), "missing {key}: {body}");
    }
    assert_eq!(body["is_oauth"], false);
}

#[tokio::test]
async fn logout_revokes_the_session_it_was_called_with() {
    let world = World::bare().await;
    let (person, _) = world.person("ada").await;
    let other_session = world
        .anonymous()
        .with_token(&login(&world.base, "ada", PERSON_PASSWORD).await);
    let answer = person.post("users/logout", json!({})).await.expect(200);
    assert_eq!(answer, json!({"status": "OK"}));
    person
        .get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    // Only that session ends.
    other_session.get("users/me").await.expect(200);
}

#[tokio::test]
async fn me_stands_for_the_caller_in_user_paths() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let team = world.team("acme").await;
    world.add_to_team(&team, &ada_user).await;

    let me = ada.get("users/me").await.expect(200);
    assert_eq!(me["id"], ada_user["id"]);
    let teams = ada.get("users/me/teams").await.expect(200);
    assert_eq!(teams.as_array().expect("teams").len(), 1);
    assert_eq!(teams[0]["id"], team["id"]);
    let channels = ada
        .get(&format!("users/me/teams/{}/channels", id(&team)))
        .await
        .expect(200);
    let mut names: Vec<&str> = channels
        .as_array()
        .expect("channels")
        .iter()
        .map(|c| c["name"].as_str().expect("name"))
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["off-topic", "town-square"]);
    // Another user's lists are not the caller's to read.
    ada.get(&format!("users/{}/teams", id(&world.admin_user)))
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn users_are_found_by_id_username_and_ids_with_absent_ones_404_or_omitted() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bot_user) = world.bot("helper").await;

    let by_id = ada
        .get(&format!("users/{}", id(&ada_user)))
        .await
        .expect(200);
    assert_eq!(by_id["username"], "ada");
    assert_eq!(by_id["is_bot"], false);
    let bot_as_user = ada
        .get(&format!("users/{}", id(&bot_user)))
        .await
        .expect(200);
    assert_eq!(bot_as_user["is_bot"], true);
    assert_eq!(bot_as_user["username"], "helper");

    ada.get("users/aaaaaaaaaaaaaaaaaaaaaaaaaa")
        .await
        .expect_error(404, "app.user.missing_account.const");
    ada.get("users/not-an-id")
        .await
        .expect_error(400, "api.context.invalid_url_param.app_error");

    let by_name = ada.get("users/username/helper").await.expect(200);
    assert_eq!(by_name["id"], bot_user["user_id"]);
    ada.get("users/username/nobody")
        .await
        .expect_error(404, "app.user.get_by_username.app_error");

    let listed = ada
        .post(
            "users/ids",
            json!([id(&ada_user), "aaaaaaaaaaaaaaaaaaaaaaaaaa", id(&bot_user)]),
        )
        .await
        .expect(200);
    let mut ids: Vec<&str> = listed
        .as_array()
        .expect("users")
        .iter()
        .map(|u| u["id"].as_str().expect("id"))
        .collect();
    ids.sort_unstable();
    let mut expected = vec![
        ada_user["id"].as_str().expect("id"),
        bot_user["user_id"].as_str().expect("id"),
    ];
    expected.sort_unstable();
    assert_eq!(ids, expected, "unknown ids are silently omitted");
    ada.post("users/ids", json!([]))
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
}

#[tokio::test]
async fn bot_creation_is_refused_with_403_create_disabled_while_the_setting_is_off() {
    let world = World::bare().await;
    world
        .admin
        .post("bots", json!({"username": "helper"}))
        .await
        .expect_error(403, "api.bot.create_disabled");
    // A person without create_bot is refused for that first, whatever the setting.
    let (ada, _) = world.person("ada").await;
    ada.post("bots", json!({"username": "helper"}))
        .await
        .expect_error(403, "api.context.permissions.app_error");

    world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableBotAccountCreation": true}}),
        )
        .await
        .expect(200);
    let bot = world
        .admin
        .post(
            "bots",
            json!({"username": "Helper", "display_name": "Helper", "description": "does things"}),
        )
        .await
        .expect(201);
    assert_id(&bot["user_id"]);
    assert!(bot.get("id").is_none(), "a bot is keyed by user_id: {bot}");
    assert_eq!(bot["username"], "helper");
    assert_eq!(bot["display_name"], "Helper");
    assert_eq!(bot["description"], "does things");
    assert_eq!(bot["owner_id"], world.admin_user["id"]);
    assert_millis(&bot["create_at"]);
    assert_eq!(bot["delete_at"], 0);
    let fetched = world
        .admin
        .get(&format!("bots/{}", id(&bot)))
        .await
        .expect(200);
    assert_eq!(fetched["user_id"], bot["user_id"]);
    world
        .admin
        .post("bots", json!({"username": "helper"}))
        .await
        .expect_error(400, "app.user.save.username_exists.app_error");
}

#[tokio::test]
async fn a_bot_cannot_log_in_and_cannot_create_bots() {
    let world = World::new().await;
    let (bot, bot_user) = world.bot("helper").await;
    world
        .anonymous()
        .post("users/login", json!({"login_id": "helper", "password": ""}))
        .await
        .expect_error(401, "api.user.login.bot_login_forbidden.app_error");
    world
        .anonymous()
        .post(
            "users/login",
            json!({"login_id": "helper", "password": "anything-at-all"}),
        )
        .await
        .expect_error(401, "api.user.login.bot_login_forbidden.app_error");
    let me = bot.get("users/me").await.expect(200);
    assert_eq!(me["id"], bot_user["user_id"]);
    assert_eq!(me["is_bot"], true);
    bot.post("bots", json!({"username": "child"}))
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn personal_tokens_are_501_for_people_while_disabled_but_bots_always_get_them() {
    let world = World::bare().await;
    world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableBotAccountCreation": true}}),
        )
        .await
        .expect(200);
    let admin_id = id(&world.admin_user);
    world
        .admin
        .post(
            &format!("users/{admin_id}/tokens"),
            json!({"description": "mine"}),
        )
        .await
        .expect_error(501, "app.user_access_token.disabled");
    world
        .admin
        .post("users/me/tokens", json!({"description": "mine"}))
        .await
        .expect_error(501, "app.user_access_token.disabled");

    let bot = world
        .admin
        .post("bots", json!({"username": "helper"}))
        .await
        .expect(201);
    let minted = world
        .admin
        .post(
            &format!("users/{}/tokens", id(&bot)),
            json!({"description": "bot"}),
        )
        .await
        .expect(200);
    assert_id(&minted["id"]);
    assert_id(&minted["token"]);
    assert_ne!(
        minted["id"], minted["token"],
        "the record id is not the secret"
    );
    assert_eq!(minted["user_id"], bot["user_id"]);
    assert_eq!(minted["description"], "bot");
    assert_eq!(minted["is_active"], true);
    let as_bot = world
        .anonymous()
        .with_token(minted["token"].as_str().expect("token"));
    assert_eq!(
        as_bot.get("users/me").await.expect(200)["id"],
        bot["user_id"]
    );

    world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableUserAccessTokens": true}}),
        )
        .await
        .expect(200);
    let own = world
        .admin
        .post("users/me/tokens", json!({"description": "mine"}))
        .await
        .expect(200);
    assert_eq!(own["user_id"], admin_id.as_str());
}

#[tokio::test]
async fn token_creation_checks_description_then_permission_and_mints_additional_tokens() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bot_user) = world.bot("helper").await;
    world
        .admin
        .post(
            &format!("users/{}/tokens", id(&bot_user)),
            json!({"description": ""}),
        )
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
    // create_user_access_token belongs to system admins only.
    ada.post("users/me/tokens", json!({"description": "mine"}))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    ada.post(
        &format!("users/{}/tokens", id(&bot_user)),
        json!({"description": "x"}),
    )
    .await
    .expect_error(403, "api.context.permissions.app_error");

    let first = world
        .admin
        .post(
            &format!("users/{}/tokens", id(&bot_user)),
            json!({"description": "one"}),
        )
        .await
        .expect(200);
    let second = world
        .admin
        .post(
            &format!("users/{}/tokens", id(&bot_user)),
            json!({"description": "two"}),
        )
        .await
        .expect(200);
    for token in [&first, &second] {
        let client = world
            .anonymous()
            .with_token(token["token"].as_str().expect("token"));
        client.get("users/me").await.expect(200);
    }
    let listed = world
        .admin
        .get(&format!("users/{}/tokens", id(&bot_user)))
        .await
        .expect(200);
    let listed = listed.as_array().expect("tokens");
    // Two minted here plus the one `World::bot` minted.
    assert_eq!(listed.len(), 3, "{listed:?}");
    for token in listed {
        assert!(
            token.get("token").is_none(),
            "the secret is shown only once: {token}"
        );
        assert_eq!(token["user_id"], bot_user["user_id"]);
    }
    // A person's own token, once an admin may mint it for them.
    let for_ada = world
        .admin
        .post(
            &format!("users/{}/tokens", id(&ada_user)),
            json!({"description": "ada"}),
        )
        .await
        .expect(200);
    assert_eq!(for_ada["user_id"], ada_user["id"]);
}

#[tokio::test]
async fn a_revoked_token_answers_401_and_its_socket_is_closed() {
    let world = World::new().await;
    let (bot, bot_user) = world.bot("helper").await;
    let token_id = world
        .admin
        .get(&format!("users/{}/tokens", id(&bot_user)))
        .await
        .expect(200)[0]["id"]
        .as_str()
        .expect("token id")
        .to_string();
    let (mut socket, _) = Socket::open(&world.ws(), bot.token.as_deref().expect("token")).await;

    let answer = world
        .admin
        .post("users/tokens/revoke", json!({"token_id": token_id}))
        .await
        .expect(200);
    assert_eq!(answer, json!({"status": "OK"}));
    bot.get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    assert!(
        socket.closes_silently(WAIT).await,
        "the revoked token's socket must be dropped"
    );
    world
        .admin
        .post("users/tokens/revoke", json!({"token_id": token_id}))
        .await
        .expect_error(404, "app.user_access_token.get_by_user.app_error");
}

#[tokio::test]
async fn deactivation_ends_sessions_tokens_and_login() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let pat = world
        .admin
        .post(
            &format!("users/{}/tokens", id(&ada_user)),
            json!({"description": "pat"}),
        )
        .await
        .expect(200);
    let pat_client = world
        .anonymous()
        .with_token(pat["token"].as_str().expect("token"));
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;

    world
        .admin
        .delete(&format!("users/{}", id(&ada_user)))
        .await
        .expect(200);
    ada.get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    pat_client
        .get("users/me")
        .await
        .expect_error(401, "api.context.session_expired.app_error");
    assert!(socket.closes_silently(WAIT).await);
    // A deactivated account is told so, even with a wrong password.
    for password in [PERSON_PASSWORD, "wrong-password"] {
        world
            .anonymous()
            .post(
                "users/login",
                json!({"login_id": "ada", "password": password}),
            )
            .await
            .expect_error(401, "api.user.login.inactive.app_error");
    }
    let user = world
        .admin
        .get(&format!("users/{}", id(&ada_user)))
        .await
        .expect(200);
    assert_millis(&user["delete_at"]);

    world
        .admin
        .put(
            &format!("users/{}/active", id(&ada_user)),
            json!({"active": true}),
        )
        .await
        .expect(200);
    login(&world.base, "ada", PERSON_PASSWORD).await;
}

#[tokio::test]
async fn config_is_admin_only_and_patches_change_the_string_valued_client_config() {
    let world = World::bare().await;
    let (ada, _) = world.person("ada").await;
    ada.get("config")
        .await
        .expect_error(403, "api.context.permissions.app_error");
    ada.put(
        "config/patch",
        json!({"ServiceSettings": {"EnableCommands": false}}),
    )
    .await
    .expect_error(403, "api.context.permissions.app_error");

    let config = world.admin.get("config").await.expect(200);
    let service = &config["ServiceSettings"];
    assert_eq!(service["EnableBotAccountCreation"], false);
    assert_eq!(service["EnableUserAccessTokens"], false);
    assert_eq!(service["EnableCommands"], true);
    assert_eq!(service["AllowedUntrustedInternalConnections"], "");
    assert_eq!(service["OutgoingIntegrationRequestsTimeout"], 30);
    assert_eq!(service["PostEditTimeLimit"], -1);
    assert_eq!(config["TeamSettings"]["MaxUsersPerTeam"], 50);
    assert_eq!(config["FileSettings"]["EnableFileAttachments"], true);
    assert_eq!(config["FileSettings"]["MaxFileSize"], 104_857_600);

    let client = ada.get("config/client?format=old").await.expect(200);
    for (key, value) in client.as_object().expect("object") {
        assert!(value.is_string(), "{key} is not a string: {value}");
    }
    assert_eq!(client["EnableBotAccountCreation"], "false");
    assert_eq!(client["EnableCommands"], "true");
    assert!(client.get("AllowedUntrustedInternalConnections").is_none());

    world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"EnableBotAccountCreation": true, "EnableCommands": false}}),
        )
        .await
        .expect(200);
    let client = ada.get("config/client?format=old").await.expect(200);
    assert_eq!(client["EnableBotAccountCreation"], "true");
    assert_eq!(client["EnableCommands"], "false");
}
