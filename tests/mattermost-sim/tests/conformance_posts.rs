//! Conformance: posts — contract §A.4 (create, patch, history rows, replies,
//! delete, the four paging modes), §A.5 (ephemeral posts), §A.11
//! (`MaxPostSize`), §C.1 (`integration` stripped, action ids assigned) and
//! §F.1 items 9–14.

mod support;

use std::collections::BTreeSet;

use serde_json::{Value, json};
use support::{Client, Socket, World, assert_id, assert_millis, clock, id, named, settings};

/// A team, a channel of it and the admin in both.
async fn channel(world: &World) -> (Value, Value) {
    let team = world.team("acme").await;
    let channel = world.channel(&team, "general", "O").await;
    (team, channel)
}

/// Holds the clock and moves it past everything so far; later posts get
/// distinct, increasing `create_at` through [`tick`].
async fn freeze(world: &World) -> i64 {
    clock(&world.base, json!({"freeze": true})).await;
    clock(&world.base, json!({"advance_ms": 1000})).await
}

async fn tick(world: &World) -> i64 {
    clock(&world.base, json!({"advance_ms": 1})).await
}

/// `count` posts by `client`, one millisecond apart, oldest first.
async fn posts(world: &World, client: &Client, channel: &Value, count: usize) -> Vec<Value> {
    let mut made = Vec::new();
    for i in 0..count {
        tick(world).await;
        made.push(world.post(client, channel, &format!("post {i}")).await);
    }
    made
}

fn order(list: &Value) -> Vec<String> {
    list["order"]
        .as_array()
        .expect("order")
        .iter()
        .map(|v| v.as_str().expect("id").to_string())
        .collect()
}

fn keys(list: &Value) -> BTreeSet<String> {
    list["posts"]
        .as_object()
        .expect("posts")
        .keys()
        .cloned()
        .collect()
}

fn ids(posts: &[&Value]) -> Vec<String> {
    posts.iter().map(|p| id(p)).collect()
}

async fn list(client: &Client, channel: &Value, query: &str) -> Value {
    client
        .get(&format!("channels/{}/posts{query}", id(channel)))
        .await
        .expect(200)
}

#[tokio::test]
async fn create_answers_201_with_server_fields_and_the_author_from_the_session() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    let (_, ada_user) = world.person("ada").await;
    let post = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "hello", "user_id": id(&ada_user),
                   "props": {"k": "v"}, "create_at": 1}),
        )
        .await
        .expect(201);
    assert_id(&post["id"]);
    assert_eq!(
        post["user_id"], world.admin_user["id"],
        "the author is the caller"
    );
    assert_eq!(post["channel_id"], channel["id"]);
    assert_eq!(post["message"], "hello");
    assert_eq!(post["type"], "");
    assert_eq!(post["root_id"], "");
    assert_eq!(post["original_id"], "");
    assert_eq!(post["props"], json!({"k": "v"}));
    assert_millis(&post["create_at"]);
    assert_eq!(post["update_at"], post["create_at"]);
    assert_eq!(post["edit_at"], 0);
    assert_eq!(post["delete_at"], 0);
    assert_eq!(post["is_pinned"], false);
    let fetched = world
        .admin
        .get(&format!("posts/{}", id(&post)))
        .await
        .expect(200);
    assert_eq!(fetched["message"], "hello");
    assert_eq!(fetched["create_at"], post["create_at"]);
}

#[tokio::test]
async fn a_bot_authors_posts_marked_from_bot() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (bot, bot_user) = world.bot("helper").await;
    world.members(&team, &channel, &[&bot_user]).await;
    let post = world.post(&bot, &channel, "beep").await;
    assert_eq!(post["user_id"], bot_user["user_id"]);
    assert_eq!(post["props"]["from_bot"], "true");
}

#[tokio::test]
async fn posting_needs_membership_in_private_public_and_direct_channels() {
    let world = World::new().await;
    let (team, public) = channel(&world).await;
    let private = world.channel(&team, "secret", "P").await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bea_user) = world.person("bea").await;
    world.add_to_team(&team, &ada_user).await;
    let dm = world
        .admin
        .post(
            "channels/direct",
            json!([id(&world.admin_user), id(&bea_user)]),
        )
        .await
        .expect(201);
    for channel in [&public, &private, &dm] {
        ada.post("posts", json!({"channel_id": id(channel), "message": "hi"}))
            .await
            .expect_error(403, "api.context.permissions.app_error");
    }
    world.add_to_channel(&public, &ada_user).await;
    world.post(&ada, &public, "now a member").await;
}

#[tokio::test]
async fn message_length_is_judged_in_code_points_against_the_current_max_post_size() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    let post = |message: String| {
        let admin = world.admin.clone();
        let body = json!({"channel_id": id(&channel), "message": message});
        async move { admin.post("posts", body).await }
    };
    settings(&world.base, json!({"max_post_size": 10})).await;
    // Ten code points of one, two, three and four UTF-8 bytes (the last
    // ones two UTF-16 units each): at the limit, whatever their width.
    let ten = "aé€😀😀😀😀😀😀😀".to_string();
    assert_eq!(ten.chars().count(), 10);
    assert_eq!(ten.encode_utf16().count(), 17);
    post(ten.clone()).await.expect(201);
    let eleven = format!("{ten}é");
    post(eleven.clone())
        .await
        .expect_error(400, "model.post.is_valid.message_length.app_error");
    // The next post is judged by a limit changed at run time.
    settings(&world.base, json!({"max_post_size": 11})).await;
    post(eleven).await.expect(201);
    post(format!("{ten}😀😀"))
        .await
        .expect_error(400, "model.post.is_valid.message_length.app_error");
    // Patches are judged too.
    let made = post("short".into()).await.expect(201);
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&made)),
            json!({"message": "x".repeat(12)}),
        )
        .await
        .expect_error(400, "model.post.is_valid.message_length.app_error");
}

#[tokio::test]
async fn client_config_gives_max_post_size_as_a_string_and_needs_format_old() {
    let world = World::new().await;
    let (ada, _) = world.person("ada").await;
    let config = ada.get("config/client?format=old").await.expect(200);
    assert_eq!(config["MaxPostSize"], "16383");
    settings(&world.base, json!({"max_post_size": 4000})).await;
    let config = ada.get("config/client?format=old").await.expect(200);
    assert_eq!(config["MaxPostSize"], "4000");
    // The limited config an anonymous client gets has no MaxPostSize.
    let limited = world
        .anonymous()
        .get("config/client?format=old")
        .await
        .expect(200);
    assert!(limited.get("MaxPostSize").is_none(), "{limited}");
    assert!(limited["Version"].is_string());

    ada.get("config/client")
        .await
        .expect_error(501, "api.config.client.old_format.app_error");
    ada.get("config/client?format=new")
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
}

#[tokio::test]
async fn root_id_must_name_a_live_root_post_of_the_same_channel() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let other = world.channel(&team, "other", "O").await;
    let root = world.post(&world.admin, &channel, "root").await;
    let reply = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "reply", "root_id": id(&root)}),
        )
        .await
        .expect(201);
    assert_eq!(reply["root_id"], root["id"]);

    let reply_to = |root_id: String, channel: &Value| {
        let admin = world.admin.clone();
        let body = json!({"channel_id": id(channel), "message": "x", "root_id": root_id});
        async move { admin.post("posts", body).await }
    };
    reply_to(id(&reply), &channel)
        .await
        .expect_error(400, "api.post.create_post.root_id.app_error");
    reply_to("aaaaaaaaaaaaaaaaaaaaaaaaaa".into(), &channel)
        .await
        .expect_error(400, "api.post.create_post.root_id.app_error");
    reply_to(id(&root), &other)
        .await
        .expect_error(400, "api.post.create_post.channel_root_id.app_error");
    let gone = world.post(&world.admin, &channel, "gone").await;
    world
        .admin
        .delete(&format!("posts/{}", id(&gone)))
        .await
        .expect(200);
    reply_to(id(&gone), &channel)
        .await
        .expect_error(400, "api.post.create_post.root_id.app_error");
}

#[tokio::test]
async fn system_types_cannot_be_posted_through_the_api() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "x", "type": "system_join_channel"}),
        )
        .await
        .expect_error(400, "api.context.invalid_body_param.app_error");
}

#[tokio::test]
async fn a_reply_bumps_its_roots_update_at_reply_count_and_last_reply_at() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let root = world.post(&world.admin, &channel, "root").await;
    let at = tick(&world).await;
    world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "reply", "root_id": id(&root)}),
        )
        .await
        .expect(201);
    let root_now = world
        .admin
        .get(&format!("posts/{}", id(&root)))
        .await
        .expect(200);
    assert_eq!(root_now["update_at"], at);
    assert_eq!(root_now["last_reply_at"], at);
    assert_eq!(root_now["reply_count"], 1);
    assert_eq!(root_now["edit_at"], 0, "a reply is no edit");
}

#[tokio::test]
async fn patch_replaces_the_whole_props_map_and_keeps_absent_fields() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    let post = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "m", "props": {"a": 1, "b": 2}}),
        )
        .await
        .expect(201);
    let patched = world
        .admin
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"props": {"c": 3}}),
        )
        .await
        .expect(200);
    assert_eq!(patched["props"], json!({"c": 3}), "nothing unsent survives");
    assert_eq!(patched["message"], "m", "an absent message is unchanged");
    let patched = world
        .admin
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"message": "n"}),
        )
        .await
        .expect(200);
    assert_eq!(
        patched["props"],
        json!({"c": 3}),
        "absent props are unchanged"
    );
    assert_eq!(patched["message"], "n");
}

#[tokio::test]
async fn a_patch_keeps_a_bots_identity_props() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (bot, bot_user) = world.bot("helper").await;
    world.members(&team, &channel, &[&bot_user]).await;
    let post = world.post(&bot, &channel, "prompt").await;
    // Mattermost 11 re-adds from_bot after a props replacement.
    let patched = bot
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"message": "done", "props": {"attachments": []}}),
        )
        .await
        .expect(200);
    assert_eq!(
        patched["props"],
        json!({"attachments": [], "from_bot": "true"})
    );
}

#[tokio::test]
async fn edit_at_follows_the_message_while_update_at_follows_every_change() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let post = world.post(&world.admin, &channel, "first").await;
    let path = format!("posts/{}/patch", id(&post));

    let at = tick(&world).await;
    let edited = world
        .admin
        .put(&path, json!({"message": "second"}))
        .await
        .expect(200);
    assert_eq!(edited["edit_at"], at);
    assert_eq!(edited["update_at"], at);
    assert_eq!(edited["create_at"], post["create_at"]);

    let later = tick(&world).await;
    let props_only = world
        .admin
        .put(&path, json!({"props": {"x": "y"}}))
        .await
        .expect(200);
    assert_eq!(
        props_only["edit_at"], at,
        "props without attachments are no edit"
    );
    assert_eq!(props_only["update_at"], later);

    let pinned_at = tick(&world).await;
    world
        .admin
        .post(&format!("posts/{}/pin", id(&post)), json!({}))
        .await
        .expect(200);
    let pinned = world
        .admin
        .get(&format!("posts/{}", id(&post)))
        .await
        .expect(200);
    assert_eq!(pinned["is_pinned"], true);
    assert_eq!(pinned["edit_at"], at);
    assert_eq!(pinned["update_at"], pinned_at);
}

#[tokio::test]
async fn every_update_keeps_the_previous_version_as_a_history_row_seen_only_through_since() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    let start = freeze(&world).await;
    let post = world.post(&world.admin, &channel, "v1").await;
    let at = tick(&world).await;
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"message": "v2"}),
        )
        .await
        .expect(200);

    let since = list(&world.admin, &channel, &format!("?since={start}")).await;
    let rows: Vec<&Value> = since["posts"]
        .as_object()
        .expect("posts")
        .values()
        .filter(|p| p["original_id"] == post["id"])
        .collect();
    assert_eq!(rows.len(), 1, "{since}");
    let history = rows[0];
    assert_ne!(history["id"], post["id"]);
    assert_eq!(history["delete_at"], at);
    assert_eq!(history["update_at"], at);
    assert_eq!(history["create_at"], post["create_at"]);
    assert_eq!(history["message"], "", "deleted rows carry no content");
    assert!(order(&since).contains(&id(history)));

    let plain = list(&world.admin, &channel, "").await;
    assert!(!keys(&plain).contains(&id(history)));
    let after = list(&world.admin, &channel, &format!("?after={}", id(&post))).await;
    assert!(!keys(&after).contains(&id(history)));
    world
        .admin
        .get(&format!("posts/{}", id(history)))
        .await
        .expect_error(404, "app.post.get.app_error");
}

#[tokio::test]
async fn patching_is_for_the_author_and_refused_for_missing_deleted_and_system_posts() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (ada, ada_user) = world.person("ada").await;
    world.members(&team, &channel, &[&ada_user]).await;
    let admins = world.post(&world.admin, &channel, "admin's").await;
    ada.put(
        &format!("posts/{}/patch", id(&admins)),
        json!({"message": "mine now"}),
    )
    .await
    .expect_error(403, "api.context.permissions.app_error");
    ada.put(
        "posts/aaaaaaaaaaaaaaaaaaaaaaaaaa/patch",
        json!({"message": "x"}),
    )
    .await
    .expect_error(403, "api.context.permissions.app_error");

    let own = world.post(&ada, &channel, "mine").await;
    ada.delete(&format!("posts/{}", id(&own))).await.expect(200);
    ada.put(
        &format!("posts/{}/patch", id(&own)),
        json!({"message": "x"}),
    )
    .await
    .expect_error(400, "api.post.update_post.permissions_details.app_error");

    let list = list(&world.admin, &channel, "").await;
    let system = list["posts"]
        .as_object()
        .expect("posts")
        .values()
        .find(|p| p["type"] == "system_add_to_channel")
        .expect("a system post")
        .clone();
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&system)),
            json!({"message": "x"}),
        )
        .await
        .expect_error(400, "api.post.update_post.system_message.app_error");
}

#[tokio::test]
async fn post_edit_time_limit_refuses_late_edits() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    world
        .admin
        .put(
            "config/patch",
            json!({"ServiceSettings": {"PostEditTimeLimit": 60}}),
        )
        .await
        .expect(200);
    freeze(&world).await;
    let post = world.post(&world.admin, &channel, "quick").await;
    clock(&world.base, json!({"advance_ms": 59_000})).await;
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"message": "in time"}),
        )
        .await
        .expect(200);
    clock(&world.base, json!({"advance_ms": 2_000})).await;
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&post)),
            json!({"message": "too late"}),
        )
        .await
        .expect_error(400, "api.post.update_post.permissions_time_limit.app_error");
}

#[tokio::test]
async fn deleting_a_root_deletes_its_thread_with_one_post_deleted_event() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (bea, bea_user) = world.person("bea").await;
    world.members(&team, &channel, &[&bea_user]).await;
    let root = world.post(&world.admin, &channel, "root").await;
    let reply = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "reply", "root_id": id(&root)}),
        )
        .await
        .expect(201);
    let (mut socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;

    let deleted = world
        .admin
        .delete(&format!("posts/{}", id(&root)))
        .await
        .expect(200);
    assert_eq!(deleted, json!({"status": "OK"}));
    for post in [&root, &reply] {
        world
            .admin
            .get(&format!("posts/{}", id(post)))
            .await
            .expect_error(404, "app.post.get.app_error");
    }
    let frames = socket.drain_events().await;
    let events = named(&frames, "post_deleted");
    assert_eq!(events.len(), 1, "one event, for the root: {frames:?}");
    let event_post = Socket::inner(events[0], "post");
    assert_eq!(event_post["id"], root["id"]);
    assert_eq!(events[0]["broadcast"]["channel_id"], channel["id"]);
    world
        .admin
        .delete(&format!("posts/{}", id(&root)))
        .await
        .expect_error(404, "app.post.get.app_error");
    let plain = list(&world.admin, &channel, "").await;
    assert!(!keys(&plain).contains(&id(&root)) && !keys(&plain).contains(&id(&reply)));
}

#[tokio::test]
async fn plain_paging_lists_posts_newest_first_page_by_page() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let made = posts(&world, &world.admin, &channel, 5).await;
    let newest_first: Vec<String> = made.iter().rev().map(id).collect();
    let first = list(&world.admin, &channel, "?per_page=2").await;
    assert_eq!(order(&first), newest_first[0..2]);
    let second = list(&world.admin, &channel, "?per_page=2&page=1").await;
    assert_eq!(order(&second), newest_first[2..4]);
    let all = list(&world.admin, &channel, "").await;
    let everything = order(&all);
    assert_eq!(everything[0..5], newest_first[..]);
    // Before them, the admin's own join.
    assert_eq!(everything.len(), 6);
    assert_eq!(all["posts"][&everything[5]]["type"], "system_join_channel");
    for id in &everything {
        assert_eq!(all["posts"][id]["id"], id.as_str());
    }
}

#[tokio::test]
async fn after_is_strict_on_create_at_and_skips_a_same_millisecond_post() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    tick(&world).await;
    let anchor = world.post(&world.admin, &channel, "anchor").await;
    let twin = world.post(&world.admin, &channel, "same millisecond").await;
    assert_eq!(twin["create_at"], anchor["create_at"]);
    tick(&world).await;
    let next = world.post(&world.admin, &channel, "next").await;

    let after = list(&world.admin, &channel, &format!("?after={}", id(&anchor))).await;
    assert_eq!(order(&after), vec![id(&next)], "the twin is never returned");
    assert!(!keys(&after).contains(&id(&twin)));
    let before = list(&world.admin, &channel, &format!("?before={}", id(&next))).await;
    assert!(
        order(&before).contains(&id(&twin)),
        "before is strict too, so it finds it"
    );
}

#[tokio::test]
async fn after_takes_the_window_oldest_first_but_lists_it_newest_first() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let made = posts(&world, &world.admin, &channel, 6).await;
    let anchor = &made[0];
    let query = |page: usize| format!("?after={}&per_page=2&page={page}", id(anchor));
    let page0 = list(&world.admin, &channel, &query(0)).await;
    assert_eq!(order(&page0), ids(&[&made[2], &made[1]]));
    let page1 = list(&world.admin, &channel, &query(1)).await;
    assert_eq!(order(&page1), ids(&[&made[4], &made[3]]));
    let page2 = list(&world.admin, &channel, &query(2)).await;
    assert_eq!(order(&page2), ids(&[&made[5]]), "a short page ends it");
    let page3 = list(&world.admin, &channel, &query(3)).await;
    assert!(order(&page3).is_empty());
}

#[tokio::test]
async fn before_lists_the_older_posts_newest_first_and_page_walks_further_back() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let made = posts(&world, &world.admin, &channel, 5).await;
    let anchor = &made[4];
    let query = |page: usize| format!("?before={}&per_page=2&page={page}", id(anchor));
    let page0 = list(&world.admin, &channel, &query(0)).await;
    assert_eq!(order(&page0), ids(&[&made[3], &made[2]]));
    let page1 = list(&world.admin, &channel, &query(1)).await;
    assert_eq!(order(&page1), ids(&[&made[1], &made[0]]));
}

#[tokio::test]
async fn anchors_unknown_give_an_empty_list_malformed_400_and_deleted_still_anchor() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let made = posts(&world, &world.admin, &channel, 3).await;
    for mode in ["after", "before"] {
        let empty = list(
            &world.admin,
            &channel,
            &format!("?{mode}=aaaaaaaaaaaaaaaaaaaaaaaaaa"),
        )
        .await;
        assert!(order(&empty).is_empty(), "{empty}");
        assert!(keys(&empty).is_empty(), "{empty}");
        world
            .admin
            .get(&format!("channels/{}/posts?{mode}=not-an-id", id(&channel)))
            .await
            .expect_error(400, "api.context.invalid_body_param.app_error");
    }
    world
        .admin
        .delete(&format!("posts/{}", id(&made[1])))
        .await
        .expect(200);
    let after = list(&world.admin, &channel, &format!("?after={}", id(&made[1]))).await;
    assert_eq!(order(&after), vec![id(&made[2])]);
    let before = list(&world.admin, &channel, &format!("?before={}", id(&made[1]))).await;
    assert_eq!(order(&before)[0], id(&made[0]));
}

#[tokio::test]
async fn since_returns_every_change_after_the_watermark_including_deleted_posts() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let untouched = world.post(&world.admin, &channel, "untouched").await;
    let edited = world.post(&world.admin, &channel, "edited").await;
    let doomed = world.post(&world.admin, &channel, "doomed").await;
    let watermark = tick(&world).await;
    tick(&world).await;
    let fresh = world.post(&world.admin, &channel, "fresh").await;
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&edited)),
            json!({"message": "changed"}),
        )
        .await
        .expect(200);
    world
        .admin
        .delete(&format!("posts/{}", id(&doomed)))
        .await
        .expect(200);

    // `since` ignores paging.
    let since = list(
        &world.admin,
        &channel,
        &format!("?since={watermark}&per_page=1&page=5"),
    )
    .await;
    let listed: BTreeSet<String> = order(&since).into_iter().collect();
    let history = since["posts"]
        .as_object()
        .expect("posts")
        .values()
        .find(|p| p["original_id"] == edited["id"])
        .expect("the history row")
        .clone();
    let expected: BTreeSet<String> = [id(&fresh), id(&edited), id(&doomed), id(&history)]
        .into_iter()
        .collect();
    assert_eq!(listed, expected);
    assert!(!listed.contains(&id(&untouched)));
    let gone = &since["posts"][id(&doomed)];
    assert_millis(&gone["delete_at"]);
    assert_eq!(
        gone["message"], "",
        "a deleted post's content is not returned"
    );
    assert_eq!(since["posts"][id(&edited)]["message"], "changed");
    // Newest first by create_at.
    let order = order(&since);
    assert_eq!(order[0], id(&fresh));
}

#[tokio::test]
async fn a_reaction_on_a_reply_brings_the_reply_into_since_with_its_root_in_posts_only() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let root = world.post(&world.admin, &channel, "root").await;
    let reply = |message: &str| {
        let admin = world.admin.clone();
        let body = json!({"channel_id": id(&channel), "message": message, "root_id": id(&root)});
        async move { admin.post("posts", body).await.expect(201) }
    };
    let first = reply("first").await;
    tick(&world).await;
    let second = reply("second").await;
    let watermark = tick(&world).await;
    tick(&world).await;
    world
        .admin
        .post(
            "reactions",
            json!({"user_id": id(&world.admin_user), "post_id": id(&first), "emoji_name": "smile"}),
        )
        .await
        .expect(200);
    let since = list(&world.admin, &channel, &format!("?since={watermark}")).await;
    assert_eq!(order(&since), vec![id(&first)]);
    let expected: BTreeSet<String> = [id(&first), id(&root)].into_iter().collect();
    assert_eq!(
        keys(&since),
        expected,
        "the root joins `posts`, its other replies do not"
    );
    assert!(!keys(&since).contains(&id(&second)));
}

#[tokio::test]
async fn the_posts_map_holds_the_threads_a_page_touches_beyond_its_order() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    freeze(&world).await;
    let root = world.post(&world.admin, &channel, "root").await;
    tick(&world).await;
    let early = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "early reply", "root_id": id(&root)}),
        )
        .await
        .expect(201);
    let filler = posts(&world, &world.admin, &channel, 3).await;
    tick(&world).await;
    let late = world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "late reply", "root_id": id(&root)}),
        )
        .await
        .expect(201);
    let page = list(&world.admin, &channel, "?per_page=1").await;
    assert_eq!(order(&page), vec![id(&late)]);
    let expected: BTreeSet<String> = [id(&late), id(&root), id(&early)].into_iter().collect();
    assert_eq!(keys(&page), expected);
    assert!(filler.iter().all(|p| !keys(&page).contains(&id(p))));
}

#[tokio::test]
async fn per_page_is_silently_clamped_to_200() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    for i in 0..205 {
        world
            .anonymous()
            .post(
                "/_sim/post",
                json!({"as": "admin", "channel_id": id(&channel), "message": format!("n{i}")}),
            )
            .await
            .expect(201);
    }
    let page = list(&world.admin, &channel, "?per_page=1000").await;
    assert_eq!(order(&page).len(), 200);
    let default = list(&world.admin, &channel, "").await;
    assert_eq!(order(&default).len(), 60, "the default page is 60");
}

#[tokio::test]
async fn integration_is_stripped_from_every_copy_while_action_ids_are_assigned() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (ada, ada_user) = world.person("ada").await;
    world.members(&team, &channel, &[&ada_user]).await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let secret =
        json!({"url": "http://127.0.0.1:9/hook", "context": {"secret": "context-secret-s3"}});
    let created = world
        .admin
        .post(
            "posts",
            json!({
                "channel_id": id(&channel),
                "message": "decide",
                "props": {"attachments": [{"text": "ok?", "actions": [
                    {"id": "approve", "name": "Approve", "integration": secret},
                    {"name": "Deny", "integration": secret}
                ]}]}
            }),
        )
        .await
        .expect(201);
    let check = |post: &Value, source: &str| {
        let actions = post["props"]["attachments"][0]["actions"]
            .as_array()
            .unwrap_or_else(|| panic!("{source}: no actions in {post}"));
        assert_eq!(actions.len(), 2, "{source}");
        assert_eq!(actions[0]["id"], "approve", "{source}");
        assert_id(&actions[1]["id"]);
        for action in actions {
            assert!(
                action.get("integration").is_none(),
                "{source} leaks: {action}"
            );
        }
        assert!(
            !post.to_string().contains("context-secret-s3"),
            "{source} leaks the context"
        );
    };
    check(&created, "201");
    let fetched = ada
        .get(&format!("posts/{}", id(&created)))
        .await
        .expect(200);
    check(&fetched, "GET");
    assert_eq!(
        fetched["props"]["attachments"][0]["actions"][1]["id"],
        created["props"]["attachments"][0]["actions"][1]["id"],
        "the assigned id is stored"
    );
    let listed = list(&ada, &channel, "").await;
    check(&listed["posts"][id(&created)], "list");
    let thread = ada
        .get(&format!("posts/{}/thread", id(&created)))
        .await
        .expect(200);
    check(&thread["posts"][id(&created)], "thread");
    world
        .admin
        .put(
            &format!("posts/{}/patch", id(&created)),
            json!({"message": "decide now"}),
        )
        .await
        .expect(200);
    let frames = socket.drain_events().await;
    let posted = named(&frames, "posted");
    check(&Socket::inner(posted[0], "post"), "posted");
    let edited = named(&frames, "post_edited");
    check(&Socket::inner(edited[0], "post"), "post_edited");
    // Only letters-and-digits ids are routable.
    let action_id = fetched["props"]["attachments"][0]["actions"][1]["id"]
        .as_str()
        .expect("id");
    assert!(action_id.bytes().all(|b| b.is_ascii_alphanumeric()));
}

#[tokio::test]
async fn a_repeated_pending_post_id_returns_the_post_it_made() {
    let world = World::new().await;
    let (_, channel) = channel(&world).await;
    let body = json!({"channel_id": id(&channel), "message": "once", "pending_post_id": "me:1700000000000"});
    let first = world.admin.post("posts", body.clone()).await.expect(201);
    assert_eq!(
        first["pending_post_id"], "me:1700000000000",
        "echoed on create"
    );
    let again = world.admin.post("posts", body).await.expect(201);
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["message"], "once");
    let listed = list(&world.admin, &channel, "").await;
    let copies = listed["posts"]
        .as_object()
        .expect("posts")
        .values()
        .filter(|p| p["message"] == "once")
        .count();
    assert_eq!(copies, 1);
    // The pending id is not stored.
    let fetched = world
        .admin
        .get(&format!("posts/{}", id(&first)))
        .await
        .expect(200);
    assert_eq!(fetched["pending_post_id"], "");
}

#[tokio::test]
async fn ephemeral_posts_are_for_admins_and_reach_only_their_recipient_never_a_list() {
    let world = World::new().await;
    let (team, channel) = channel(&world).await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let (bot, bot_user) = world.bot("helper").await;
    world
        .members(&team, &channel, &[&ada_user, &bea_user, &bot_user])
        .await;
    let (mut ada_socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let (mut bea_socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;
    let body =
        json!({"user_id": id(&ada_user), "post": {"channel_id": id(&channel), "message": "psst"}});

    bot.post("posts/ephemeral", body.clone())
        .await
        .expect_error(403, "api.context.permissions.app_error");
    let sent = world.admin.post("posts/ephemeral", body).await.expect(201);
    assert_id(&sent["id"]);
    assert_eq!(sent["type"], "system_ephemeral");
    assert_eq!(
        sent["user_id"], world.admin_user["id"],
        "the sender, not the recipient"
    );
    assert_eq!(sent["channel_id"], channel["id"]);
    assert_millis(&sent["create_at"]);

    let frames = ada_socket.drain_events().await;
    let ephemeral = named(&frames, "ephemeral_message");
    assert_eq!(ephemeral.len(), 1, "{frames:?}");
    assert!(named(&frames, "posted").is_empty());
    let post = Socket::inner(ephemeral[0], "post");
    assert_eq!(post["id"], sent["id"]);
    assert_eq!(post["message"], "psst");
    assert_eq!(post["type"], "system_ephemeral");
    assert_eq!(ephemeral[0]["broadcast"]["user_id"], ada_user["id"]);
    assert_eq!(ephemeral[0]["broadcast"]["channel_id"], channel["id"]);
    let frames = bea_socket.drain_events().await;
    assert!(frames.is_empty(), "nobody else hears it: {frames:?}");

    let listed = list(&world.admin, &channel, "").await;
    assert!(!keys(&listed).contains(&id(&sent)));
    world
        .admin
        .get(&format!("posts/{}", id(&sent)))
        .await
        .expect_error(404, "app.post.get.app_error");
}
