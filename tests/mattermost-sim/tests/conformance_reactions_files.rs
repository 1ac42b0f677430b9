//! Conformance: reactions, pins and files — contract §A.6, §A.7, §A.8, the
//! `reaction_*`/`post_edited`/`posted` events of §B.6, and §F.1 items 15–17.

mod support;

use serde_json::{Value, json};
use support::{
    Multipart, Part, Socket, World, assert_id, assert_millis, clock, id, named, settings,
};

/// A team and a channel with the admin and the given people in both.
async fn setup(world: &World, kind: &str, people: &[&Value]) -> (Value, Value) {
    let team = world.team("acme").await;
    let channel = world.channel(&team, "general", kind).await;
    world.members(&team, &channel, people).await;
    (team, channel)
}

fn react_body(user: &Value, post: &Value, emoji: &str) -> Value {
    json!({"user_id": id(user), "post_id": id(post), "emoji_name": emoji})
}

#[tokio::test]
async fn a_reaction_is_saved_200_announced_and_bumps_the_post_without_an_edit() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let (_, channel) = setup(&world, "O", &[&ada_user, &bea_user]).await;
    clock(&world.base, json!({"freeze": true})).await;
    let post = world.post(&ada, &channel, "react to me").await;
    let at = clock(&world.base, json!({"advance_ms": 5})).await;
    let (mut socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;

    let reaction = bea
        .post("reactions", react_body(&bea_user, &post, "smile"))
        .await
        .expect(200);
    assert_eq!(reaction["user_id"], bea_user["id"]);
    assert_eq!(reaction["post_id"], post["id"]);
    assert_eq!(reaction["emoji_name"], "smile");
    assert_eq!(reaction["channel_id"], channel["id"]);
    assert_eq!(reaction["create_at"], at);
    assert_eq!(reaction["delete_at"], 0);

    let frames = socket.drain_events().await;
    let added = named(&frames, "reaction_added");
    assert_eq!(added.len(), 1, "{frames:?}");
    assert_eq!(Socket::inner(added[0], "reaction"), reaction);
    assert_eq!(added[0]["broadcast"]["channel_id"], channel["id"]);
    assert!(
        named(&frames, "post_edited").is_empty(),
        "no post_edited: {frames:?}"
    );

    let now = ada.get(&format!("posts/{}", id(&post))).await.expect(200);
    assert_eq!(now["has_reactions"], true);
    assert_eq!(now["update_at"], at);
    assert_eq!(now["edit_at"], 0);
    assert_eq!(now["metadata"]["reactions"], json!([reaction]));
    let listed = ada
        .get(&format!("posts/{}/reactions", id(&post)))
        .await
        .expect(200);
    assert_eq!(listed, json!([reaction]));
}

#[tokio::test]
async fn reacting_for_someone_else_outside_the_channel_or_in_an_archive_is_403() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (carl, carl_user) = world.person("carl").await;
    let (team, private) = setup(&world, "P", &[&ada_user]).await;
    world.add_to_team(&team, &carl_user).await;
    let post = world.post(&ada, &private, "private").await;

    ada.post("reactions", react_body(&world.admin_user, &post, "smile"))
        .await
        .expect_error(403, "api.reaction.save_reaction.user_id.app_error");
    carl.post("reactions", react_body(&carl_user, &post, "smile"))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    carl.get(&format!("posts/{}/reactions", id(&post)))
        .await
        .expect_error(403, "api.context.permissions.app_error");

    world
        .admin
        .delete(&format!("channels/{}", id(&private)))
        .await
        .expect(200);
    ada.post("reactions", react_body(&ada_user, &post, "smile"))
        .await
        .expect_error(403, "api.reaction.save.archived_channel.app_error");
}

#[tokio::test]
async fn emoji_names_are_checked_for_size_then_pattern() {
    let world = World::new().await;
    let (_, channel) = setup(&world, "O", &[]).await;
    let post = world.post(&world.admin, &channel, "p").await;
    let react = |emoji: String| {
        let admin = world.admin.clone();
        let body = react_body(&world.admin_user, &post, &emoji);
        async move { admin.post("reactions", body).await }
    };
    react(String::new())
        .await
        .expect_error(400, "api.reaction.save_reaction.invalid.app_error");
    react("a".repeat(65))
        .await
        .expect_error(400, "api.reaction.save_reaction.invalid.app_error");
    react("not an emoji!".into())
        .await
        .expect_error(400, "model.reaction.is_valid.emoji_name.app_error");
    for good in ["+1", "thumbs-up_2", "a".repeat(64).as_str()] {
        react(good.to_string()).await.expect(200);
    }
}

#[tokio::test]
async fn a_repeated_reaction_succeeds_once_stored_and_is_announced_again() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, channel) = setup(&world, "O", &[&ada_user]).await;
    let post = world.post(&world.admin, &channel, "p").await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    for _ in 0..2 {
        let reaction = ada
            .post("reactions", react_body(&ada_user, &post, "tada"))
            .await
            .expect(200);
        assert_eq!(reaction["emoji_name"], "tada");
    }
    let frames = socket.drain_events().await;
    assert_eq!(named(&frames, "reaction_added").len(), 2, "{frames:?}");
    let listed = ada
        .get(&format!("posts/{}/reactions", id(&post)))
        .await
        .expect(200);
    assert_eq!(listed.as_array().expect("list").len(), 1);
}

#[tokio::test]
async fn removing_a_reaction_announces_it_and_recomputes_has_reactions() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, channel) = setup(&world, "O", &[&ada_user]).await;
    clock(&world.base, json!({"freeze": true})).await;
    let post = world.post(&world.admin, &channel, "p").await;
    ada.post("reactions", react_body(&ada_user, &post, "tada"))
        .await
        .expect(200);
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let at = clock(&world.base, json!({"advance_ms": 7})).await;

    let removed = ada
        .delete(&format!("users/me/posts/{}/reactions/tada", id(&post)))
        .await
        .expect(200);
    assert_eq!(removed, json!({"status": "OK"}));
    let frames = socket.drain_events().await;
    let events = named(&frames, "reaction_removed");
    assert_eq!(events.len(), 1, "{frames:?}");
    let reaction = Socket::inner(events[0], "reaction");
    assert_eq!(reaction["user_id"], ada_user["id"]);
    assert_eq!(reaction["post_id"], post["id"]);
    assert_eq!(reaction["emoji_name"], "tada");
    let now = ada.get(&format!("posts/{}", id(&post))).await.expect(200);
    assert_eq!(now["has_reactions"], false);
    assert_eq!(now["update_at"], at);
    assert!(now["metadata"].get("reactions").is_none(), "{now}");

    // Removing someone else's reaction needs remove_others_reactions.
    world
        .admin
        .post("reactions", react_body(&world.admin_user, &post, "eyes"))
        .await
        .expect(200);
    ada.delete(&format!(
        "users/{}/posts/{}/reactions/eyes",
        id(&world.admin_user),
        id(&post)
    ))
    .await
    .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn an_empty_reaction_list_is_an_empty_array_or_null_as_configured() {
    let world = World::new().await;
    let (_, channel) = setup(&world, "O", &[]).await;
    let post = world.post(&world.admin, &channel, "p").await;
    let path = format!("posts/{}/reactions", id(&post));
    let empty = world.admin.get(&path).await;
    assert_eq!(empty.status, 200);
    assert_eq!(empty.body, json!([]));
    settings(&world.base, json!({"empty_reactions_as_null": true})).await;
    let null = world.admin.get(&path).await;
    assert_eq!(null.status, 200);
    assert_eq!(null.body, Value::Null);
    // A non-empty list is a list either way.
    world
        .admin
        .post("reactions", react_body(&world.admin_user, &post, "tada"))
        .await
        .expect(200);
    let one = world.admin.get(&path).await.expect(200);
    assert_eq!(one.as_array().expect("list").len(), 1);
}

#[tokio::test]
async fn pin_and_unpin_are_post_edited_events_with_is_pinned_toggled_and_edit_at_kept() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, channel) = setup(&world, "O", &[&ada_user]).await;
    clock(&world.base, json!({"freeze": true})).await;
    let post = world.post(&world.admin, &channel, "pin me").await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;

    for (path, pinned) in [("pin", true), ("unpin", false)] {
        let at = clock(&world.base, json!({"advance_ms": 3})).await;
        // Any member may pin: it needs only read access.
        let answer = ada
            .post(&format!("posts/{}/{path}", id(&post)), json!({}))
            .await
            .expect(200);
        assert_eq!(answer, json!({"status": "OK"}));
        let frames = socket.drain_events().await;
        let edited = named(&frames, "post_edited");
        assert_eq!(edited.len(), 1, "{frames:?}");
        assert!(
            named(&frames, "posted").is_empty(),
            "no system post: {frames:?}"
        );
        let event_post = Socket::inner(edited[0], "post");
        assert_eq!(event_post["id"], post["id"]);
        assert_eq!(event_post["is_pinned"], pinned);
        assert_eq!(event_post["edit_at"], 0);
        assert_eq!(event_post["update_at"], at);
        assert_eq!(event_post["message"], "pin me");
        let pinned_list = ada
            .get(&format!("channels/{}/pinned", id(&channel)))
            .await
            .expect(200);
        let listed = pinned_list["order"].as_array().expect("order").len();
        assert_eq!(listed, usize::from(pinned));
    }
}

#[tokio::test]
async fn multipart_uploads_take_their_fields_in_any_order() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, channel) = setup(&world, "O", &[&ada_user]).await;
    let channel_id = id(&channel);
    let orders = [
        vec![
            Part::Field("channel_id", &channel_id),
            Part::Field("client_ids", "c1"),
            Part::File("files", "notes.txt", b"hello file"),
        ],
        vec![
            Part::File("files", "notes.txt", b"hello file"),
            Part::Field("client_ids", "c1"),
            Part::Field("channel_id", &channel_id),
        ],
    ];
    for parts in orders {
        let body = Multipart::new(&parts);
        let answer = ada
            .send_bytes("POST", "files", &body.content_type(), body.body)
            .await
            .expect(201);
        assert_eq!(answer["client_ids"], json!(["c1"]));
        let infos = answer["file_infos"].as_array().expect("file_infos");
        assert_eq!(infos.len(), 1);
        let info = &infos[0];
        assert_id(&info["id"]);
        assert_eq!(info["user_id"], ada_user["id"]);
        assert_eq!(info["channel_id"], channel["id"]);
        assert_eq!(info["post_id"], "", "not attached yet");
        assert_eq!(info["name"], "notes.txt");
        assert_eq!(info["extension"], "txt");
        assert_eq!(info["size"], 10);
        assert_eq!(info["mime_type"], "text/plain");
        assert_millis(&info["create_at"]);
    }
}

#[tokio::test]
async fn a_raw_body_upload_takes_channel_and_filename_from_the_query() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, channel) = setup(&world, "O", &[&ada_user]).await;
    let answer = ada
        .send_bytes(
            "POST",
            &format!("files?channel_id={}&filename=data.json", id(&channel)),
            "application/octet-stream",
            b"{\"a\":1}".to_vec(),
        )
        .await
        .expect(201);
    let info = &answer["file_infos"][0];
    assert_eq!(info["name"], "data.json");
    assert_eq!(info["size"], 7);
    assert_eq!(info["mime_type"], "application/json");
}

async fn upload(client: &support::Client, channel: &Value, name: &str, bytes: &[u8]) -> Value {
    let channel_id = id(channel);
    let body = Multipart::new(&[
        Part::Field("channel_id", &channel_id),
        Part::File("files", name, bytes),
    ]);
    let answer = client
        .send_bytes("POST", "files", &body.content_type(), body.body)
        .await;
    answer.expect(201)["file_infos"][0].clone()
}

#[tokio::test]
async fn posts_bind_only_their_authors_unattached_files_and_drop_the_rest_silently() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let (_, channel) = setup(&world, "O", &[&ada_user, &bea_user]).await;
    let mine = upload(&ada, &channel, "report.pdf", b"%PDF-1.4").await;
    let picture = upload(&ada, &channel, "cat.png", b"\x89PNG....").await;
    let theirs = upload(&bea, &channel, "theirs.txt", b"bea's").await;
    let (mut socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;

    let post = ada
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "files",
                   "file_ids": [id(&mine), id(&theirs), "aaaaaaaaaaaaaaaaaaaaaaaaaa"]}),
        )
        .await
        .expect(201);
    assert_eq!(post["file_ids"], json!([id(&mine)]));
    let files = post["metadata"]["files"].as_array().expect("files");
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["id"], mine["id"]);
    assert_eq!(files[0]["post_id"], post["id"]);
    let frames = socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert_eq!(posted[0]["data"]["otherFile"], "true");
    assert!(posted[0]["data"].get("image").is_none(), "{}", posted[0]);

    // Attached once, a file is not bound again.
    let again = ada
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "again", "file_ids": [id(&mine)]}),
        )
        .await
        .expect(201);
    assert_eq!(again["file_ids"], json!([]));
    let frames = socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert!(
        posted[0]["data"].get("otherFile").is_none(),
        "{}",
        posted[0]
    );

    ada.post(
        "posts",
        json!({"channel_id": id(&channel), "message": "pic", "file_ids": [id(&picture)]}),
    )
    .await
    .expect(201);
    let frames = socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert_eq!(posted[0]["data"]["otherFile"], "true");
    assert_eq!(posted[0]["data"]["image"], "true");
    let infos = bea
        .get(&format!("posts/{}/files/info", id(&post)))
        .await
        .expect(200);
    assert_eq!(infos.as_array().expect("infos").len(), 1);
}

#[tokio::test]
async fn a_file_over_max_file_size_is_413() {
    let world = World::new().await;
    let (_, channel) = setup(&world, "O", &[]).await;
    world
        .admin
        .put(
            "config/patch",
            json!({"FileSettings": {"MaxFileSize": 1000}}),
        )
        .await
        .expect(200);
    let channel_id = id(&channel);
    let big = vec![b'x'; 1001];
    let body = Multipart::new(&[
        Part::Field("channel_id", &channel_id),
        Part::File("files", "big.bin", &big),
    ]);
    world
        .admin
        .send_bytes("POST", "files", &body.content_type(), body.body)
        .await
        .expect_error(413, "api.file.upload_file.too_large_detailed.app_error");
    let fits = vec![b'x'; 1000];
    upload(&world.admin, &channel, "fits.bin", &fits).await;
}

#[tokio::test]
async fn uploads_are_501_while_file_attachments_are_disabled() {
    let world = World::new().await;
    let (_, channel) = setup(&world, "O", &[]).await;
    world
        .admin
        .put(
            "config/patch",
            json!({"FileSettings": {"EnableFileAttachments": false}}),
        )
        .await
        .expect(200);
    let channel_id = id(&channel);
    let body = Multipart::new(&[
        Part::Field("channel_id", &channel_id),
        Part::File("files", "a.txt", b"a"),
    ]);
    world
        .admin
        .send_bytes("POST", "files", &body.content_type(), body.body)
        .await
        .expect_error(501, "api.file.attachments.disabled.app_error");
    // The setting is checked before anything else in the request.
    let empty = Multipart::new(&[Part::File("files", "a.txt", b"a")]);
    world
        .admin
        .send_bytes("POST", "files", &empty.content_type(), empty.body)
        .await
        .expect_error(501, "api.file.attachments.disabled.app_error");
}

#[tokio::test]
async fn uploads_need_a_channel_and_upload_permission_in_it() {
    let world = World::new().await;
    let (carl, carl_user) = world.person("carl").await;
    let (team, channel) = setup(&world, "P", &[]).await;
    world.add_to_team(&team, &carl_user).await;
    let channel_id = id(&channel);
    let body = Multipart::new(&[
        Part::Field("channel_id", &channel_id),
        Part::File("files", "a.txt", b"a"),
    ]);
    carl.send_bytes("POST", "files", &body.content_type(), body.body)
        .await
        .expect_error(403, "api.context.permissions.app_error");
    let no_channel = Multipart::new(&[Part::File("files", "a.txt", b"a")]);
    carl.send_bytes("POST", "files", &no_channel.content_type(), no_channel.body)
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
}

#[tokio::test]
async fn file_info_and_bytes_follow_the_uploader_then_the_posts_channel() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let (carl, carl_user) = world.person("carl").await;
    let (team, channel) = setup(&world, "P", &[&ada_user, &bea_user]).await;
    world.add_to_team(&team, &carl_user).await;
    let file = upload(&ada, &channel, "notes.txt", b"hello file").await;
    let info_path = format!("files/{}/info", id(&file));

    let info = ada.get(&info_path).await.expect(200);
    assert_eq!(info["id"], file["id"]);
    // Before it is attached, only the uploader may read it.
    bea.get(&info_path)
        .await
        .expect_error(403, "api.context.permissions.app_error");

    ada.post(
        "posts",
        json!({"channel_id": id(&channel), "message": "see", "file_ids": [id(&file)]}),
    )
    .await
    .expect(201);
    let info = bea.get(&info_path).await.expect(200);
    assert_eq!(info["name"], "notes.txt");
    let (status, headers, bytes) = bea.get_bytes(&format!("files/{}", id(&file))).await;
    assert_eq!(status, 200);
    assert_eq!(bytes, b"hello file");
    assert_eq!(headers["content-type"], "text/plain");
    let disposition = headers["content-disposition"].to_str().expect("ascii");
    assert!(disposition.starts_with("attachment;"), "{disposition}");
    assert!(disposition.contains("notes.txt"), "{disposition}");

    carl.get(&info_path)
        .await
        .expect_error(403, "api.context.permissions.app_error");
    let (status, _, body) = carl.get_bytes(&format!("files/{}", id(&file))).await;
    assert_eq!(status, 403);
    let error: Value = serde_json::from_slice(&body).expect("an error body");
    assert_eq!(error["id"], "api.context.permissions.app_error");
    ada.get("files/aaaaaaaaaaaaaaaaaaaaaaaaaa/info")
        .await
        .expect_error(404, "app.file_info.get.app_error");
}
