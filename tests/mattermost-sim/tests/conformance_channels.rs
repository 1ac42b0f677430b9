//! Conformance: teams, channels and membership — contract §A.2, §A.3, the
//! membership events of §B.6/§B.6a and §F.1 items 4–8 (404 versus 403,
//! idempotent adds, direct and group messages, archived names, `user_added`
//! and both `user_removed` copies, system posts, delivery following
//! membership).

mod support;

use serde_json::{Value, json};
use support::{Socket, World, assert_id, assert_millis, id, named};

/// The ids of the channels a list holds.
fn ids_of(list: &Value) -> Vec<String> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["id"].as_str().expect("id").to_string())
        .collect()
}

/// A channel of a team by name, as the admin reads it.
async fn channel_named(world: &World, team: &Value, name: &str) -> Value {
    world
        .admin
        .get(&format!("teams/{}/channels/name/{name}", id(team)))
        .await
        .expect(200)
}

/// The channel's only post of a `system_*` type.
async fn system_post(world: &World, channel: &Value, kind: &str) -> Value {
    let posts: Vec<Value> = posts_oldest_first(world, channel)
        .await
        .into_iter()
        .filter(|p| p["type"] == kind)
        .collect();
    assert_eq!(posts.len(), 1, "{kind} in {posts:?}");
    posts[0].clone()
}

/// The channel's posts in `order`, oldest first.
async fn posts_oldest_first(world: &World, channel: &Value) -> Vec<Value> {
    let list = world
        .admin
        .get(&format!("channels/{}/posts", id(channel)))
        .await
        .expect(200);
    let mut posts: Vec<Value> = list["order"]
        .as_array()
        .expect("order")
        .iter()
        .map(|id| list["posts"][id.as_str().expect("id")].clone())
        .collect();
    posts.reverse();
    posts
}

#[tokio::test]
async fn a_new_team_has_town_square_and_off_topic_which_its_creator_joins() {
    let world = World::new().await;
    let team = world
        .admin
        .post(
            "teams",
            json!({"name": "acme", "display_name": "Acme", "type": "O"}),
        )
        .await
        .expect(201);
    assert_id(&team["id"]);
    assert_millis(&team["create_at"]);
    assert_eq!(team["name"], "acme");
    assert_eq!(team["display_name"], "Acme");
    assert_eq!(team["type"], "O");
    assert_eq!(team["delete_at"], 0);
    let member = world
        .admin
        .get(&format!(
            "teams/{}/members/{}",
            id(&team),
            id(&world.admin_user)
        ))
        .await
        .expect(200);
    assert_eq!(member["roles"], "team_user team_admin");
    assert_eq!(member["scheme_admin"], true);

    for (name, display) in [("town-square", "Town Square"), ("off-topic", "Off-Topic")] {
        let channel = channel_named(&world, &team, name).await;
        assert_eq!(channel["type"], "O");
        assert_eq!(channel["display_name"], display);
        assert_eq!(channel["team_id"], team["id"]);
        let me = world
            .admin
            .get(&format!("channels/{}/members/me", id(&channel)))
            .await
            .expect(200);
        assert_eq!(me["user_id"], world.admin_user["id"]);
        assert_eq!(me["channel_id"], channel["id"]);
    }
    world
        .admin
        .post(
            "teams",
            json!({"name": "acme", "display_name": "Again", "type": "O"}),
        )
        .await
        .expect_error(400, "app.team.save.existing.app_error");
    world
        .admin
        .post(
            "teams",
            json!({"name": "Not Valid!", "display_name": "x", "type": "O"}),
        )
        .await
        .expect_error(400, "model.team.is_valid.name.app_error");
}

#[tokio::test]
async fn team_lookups_are_404_when_absent_and_403_when_closed_to_the_caller() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let team = world.team("acme").await;
    ada.get("teams/name/nosuch")
        .await
        .expect_error(404, "app.team.get_by_name.missing.app_error");
    ada.get("teams/aaaaaaaaaaaaaaaaaaaaaaaaaa")
        .await
        .expect_error(404, "app.team.get.find.app_error");
    // API-created teams do not allow open invites, so a non-member may not see
    // one: 403, which a client must not read as "absent".
    assert_eq!(team["allow_open_invite"], false);
    ada.get("teams/name/acme")
        .await
        .expect_error(403, "api.context.permissions.app_error");
    ada.get(&format!("teams/{}", id(&team)))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    world.add_to_team(&team, &ada_user).await;
    let found = ada.get("teams/name/acme").await.expect(200);
    assert_eq!(found["id"], team["id"]);
}

#[tokio::test]
async fn team_adds_are_idempotent_and_join_the_default_channels_with_events_and_posts() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let path = format!("teams/{}/members", id(&team));
    let body = json!({"team_id": id(&team), "user_id": id(&ada_user)});

    let member = world.admin.post(&path, body.clone()).await.expect(201);
    assert_eq!(
        member,
        json!({
            "team_id": id(&team), "user_id": id(&ada_user), "roles": "team_user",
            "delete_at": 0, "scheme_user": true, "scheme_admin": false, "scheme_guest": false
        })
    );
    let again = world.admin.post(&path, body).await.expect(201);
    assert_eq!(
        again, member,
        "adding an existing member succeeds unchanged"
    );

    let frames = socket.drain_events().await;
    let added_to_team = named(&frames, "added_to_team");
    assert_eq!(added_to_team.len(), 1, "{frames:?}");
    assert_eq!(added_to_team[0]["data"]["team_id"], team["id"]);
    assert_eq!(added_to_team[0]["data"]["user_id"], ada_user["id"]);
    assert_eq!(added_to_team[0]["broadcast"]["user_id"], ada_user["id"]);

    let town_square = channel_named(&world, &team, "town-square").await;
    let off_topic = channel_named(&world, &team, "off-topic").await;
    let user_added = named(&frames, "user_added");
    let mut channels: Vec<&str> = user_added
        .iter()
        .map(|f| f["broadcast"]["channel_id"].as_str().expect("channel"))
        .collect();
    channels.sort_unstable();
    let mut expected = vec![id_str(&town_square), id_str(&off_topic)];
    expected.sort_unstable();
    assert_eq!(
        channels, expected,
        "one user_added per default channel, once"
    );
    for frame in &user_added {
        assert_eq!(
            frame["data"],
            json!({"user_id": id(&ada_user), "team_id": id(&team)})
        );
    }

    // Added by the admin: "added to the team" in town-square, "added to the
    // channel" elsewhere (Mattermost's postJoinMessageForDefaultChannel).
    let joined_team = system_post(&world, &town_square, "system_add_to_team").await;
    assert_eq!(joined_team["user_id"], world.admin_user["id"]);
    assert_eq!(joined_team["props"]["addedUserId"], ada_user["id"]);
    assert_eq!(joined_team["message"], "ada added to the team by admin.");
    let joined_channel = system_post(&world, &off_topic, "system_add_to_channel").await;
    assert_eq!(joined_channel["props"]["addedUserId"], ada_user["id"]);
    assert_eq!(
        joined_channel["message"],
        "ada added to the channel by admin."
    );
    // The creator joined by itself.
    let first = system_post(&world, &town_square, "system_join_team").await;
    assert_eq!(first["user_id"], world.admin_user["id"]);
    assert_eq!(first["message"], "admin joined the team.");
    assert!(
        posts_oldest_first(&world, &town_square)
            .await
            .iter()
            .all(|p| p["type"] != "system_join_channel"),
        "town-square records team joins"
    );
}

fn id_str(value: &Value) -> &str {
    value["id"].as_str().expect("id")
}

#[tokio::test]
async fn channel_lookups_answer_404_for_absent_and_403_for_unreadable_by_id() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let other_team = world.team("other").await;
    let (ada, ada_user) = world.person("ada").await;
    world.add_to_team(&team, &ada_user).await;
    let public = world.channel(&team, "general", "O").await;
    let private = world.channel(&team, "secret", "P").await;
    let elsewhere = world.channel(&other_team, "elsewhere", "O").await;

    ada.get("channels/aaaaaaaaaaaaaaaaaaaaaaaaaa")
        .await
        .expect_error(404, "app.channel.get.existing.app_error");
    ada.get("channels/not-an-id")
        .await
        .expect_error(400, "api.context.invalid_url_param.app_error");
    // A public channel of one's team is readable without membership.
    let read = ada
        .get(&format!("channels/{}", id(&public)))
        .await
        .expect(200);
    assert_eq!(read["type"], "O");
    assert_eq!(read["team_id"], team["id"]);
    ada.get(&format!("channels/{}", id(&private)))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    ada.get(&format!("channels/{}", id(&elsewhere)))
        .await
        .expect_error(403, "api.context.permissions.app_error");

    let by_name = format!("teams/{}/channels/name/", id(&team));
    let found = ada.get(&format!("{by_name}general")).await.expect(200);
    assert_eq!(found["id"], public["id"]);
    ada.get(&format!("{by_name}nosuch"))
        .await
        .expect_error(404, "app.channel.get_by_name.missing.app_error");
    // By name, Mattermost hides a private channel the caller cannot read
    // behind the same 404 as an absent one.
    ada.get(&format!("{by_name}secret"))
        .await
        .expect_error(404, "app.channel.get_by_name.missing.app_error");
    world.add_to_channel(&private, &ada_user).await;
    ada.get(&format!("{by_name}secret")).await.expect(200);
}

#[tokio::test]
async fn channel_member_lookup_is_404_for_a_non_member_and_403_for_an_unreadable_channel() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bea_user) = world.person("bea").await;
    world.add_to_team(&team, &ada_user).await;
    world.add_to_team(&team, &bea_user).await;
    let public = world.channel(&team, "general", "O").await;
    let private = world.channel(&team, "secret", "P").await;
    world.add_to_channel(&public, &bea_user).await;

    let member = ada
        .get(&format!(
            "channels/{}/members/{}",
            id(&public),
            id(&bea_user)
        ))
        .await
        .expect(200);
    assert_eq!(member["channel_id"], public["id"]);
    assert_eq!(member["user_id"], bea_user["id"]);
    assert_eq!(member["roles"], "channel_user");
    assert!(member["notify_props"].is_object(), "{member}");
    for key in [
        "last_viewed_at",
        "msg_count",
        "mention_count",
        "last_update_at",
    ] {
        assert!(member[key].is_i64(), "{key}: {member}");
    }
    for key in ["scheme_user", "scheme_admin", "scheme_guest"] {
        assert!(member[key].is_boolean(), "{key}: {member}");
    }

    ada.get(&format!(
        "channels/{}/members/{}",
        id(&public),
        id(&ada_user)
    ))
    .await
    .expect_error(404, "app.channel.get_member.missing.app_error");
    ada.get(&format!("channels/{}/members/me", id(&public)))
        .await
        .expect_error(404, "app.channel.get_member.missing.app_error");
    // The private channel exists and the admin is in it, but Ada cannot
    // read it: 403, never "not a member".
    ada.get(&format!(
        "channels/{}/members/{}",
        id(&private),
        id(&world.admin_user)
    ))
    .await
    .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn channel_adds_are_idempotent_and_refused_for_users_outside_the_team() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, out_user) = world.person("out").await;
    world.add_to_team(&team, &ada_user).await;
    let channel = world.channel(&team, "general", "O").await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let path = format!("channels/{}/members", id(&channel));

    let first = world
        .admin
        .post(&path, json!({"user_id": id(&ada_user)}))
        .await
        .expect(201);
    assert_eq!(first["user_id"], ada_user["id"]);
    let frames = socket.drain_events().await;
    assert_eq!(named(&frames, "user_added").len(), 1, "{frames:?}");
    assert_eq!(named(&frames, "posted").len(), 1, "{frames:?}");

    let again = world
        .admin
        .post(&path, json!({"user_id": id(&ada_user)}))
        .await
        .expect(201);
    assert_eq!(again, first);
    let frames = socket.drain_events().await;
    assert!(
        frames.is_empty(),
        "a repeated add changes nothing: {frames:?}"
    );
    assert_eq!(
        posts_oldest_first(&world, &channel)
            .await
            .iter()
            .filter(|p| p["type"] == "system_add_to_channel")
            .count(),
        1
    );

    world
        .admin
        .post(&path, json!({"user_id": id(&out_user)}))
        .await
        .expect_error(404, "app.team.get_member.missing.app_error");
}

#[tokio::test]
async fn direct_messages_are_named_by_sorted_ids_have_no_team_and_appear_in_every_team_list() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bea_user) = world.person("bea").await;
    let (carl, _) = world.person("carl").await;
    let team_a = world.team("acme").await;
    let team_b = world.team("bravo").await;
    for team in [&team_a, &team_b] {
        world.add_to_team(team, &ada_user).await;
    }

    let dm = ada
        .post("channels/direct", json!([id(&bea_user), id(&ada_user)]))
        .await
        .expect(201);
    assert_id(&dm["id"]);
    assert_eq!(dm["type"], "D");
    assert_eq!(dm["team_id"], "");
    let mut pair = [id(&ada_user), id(&bea_user)];
    pair.sort();
    assert_eq!(dm["name"], format!("{}__{}", pair[0], pair[1]));
    let again = ada
        .post("channels/direct", json!([id(&ada_user), id(&bea_user)]))
        .await
        .expect(201);
    assert_eq!(again["id"], dm["id"], "the same DM, created once");

    for team in [&team_a, &team_b] {
        let mine = ada
            .get(&format!("users/me/teams/{}/channels", id(team)))
            .await
            .expect(200);
        assert!(
            ids_of(&mine).contains(&id(&dm)),
            "DM missing from {}",
            team["name"]
        );
    }
    // Only its two members may read or post in it.
    carl.get(&format!("channels/{}", id(&dm)))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    carl.post("channels/direct", json!([id(&ada_user), id(&bea_user)]))
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn adding_members_to_direct_and_group_messages_is_refused_with_400() {
    let world = World::new().await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bea_user) = world.person("bea").await;
    let (_, carl_user) = world.person("carl").await;
    let (_, dan_user) = world.person("dan").await;
    let dm = ada
        .post("channels/direct", json!([id(&ada_user), id(&bea_user)]))
        .await
        .expect(201);
    let gm = ada
        .post(
            "channels/group",
            json!([id(&ada_user), id(&bea_user), id(&carl_user)]),
        )
        .await
        .expect(201);
    assert_eq!(gm["type"], "G");
    assert_eq!(gm["team_id"], "");
    for channel in [&dm, &gm] {
        ada.post(
            &format!("channels/{}/members", id(channel)),
            json!({"user_id": id(&dan_user)}),
        )
        .await
        .expect_error(400, "api.channel.add_user_to_channel.type.app_error");
    }
}

#[tokio::test]
async fn an_archived_channel_keeps_its_name_and_refuses_members_and_posts() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (_, ada_user) = world.person("ada").await;
    world.add_to_team(&team, &ada_user).await;
    let channel = world.channel(&team, "old", "O").await;
    let archived = world
        .admin
        .delete(&format!("channels/{}", id(&channel)))
        .await
        .expect(200);
    assert_eq!(archived, json!({"status": "OK"}));

    world
        .admin
        .post(
            "channels",
            json!({"team_id": id(&team), "name": "old", "display_name": "Old", "type": "O"}),
        )
        .await
        .expect_error(400, "store.sql_channel.save_channel.exists.app_error");
    world
        .admin
        .get(&format!("teams/{}/channels/name/old", id(&team)))
        .await
        .expect_error(404, "app.channel.get_by_name.missing.app_error");
    let deleted = world
        .admin
        .get(&format!(
            "teams/{}/channels/name/old?include_deleted=true",
            id(&team)
        ))
        .await
        .expect(200);
    assert_eq!(deleted["id"], channel["id"]);
    assert_millis(&deleted["delete_at"]);
    world
        .admin
        .post(
            &format!("channels/{}/members", id(&channel)),
            json!({"user_id": id(&ada_user)}),
        )
        .await
        .expect_error(400, "api.channel.add_user_to_channel.deleted.app_error");
    world
        .admin
        .post(
            "posts",
            json!({"channel_id": id(&channel), "message": "late"}),
        )
        .await
        .expect_error(400, "api.post.create_post.can_not_post_to_deleted.error");
}

#[tokio::test]
async fn channel_creation_validates_and_makes_the_creator_its_admin_member() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (outsider, _) = world.person("out").await;
    let channel = world
        .admin
        .post(
            "channels",
            json!({"team_id": id(&team), "name": "ops", "display_name": "Ops", "type": "P",
                   "purpose": "run things", "header": "hdr"}),
        )
        .await
        .expect(201);
    assert_id(&channel["id"]);
    assert_eq!(channel["type"], "P");
    assert_eq!(channel["creator_id"], world.admin_user["id"]);
    assert_eq!(channel["purpose"], "run things");
    assert_eq!(channel["header"], "hdr");
    let me = world
        .admin
        .get(&format!("channels/{}/members/me", id(&channel)))
        .await
        .expect(200);
    assert_eq!(me["roles"], "channel_user channel_admin");

    for bad in ["Has Caps", "bad!name"] {
        world
            .admin
            .post(
                "channels",
                json!({"team_id": id(&team), "name": bad, "display_name": "Bad", "type": "O"}),
            )
            .await
            .expect_error(400, "model.channel.is_valid.1_or_more.app_error");
    }
    outsider
        .post(
            "channels",
            json!({"team_id": id(&team), "name": "mine", "display_name": "Mine", "type": "O"}),
        )
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn user_added_reaches_the_added_user_and_the_members_with_a_system_post() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    world.add_to_team(&team, &ada_user).await;
    world.add_to_team(&team, &bea_user).await;
    let channel = world.channel(&team, "general", "O").await;
    world.add_to_channel(&channel, &bea_user).await;
    let (mut ada_socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let (mut bea_socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;

    world.add_to_channel(&channel, &ada_user).await;
    for socket in [&mut ada_socket, &mut bea_socket] {
        let frames = socket.drain_events().await;
        let added = named(&frames, "user_added");
        assert_eq!(added.len(), 1, "{frames:?}");
        assert_eq!(
            added[0]["data"],
            json!({"user_id": id(&ada_user), "team_id": id(&team)})
        );
        assert_eq!(added[0]["broadcast"]["channel_id"], channel["id"]);
        assert_eq!(added[0]["broadcast"]["user_id"], "");
        assert_eq!(added[0]["broadcast"]["team_id"], "");
        let posted = named(&frames, "posted");
        assert_eq!(posted.len(), 1, "{frames:?}");
        let post = Socket::inner(posted[0], "post");
        assert_eq!(post["type"], "system_add_to_channel");
        assert_eq!(post["user_id"], world.admin_user["id"]);
        assert_eq!(post["props"]["addedUserId"], ada_user["id"]);
        assert_eq!(post["props"]["addedUsername"], "ada");
        assert_eq!(post["props"]["userId"], world.admin_user["id"]);
        assert_eq!(posted[0]["data"]["sender_name"], "System");
    }

    // The added user receives the channel's events at once.
    world.post(&bea, &channel, "welcome").await;
    let frames = ada_socket.drain_events().await;
    let posted = named(&frames, "posted");
    assert_eq!(posted.len(), 1, "{frames:?}");
    assert_eq!(Socket::inner(posted[0], "post")["message"], "welcome");
}

#[tokio::test]
async fn self_join_posts_system_join_channel() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    world.add_to_team(&team, &ada_user).await;
    let channel = world.channel(&team, "general", "O").await;
    let member = ada
        .post(
            &format!("channels/{}/members", id(&channel)),
            json!({"user_id": id(&ada_user)}),
        )
        .await
        .expect(201);
    assert_eq!(member["user_id"], ada_user["id"]);
    let joins: Vec<Value> = posts_oldest_first(&world, &channel)
        .await
        .into_iter()
        .filter(|p| p["type"] == "system_join_channel" && p["user_id"] == ada_user["id"])
        .collect();
    assert_eq!(joins.len(), 1, "{joins:?}");
    assert_eq!(joins[0]["message"], "ada joined the channel.");
    assert_eq!(joins[0]["props"], json!({"username": "ada"}));
}

#[tokio::test]
async fn user_removed_goes_to_the_members_by_channel_and_to_the_removed_user_by_user() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (bea, bea_user) = world.person("bea").await;
    let channel = world.channel(&team, "general", "O").await;
    world
        .members(&team, &channel, &[&ada_user, &bea_user])
        .await;
    let (mut ada_socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    let (mut bea_socket, _) = Socket::open(&world.ws(), bea.token.as_deref().expect("token")).await;

    let removed = world
        .admin
        .delete(&format!(
            "channels/{}/members/{}",
            id(&channel),
            id(&ada_user)
        ))
        .await
        .expect(200);
    assert_eq!(removed, json!({"status": "OK"}));

    let frames = ada_socket.drain_events().await;
    let own = named(&frames, "user_removed");
    assert_eq!(own.len(), 1, "{frames:?}");
    assert_eq!(
        own[0]["data"],
        json!({"channel_id": id(&channel), "remover_id": id(&world.admin_user)})
    );
    assert_eq!(own[0]["broadcast"]["user_id"], ada_user["id"]);
    assert_eq!(own[0]["broadcast"]["channel_id"], "");
    assert_eq!(own[0]["broadcast"]["team_id"], "");
    assert!(
        named(&frames, "posted").is_empty(),
        "the removed user does not see the removal post: {frames:?}"
    );

    let frames = bea_socket.drain_events().await;
    let others = named(&frames, "user_removed");
    assert_eq!(others.len(), 1, "{frames:?}");
    assert_eq!(
        others[0]["data"],
        json!({"user_id": id(&ada_user), "remover_id": id(&world.admin_user)})
    );
    assert_eq!(others[0]["broadcast"]["channel_id"], channel["id"]);
    assert_eq!(others[0]["broadcast"]["user_id"], "");
    assert_eq!(others[0]["broadcast"]["team_id"], "");
    let posted = named(&frames, "posted");
    assert_eq!(posted.len(), 1, "{frames:?}");
    let post = Socket::inner(posted[0], "post");
    assert_eq!(post["type"], "system_remove_from_channel");
    assert_eq!(post["user_id"], world.admin_user["id"]);
    assert_eq!(post["props"]["removedUserId"], ada_user["id"]);
    assert_eq!(post["props"]["removedUsername"], "ada");

    // From now on the removed user hears nothing from the channel.
    world.post(&bea, &channel, "after").await;
    let frames = ada_socket.drain_events().await;
    assert!(frames.is_empty(), "{frames:?}");
    let frames = bea_socket.drain_events().await;
    assert_eq!(named(&frames, "posted").len(), 1);

    world
        .admin
        .delete(&format!(
            "channels/{}/members/{}",
            id(&channel),
            id(&ada_user)
        ))
        .await
        .expect_error(404, "app.channel.get_member.missing.app_error");
}

#[tokio::test]
async fn leaving_posts_system_leave_channel_and_town_square_cannot_be_left() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let channel = world.channel(&team, "general", "O").await;
    world.members(&team, &channel, &[&ada_user]).await;
    ada.delete(&format!("channels/{}/members/me", id(&channel)))
        .await
        .expect(200);
    let last = system_post(&world, &channel, "system_leave_channel").await;
    assert_eq!(last["user_id"], ada_user["id"]);
    assert_eq!(last["message"], "ada left the channel.");
    assert_eq!(last["props"], json!({"username": "ada"}));

    let town_square = channel_named(&world, &team, "town-square").await;
    ada.delete(&format!("channels/{}/members/me", id(&town_square)))
        .await
        .expect_error(400, "api.channel.remove.default.app_error");
}

#[tokio::test]
async fn archiving_refuses_what_mattermost_refuses_and_leaves_a_system_post() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let (_, bea_user) = world.person("bea").await;
    let channel = world.channel(&team, "old", "O").await;
    world.members(&team, &channel, &[&ada_user]).await;
    world.add_to_team(&team, &bea_user).await;
    let square = channel_named(&world, &team, "town-square").await;
    world
        .admin
        .delete(&format!("channels/{}", id(&square)))
        .await
        .expect_error(400, "api.channel.delete_channel.cannot.app_error");
    let dm = ada
        .post("channels/direct", json!([id(&ada_user), id(&bea_user)]))
        .await
        .expect(201);
    ada.delete(&format!("channels/{}", id(&dm)))
        .await
        .expect_error(400, "api.channel.delete_channel.type.invalid");

    // A channel user may archive their channel, once.
    ada.delete(&format!("channels/{}", id(&channel)))
        .await
        .expect(200);
    ada.delete(&format!("channels/{}", id(&channel)))
        .await
        .expect_error(400, "api.channel.delete_channel.deleted.app_error");
    let post = system_post(&world, &channel, "system_channel_deleted").await;
    assert_eq!(post["message"], "ada archived the channel.");
    assert_eq!(post["user_id"], ada_user["id"]);
}

#[tokio::test]
async fn restoring_takes_a_team_admin_and_brings_the_channel_back_with_its_members() {
    let world = World::new().await;
    let team = world.team("acme").await;
    let (ada, ada_user) = world.person("ada").await;
    let channel = world.channel(&team, "old", "P").await;
    world.members(&team, &channel, &[&ada_user]).await;
    let (mut socket, _) = Socket::open(&world.ws(), ada.token.as_deref().expect("token")).await;
    world
        .admin
        .post(&format!("channels/{}/restore", id(&channel)), json!({}))
        .await
        .expect_error(400, "api.channel.restore_channel.restored.app_error");
    ada.delete(&format!("channels/{}", id(&channel)))
        .await
        .expect(200);

    // A channel member is no team admin: `manage_team` is the team's.
    ada.post(&format!("channels/{}/restore", id(&channel)), json!({}))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    world
        .admin
        .post("channels/aaaaaaaaaaaaaaaaaaaaaaaaaa/restore", json!({}))
        .await
        .expect_error(404, "app.channel.get.existing.app_error");
    let restored = world
        .admin
        .post(&format!("channels/{}/restore", id(&channel)), json!({}))
        .await
        .expect(200);
    assert_eq!(restored["id"], channel["id"]);
    assert_eq!(restored["delete_at"], 0);
    assert_millis(&restored["update_at"]);
    let event = socket
        .event("channel_restored", std::time::Duration::from_secs(5))
        .await;
    assert_eq!(event["data"]["channel_id"], channel["id"]);
    assert_eq!(event["broadcast"]["team_id"], team["id"]);

    ada.get(&format!(
        "channels/{}/members/{}",
        id(&channel),
        id(&ada_user)
    ))
    .await
    .expect(200);
    ada.post(
        "posts",
        json!({"channel_id": id(&channel), "message": "back"}),
    )
    .await
    .expect(201);
    let post = system_post(&world, &channel, "system_channel_restored").await;
    assert_eq!(post["message"], "admin unarchived the channel.");
}

/// `GET /channels/{id}/members` pages as the server does: 60 a page unless
/// asked, at most 200, `page` counting from 0; a client that reads one page
/// of a big channel misses everyone after it.
#[tokio::test]
async fn channel_members_come_a_page_at_a_time() {
    let world = World::new().await;
    let mut people = Vec::new();
    for n in 0..4 {
        people.push(support::person(&world.base, &format!("pager{n}")).await.1);
    }
    let refs: Vec<&Value> = people.iter().collect();
    let (_, channel) = support::team_and_channel(&world.admin, "paging", "crowd", "O", &refs).await;
    let all = world
        .admin
        .get(&format!("channels/{}/members", id(&channel)))
        .await
        .expect(200);
    // The four and the admin, who made the channel.
    assert_eq!(all.as_array().expect("list").len(), 5, "{all}");
    let mut seen = Vec::new();
    for (page, expected) in [(0, 2), (1, 2), (2, 1), (3, 0)] {
        let listed = world
            .admin
            .get(&format!(
                "channels/{}/members?page={page}&per_page=2",
                id(&channel)
            ))
            .await
            .expect(200);
        let listed = listed.as_array().expect("list").clone();
        assert_eq!(listed.len(), expected, "page {page}: {listed:?}");
        seen.extend(listed.iter().map(|m| m["user_id"].clone()));
    }
    seen.sort_by_key(ToString::to_string);
    seen.dedup();
    assert_eq!(seen.len(), 5, "every member once across the pages");
}
