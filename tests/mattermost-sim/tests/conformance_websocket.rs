//! Conformance: the WebSocket — contract §B.1–§B.6 (authentication, `hello`,
//! sequence numbers, responses, `ping`, `user_typing`, `posted` and its
//! per-recipient `mentions` by the grammar of §E, out-of-channel notices),
//! the fault hooks of §F.3, and §F.1 items 10, 23–27.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Client, Next, Socket, WAIT, World, assert_id, id, named};

/// A team and channel with Ada, Bea and Carl in both, and Dan in the team
/// only.
struct Room {
    world: World,
    team: Value,
    channel: Value,
    people: Vec<(Client, Value)>,
}

impl Room {
    fn client(&self, i: usize) -> &Client {
        &self.people[i].0
    }
    fn user(&self, i: usize) -> &Value {
        &self.people[i].1
    }
    fn token(&self, i: usize) -> &str {
        self.people[i].0.token.as_deref().expect("token")
    }
    async fn socket(&self, i: usize) -> Socket {
        Socket::open(&self.world.ws(), self.token(i)).await.0
    }
}

const ADA: usize = 0;
const BEA: usize = 1;
const CARL: usize = 2;
const DAN: usize = 3;

async fn room() -> Room {
    let world = World::new().await;
    let team = world.team("acme").await;
    let channel = world.channel(&team, "general", "O").await;
    let mut people = Vec::new();
    for name in ["ada", "bea", "carl", "dan"] {
        people.push(world.person(name).await);
    }
    for person in &people[..3] {
        world.members(&team, &channel, &[&person.1]).await;
    }
    world.add_to_team(&team, &people[DAN].1).await;
    Room {
        world,
        team,
        channel,
        people,
    }
}

/// Reads frames until `count` have come.
async fn frames(socket: &mut Socket, count: usize) -> Vec<Value> {
    let mut got = Vec::new();
    while got.len() < count {
        match socket.next(WAIT).await {
            Next::Frame(frame) => got.push(frame),
            other => panic!("wanted {count} frames, got {got:?} then {other:?}"),
        }
    }
    got
}

#[tokio::test]
async fn challenge_authentication_answers_ok_with_seq_reply_1_and_sends_hello_as_seq_0() {
    let room = room().await;
    let mut socket = Socket::unauthenticated(&room.world.ws()).await;
    let seq = socket
        .send(
            "authentication_challenge",
            json!({"token": room.token(ADA)}),
        )
        .await;
    assert_eq!(seq, 1);
    let got = frames(&mut socket, 2).await;
    let reply = got
        .iter()
        .find(|f| f.get("seq_reply").is_some())
        .expect("reply");
    assert_eq!(reply, &json!({"status": "OK", "seq_reply": 1}));
    let hello = got.iter().find(|f| f["event"] == "hello").expect("hello");
    assert_eq!(hello["seq"], 0);
    assert!(hello.get("seq_reply").is_none(), "{hello}");
    assert_eq!(hello["broadcast"]["user_id"], room.user(ADA)["id"]);
    assert_id(&hello["data"]["connection_id"]);
    assert!(
        hello["data"]["server_version"]
            .as_str()
            .is_some_and(|v| v.starts_with("11."))
    );
}

#[tokio::test]
async fn header_authentication_sends_hello_at_once() {
    let room = room().await;
    let mut socket = Socket::with_header(&room.world.ws(), room.token(BEA)).await;
    let hello = frames(&mut socket, 1).await.remove(0);
    assert_eq!(hello["event"], "hello");
    assert_eq!(hello["seq"], 0);
    assert_eq!(hello["broadcast"]["user_id"], room.user(BEA)["id"]);
}

#[tokio::test]
async fn a_bad_challenge_token_closes_the_socket_without_an_error_frame() {
    let room = room().await;
    let mut socket = Socket::unauthenticated(&room.world.ws()).await;
    socket
        .send(
            "authentication_challenge",
            json!({"token": "nosuchtokenxxxxxxxxxxxxxxx"}),
        )
        .await;
    assert!(socket.closes_silently(WAIT).await);
}

#[tokio::test]
async fn actions_before_authentication_fail_not_authenticated_and_a_challenge_still_works() {
    let room = room().await;
    let mut socket = Socket::unauthenticated(&room.world.ws()).await;
    let ping = socket.send("ping", json!({})).await;
    let reply = socket.response(ping).await;
    assert_eq!(reply["status"], "FAIL");
    assert_eq!(reply["seq_reply"], ping);
    assert_eq!(
        reply["error"]["id"],
        "api.web_socket_router.not_authenticated.app_error"
    );
    assert_eq!(reply["error"]["status_code"], 401);
    assert!(reply.get("seq").is_none());

    let challenge = socket
        .send(
            "authentication_challenge",
            json!({"token": room.token(ADA)}),
        )
        .await;
    assert_eq!(socket.response(challenge).await["status"], "OK");
    assert_eq!(socket.event("hello", WAIT).await["seq"], 0);

    // A header token the server does not know leaves the socket
    // unauthenticated rather than closed: the client may still challenge.
    let stream = Socket::try_with_header(&room.world.ws(), "nosuchtokenxxxxxxxxxxxxxxx")
        .await
        .expect("the upgrade succeeds");
    let mut socket = Socket::wrap(stream);
    let ping = socket.send("ping", json!({})).await;
    assert_eq!(
        socket.response(ping).await["error"]["id"],
        "api.web_socket_router.not_authenticated.app_error"
    );
    let challenge = socket
        .send(
            "authentication_challenge",
            json!({"token": room.token(BEA)}),
        )
        .await;
    assert_eq!(socket.response(challenge).await["status"], "OK");
    assert_eq!(
        socket.event("hello", WAIT).await["broadcast"]["user_id"],
        room.user(BEA)["id"]
    );
}

#[tokio::test]
async fn events_are_numbered_consecutively_and_responses_are_marked_only_by_seq_reply() {
    let room = room().await;
    let (mut socket, hello) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    for i in 0..5 {
        room.world
            .post(room.client(BEA), &room.channel, &format!("m{i}"))
            .await;
    }
    let mut all = vec![hello];
    all.extend(socket.drain().await);
    let events: Vec<&Value> = all.iter().filter(|f| f.get("event").is_some()).collect();
    let seqs: Vec<i64> = events
        .iter()
        .map(|e| e["seq"].as_i64().expect("seq"))
        .collect();
    assert_eq!(seqs, (0..6).collect::<Vec<i64>>(), "hello then five posts");
    for event in &events {
        assert!(event.get("seq_reply").is_none(), "{event}");
    }
    for response in all.iter().filter(|f| f.get("event").is_none()) {
        assert!(response.get("seq").is_none(), "{response}");
        assert!(response["seq_reply"].as_i64().expect("seq_reply") > 0);
    }
}

#[tokio::test]
async fn ping_answers_pong_with_version_server_time_and_node_id() {
    let room = room().await;
    let mut socket = Socket::unauthenticated(&room.world.ws()).await;
    socket
        .send(
            "authentication_challenge",
            json!({"token": room.token(ADA)}),
        )
        .await;
    // The ping `@mattermost/client` sends right after the challenge.
    let ping = socket.send("ping", json!({})).await;
    let pong = socket.response(ping).await;
    assert_eq!(pong["status"], "OK");
    assert_eq!(pong["seq_reply"], 2);
    assert_eq!(pong["data"]["text"], "pong");
    assert!(
        pong["data"]["version"]
            .as_str()
            .is_some_and(|v| v.starts_with("11."))
    );
    support::assert_millis(&pong["data"]["server_time"]);
    assert_eq!(pong["data"]["node_id"], "");
}

#[tokio::test]
async fn every_reconnect_gets_a_new_connection_id_and_hello_at_seq_0() {
    let room = room().await;
    let (_first_socket, first) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    let old = first["data"]["connection_id"]
        .as_str()
        .expect("id")
        .to_string();
    // A client asking to resume is answered with a fresh connection.
    let resume = format!("{}?connection_id={old}&sequence_number=7", room.world.ws());
    let (_second_socket, second) = Socket::open(&resume, room.token(ADA)).await;
    assert_eq!(second["seq"], 0);
    assert_ne!(
        second["data"]["connection_id"],
        first["data"]["connection_id"]
    );
    let connections = room
        .world
        .anonymous()
        .get("/_sim/ws/connections")
        .await
        .expect(200);
    let mine: Vec<&Value> = connections
        .as_array()
        .expect("list")
        .iter()
        .filter(|c| c["user_id"] == room.user(ADA)["id"])
        .collect();
    assert_eq!(mine.len(), 2);
}

#[tokio::test]
async fn user_typing_reaches_the_other_members_with_the_typer_omitted() {
    let room = room().await;
    let mut ada = room.socket(ADA).await;
    let mut bea = room.socket(BEA).await;
    let seq = ada
        .send(
            "user_typing",
            json!({"channel_id": id(&room.channel), "parent_id": ""}),
        )
        .await;
    assert_eq!(
        ada.response(seq).await,
        json!({"status": "OK", "seq_reply": seq})
    );
    let typing = bea.event("typing", WAIT).await;
    assert_eq!(
        typing["data"],
        json!({"parent_id": "", "user_id": id(room.user(ADA))})
    );
    assert_eq!(typing["broadcast"]["channel_id"], room.channel["id"]);
    assert_eq!(
        typing["broadcast"]["omit_users"],
        json!({id(room.user(ADA)): true})
    );
    assert!(
        named(&ada.drain().await, "typing").is_empty(),
        "the typer is left out"
    );

    // The REST equivalent.
    let answer = room
        .client(ADA)
        .post("users/me/typing", json!({"channel_id": id(&room.channel)}))
        .await
        .expect(200);
    assert_eq!(answer, json!({"status": "OK"}));
    assert_eq!(
        bea.event("typing", WAIT).await["data"]["user_id"],
        room.user(ADA)["id"]
    );
}

#[tokio::test]
async fn user_typing_without_create_post_in_the_channel_fails() {
    let room = room().await;
    let private = room.world.channel(&room.team, "secret", "P").await;
    let mut dan = room.socket(DAN).await;
    for data in [
        json!({"channel_id": id(&room.channel)}),
        json!({"channel_id": id(&private)}),
        json!({"channel_id": "not-an-id"}),
        json!({}),
    ] {
        let seq = dan.send("user_typing", data).await;
        let reply = dan.response(seq).await;
        assert_eq!(reply["status"], "FAIL", "{reply}");
        assert_eq!(
            reply["error"]["id"],
            "api.websocket_handler.invalid_param.app_error"
        );
        assert_eq!(reply["error"]["status_code"], 400);
    }
    room.client(DAN)
        .post("users/me/typing", json!({"channel_id": id(&room.channel)}))
        .await
        .expect_error(403, "api.context.permissions.app_error");
    room.client(DAN)
        .post(
            &format!("users/{}/typing", id(room.user(ADA))),
            json!({"channel_id": id(&room.channel)}),
        )
        .await
        .expect_error(403, "api.context.permissions.app_error");
}

#[tokio::test]
async fn unknown_actions_fail_with_bad_action() {
    let room = room().await;
    let mut socket = room.socket(ADA).await;
    let seq = socket.send("nonsense", json!({})).await;
    let reply = socket.response(seq).await;
    assert_eq!(reply["status"], "FAIL");
    assert_eq!(
        reply["error"]["id"],
        "api.web_socket_router.bad_action.app_error"
    );
    assert_eq!(reply["error"]["status_code"], 500);
}

#[tokio::test]
async fn posted_reaches_every_member_including_the_author_with_the_channel_fields() {
    let room = room().await;
    let mut ada = room.socket(ADA).await;
    let mut bea = room.socket(BEA).await;
    let mut dan = room.socket(DAN).await;
    let post = room
        .world
        .post(room.client(ADA), &room.channel, "hello all")
        .await;
    for socket in [&mut ada, &mut bea] {
        let frames = socket.drain_events().await;
        let posted = named(&frames, "posted");
        assert_eq!(posted.len(), 1, "{frames:?}");
        let event = posted[0];
        assert_eq!(Socket::inner(event, "post")["id"], post["id"]);
        assert_eq!(event["data"]["channel_type"], "O");
        assert_eq!(event["data"]["channel_name"], "general");
        assert_eq!(event["data"]["channel_display_name"], "general");
        assert_eq!(event["data"]["sender_name"], "@ada");
        assert_eq!(event["data"]["team_id"], room.team["id"]);
        assert_eq!(event["data"]["set_online"], true);
        assert!(event["data"].get("mentions").is_none(), "{event}");
        assert_eq!(event["broadcast"]["channel_id"], room.channel["id"]);
        assert_eq!(event["broadcast"]["team_id"], "");
        assert_eq!(event["broadcast"]["user_id"], "");
    }
    assert!(
        dan.drain_events().await.is_empty(),
        "not a member, nothing heard"
    );
}

#[tokio::test]
async fn posted_in_a_dm_has_type_d_an_empty_team_and_always_mentions_the_other() {
    let room = room().await;
    let dm = room
        .client(ADA)
        .post(
            "channels/direct",
            json!([id(room.user(ADA)), id(room.user(BEA))]),
        )
        .await
        .expect(201);
    let mut ada = room.socket(ADA).await;
    let mut bea = room.socket(BEA).await;
    room.world
        .post(room.client(ADA), &dm, "no names here")
        .await;
    let to_bea = bea.event("posted", WAIT).await;
    assert_eq!(to_bea["data"]["channel_type"], "D");
    assert_eq!(to_bea["data"]["team_id"], "");
    assert_eq!(to_bea["broadcast"]["team_id"], "");
    assert_eq!(
        Socket::inner(&to_bea, "mentions"),
        json!([id(room.user(BEA))])
    );
    let to_ada = ada.event("posted", WAIT).await;
    assert!(
        to_ada["data"].get("mentions").is_none(),
        "the author never: {to_ada}"
    );
}

#[tokio::test]
async fn each_recipient_learns_only_its_own_mention_by_the_servers_grammar() {
    let room = room().await;
    let mut sockets = Vec::new();
    for i in [ADA, BEA, CARL] {
        sockets.push(room.socket(i).await);
    }
    let cases: [(&str, &[usize]); 6] = [
        ("@bea hi, and `@carl` in code", &[BEA]),
        ("(@bea) and @Carl.", &[BEA, CARL]),
        ("x@bea email@carl.com", &[]),
        ("hello.@bea and @carlx", &[BEA]),
        ("@ada talks to herself", &[]),
        ("@channel listen", &[BEA, CARL]),
    ];
    for (message, mentioned) in cases {
        room.world
            .post(room.client(ADA), &room.channel, message)
            .await;
        for (socket, who) in sockets.iter_mut().zip([ADA, BEA, CARL]) {
            let event = socket.event("posted", WAIT).await;
            if mentioned.contains(&who) {
                assert_eq!(
                    Socket::inner(&event, "mentions"),
                    json!([id(room.user(who))]),
                    "{message:?} for {who}"
                );
            } else {
                assert!(
                    event["data"].get("mentions").is_none(),
                    "{message:?} must not mention {who}: {event}"
                );
            }
        }
    }
}

#[tokio::test]
async fn naming_a_non_member_person_sends_the_poster_an_out_of_channel_notice_but_a_bot_does_not() {
    let room = room().await;
    let (_, bot_user) = room.world.bot("helper").await;
    room.world.add_to_team(&room.team, &bot_user).await;
    let mut ada = room.socket(ADA).await;
    let mut bea = room.socket(BEA).await;

    room.world
        .post(room.client(ADA), &room.channel, "@dan and @helper, look")
        .await;
    let frames = ada.drain_events().await;
    let notices = named(&frames, "ephemeral_message");
    assert_eq!(notices.len(), 1, "{frames:?}");
    let notice = Socket::inner(notices[0], "post");
    assert_eq!(notice["type"], "system_ephemeral");
    assert_eq!(notice["channel_id"], room.channel["id"]);
    let text = notice["message"].as_str().expect("message");
    assert!(text.contains("@dan"), "{text}");
    assert!(!text.contains("helper"), "bots are left out: {text}");
    assert!(named(&bea.drain_events().await, "ephemeral_message").is_empty());

    room.world
        .post(room.client(ADA), &room.channel, "only @helper")
        .await;
    let frames = ada.drain_events().await;
    assert!(named(&frames, "ephemeral_message").is_empty(), "{frames:?}");
}

#[tokio::test]
async fn dropped_sockets_close_and_reconnect_with_a_new_connection() {
    let room = room().await;
    let (mut socket, hello) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    let dropped = room
        .world
        .anonymous()
        .post("/_sim/ws/drop", json!({"as": "ada"}))
        .await
        .expect(200);
    assert_eq!(dropped["dropped"], 1);
    assert!(socket.closes_silently(WAIT).await);
    let (_, again) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    assert_ne!(
        again["data"]["connection_id"],
        hello["data"]["connection_id"]
    );
    assert_eq!(again["seq"], 0);
}

#[tokio::test]
async fn skip_seq_makes_the_next_event_jump_one_number() {
    let room = room().await;
    let (mut socket, _) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    room.world
        .post(room.client(BEA), &room.channel, "one")
        .await;
    assert_eq!(socket.event("posted", WAIT).await["seq"], 1);
    let skipped = room
        .world
        .anonymous()
        .post("/_sim/ws/skip-seq", json!({"as": "ada"}))
        .await
        .expect(200);
    assert_eq!(skipped["connections"], 1);
    room.world
        .post(room.client(BEA), &room.channel, "two")
        .await;
    assert_eq!(
        socket.event("posted", WAIT).await["seq"],
        3,
        "2 was skipped"
    );
    room.world
        .post(room.client(BEA), &room.channel, "three")
        .await;
    assert_eq!(socket.event("posted", WAIT).await["seq"], 4);
}

#[tokio::test]
async fn rest_faults_fail_or_delay_requests_then_wear_off() {
    let room = room().await;
    let sim = room.world.anonymous();
    sim.post(
        "/_sim/faults",
        json!([{"method": "GET", "path_prefix": "/api/v4/users/me", "status": 503, "times": 2}]),
    )
    .await
    .expect(200);
    for _ in 0..2 {
        room.client(ADA)
            .get("users/me")
            .await
            .expect_error(503, "sim.fault.injected");
    }
    room.client(ADA).get("users/me").await.expect(200);

    sim.post(
        "/_sim/faults",
        json!([{"method": "*", "path_prefix": "/api/v4/system/ping", "delay_ms": 300, "times": 1}]),
    )
    .await
    .expect(200);
    let started = Instant::now();
    room.client(ADA).get("system/ping").await.expect(200);
    assert!(started.elapsed() >= Duration::from_millis(300));

    sim.post(
        "/_sim/faults",
        json!([{"method": "GET", "path_prefix": "/api/v4/system/ping", "status": 500}]),
    )
    .await
    .expect(200);
    room.client(ADA)
        .get("system/ping")
        .await
        .expect_error(500, "sim.fault.injected");
    assert_eq!(
        sim.delete("/_sim/faults").await.expect(200),
        json!({"faults": 0})
    );
    room.client(ADA).get("system/ping").await.expect(200);
}

#[tokio::test]
async fn a_websocket_fault_refuses_reconnects_for_n_attempts() {
    let room = room().await;
    room.world
        .anonymous()
        .post(
            "/_sim/faults",
            json!([{"method": "GET", "path_prefix": "/api/v4/websocket", "status": 503, "times": 2}]),
        )
        .await
        .expect(200);
    for _ in 0..2 {
        let refused = Socket::try_with_header(&room.world.ws(), room.token(ADA)).await;
        match refused {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status(), 503);
                let body: Value =
                    serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                        .expect("an error body");
                assert_eq!(body["id"], "sim.fault.injected");
            }
            other => panic!("expected a refused upgrade, got {:?}", other.map(|_| ())),
        }
    }
    let (_, hello) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    assert_eq!(hello["seq"], 0);
}

#[tokio::test]
async fn malformed_requests_fail_no_action_or_bad_seq_and_a_second_challenge_is_ignored() {
    let room = room().await;
    let (mut socket, _) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    socket
        .send_raw(json!({"seq": 5, "action": "", "data": {}}))
        .await;
    let reply = socket.response(5).await;
    assert_eq!(reply["status"], "FAIL");
    assert_eq!(
        reply["error"]["id"],
        "api.web_socket_router.no_action.app_error"
    );
    assert_eq!(reply["error"]["status_code"], 400);
    socket
        .send_raw(json!({"seq": -1, "action": "ping", "data": {}}))
        .await;
    let reply = socket.response(-1).await;
    assert_eq!(
        reply["error"]["id"],
        "api.web_socket_router.bad_seq.app_error"
    );

    // Mattermost answers nothing to a challenge on an authenticated socket:
    // the next response is the ping's.
    let challenge = socket
        .send(
            "authentication_challenge",
            json!({"token": room.token(ADA)}),
        )
        .await;
    let ping = socket.send("ping", json!({})).await;
    let next = loop {
        match socket.next(WAIT).await {
            Next::Frame(frame) if frame.get("seq_reply").is_some() => break frame,
            Next::Frame(_) => continue,
            other => panic!("no response: {other:?}"),
        }
    };
    assert_eq!(
        next["seq_reply"], ping,
        "challenge {challenge} got an answer: {next}"
    );
}

#[tokio::test]
async fn stalled_pongs_leave_pings_unanswered_until_resumed() {
    let room = room().await;
    let (mut socket, _) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    let stalled = room
        .world
        .anonymous()
        .post(
            "/_sim/ws/stall-pongs",
            json!({"as": "ada", "stalled": true}),
        )
        .await
        .expect(200);
    assert_eq!(stalled["connections"], 1);
    let ping = socket.send("ping", json!({})).await;
    // Requests on one socket are answered in order: once the typing reply is
    // in, the ping's would have been too.
    let typing = socket
        .send("user_typing", json!({"channel_id": id(&room.channel)}))
        .await;
    assert_eq!(socket.response(typing).await["status"], "OK");
    let mut unanswered = Vec::new();
    while let Next::Frame(frame) = socket.next(Duration::ZERO).await {
        unanswered.push(frame);
    }
    assert!(
        unanswered.iter().all(|f| f["seq_reply"] != ping),
        "the stalled ping was answered: {unanswered:?}"
    );
    room.world
        .anonymous()
        .post(
            "/_sim/ws/stall-pongs",
            json!({"as": "ada", "stalled": false}),
        )
        .await
        .expect(200);
    let ping = socket.send("ping", json!({})).await;
    assert_eq!(socket.response(ping).await["data"]["text"], "pong");
}

#[tokio::test]
async fn a_delayed_event_arrives_after_the_rest_response_that_caused_it() {
    let room = room().await;
    let (mut socket, _) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    let delayed = room
        .world
        .anonymous()
        .post(
            "/_sim/ws/delay",
            json!({"as": "ada", "delay_ms": 800, "events": 1}),
        )
        .await
        .expect(200);
    assert_eq!(delayed["connections"], 1);
    let started = Instant::now();
    let post = room
        .world
        .post(room.client(BEA), &room.channel, "late news")
        .await;
    assert!(
        matches!(socket.next(Duration::ZERO).await, Next::Quiet),
        "the event must not be there when the REST call returns"
    );
    let event = socket.event("posted", WAIT).await;
    assert!(started.elapsed() >= Duration::from_millis(800));
    assert_eq!(Socket::inner(&event, "post")["id"], post["id"]);
    assert_eq!(event["seq"], 1, "held, not renumbered");
    // Only the one event was held.
    room.world
        .post(room.client(BEA), &room.channel, "on time")
        .await;
    let next = socket.event("posted", WAIT).await;
    assert_eq!(next["seq"], 2);
}

#[tokio::test]
async fn a_new_account_is_announced_to_everyone_as_new_user() {
    let room = room().await;
    let (mut ada, _) = Socket::open(&room.world.ws(), room.token(ADA)).await;
    let (mut dan, _) = Socket::open(&room.world.ws(), room.token(DAN)).await;
    let (_, eve) = room.world.person("eve").await;
    for socket in [&mut ada, &mut dan] {
        let frames = socket.drain_events().await;
        let events = named(&frames, "new_user");
        assert_eq!(events.len(), 1, "{frames:?}");
        assert_eq!(events[0]["data"], json!({"user_id": id(&eve)}));
        assert_eq!(events[0]["broadcast"]["user_id"], "");
        assert_eq!(events[0]["broadcast"]["channel_id"], "");
    }
}
