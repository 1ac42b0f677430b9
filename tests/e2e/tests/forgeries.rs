//! The callback routes trust the network (§6.4): anyone who can reach them
//! can send anything. A property test drives the decision, dialog and
//! command routes of a running daemon with forged, replayed, cross-channel
//! and malformed callbacks while one approval is parked and another is
//! decided, and checks after every request that none of them ran a tool,
//! decided, cancelled or ended anything. A genuine click then still works.

use std::path::PathBuf;

use collegium_control::approvals::sign::{button, sign};
use collegium_control::callbacks::{DECISION_ROUTE, DIALOG_ROUTE};
use collegium_control::commands::ROUTE as COMMAND_ROUTE;
use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, store, with_fixture};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::json;

/// What the world looks like before the storm, and must look like after
/// every request of it.
struct World {
    h: Harness,
    _daemon: e2e::Daemon,
    record: PathBuf,
    /// The decided approval (its clicks are replays) and the parked one.
    decided: Facts,
    parked: Facts,
    parked_turn: String,
    turns: usize,
    ids: Ids,
}

#[derive(Clone, Debug)]
struct Facts {
    approval: String,
    signature: String,
    channel: String,
}

/// The values a forgery draws its fields from.
#[derive(Clone, Debug)]
struct Ids {
    people: Vec<String>,
    bots: Vec<String>,
    stranger: String,
    channels: Vec<String>,
    approvals: Vec<String>,
    signatures: Vec<String>,
    token: String,
}

fn write_call() -> model_sim::script::Scripted {
    calls(&[("fixture__write", json!({"path": "a.txt", "content": "x"}))])
}

impl World {
    async fn set_up() -> Self {
        let (h, daemon, record) = with_fixture("debounce_window_ms = 0").await;
        h.person("ana", &["town-square"]).await;
        h.person("bo", &["town-square"]).await;
        let dm = h.dm("ana", "mira").await;
        let square = h.channel("town-square").await.id;
        h.model.sim.script(
            "demo-model",
            vec![
                write_call(),
                reply("Done in the DM."),
                write_call(),
                reply("Done in the square."),
            ],
        );
        let key = h
            .credentials()
            .command
            .expect("command")
            .token
            .into_exposed();
        let since = now_ms() - 1;
        h.say("ana", &dm, "write it").await;
        let first = h.wait_post(&dm, "mira", "Approval needed", since).await;
        h.click("ana", &first.id, "approve").await;
        h.wait_post(&dm, "mira", "Done in the DM.", since).await;
        h.say("ana", &square, "@mira write it").await;
        let second = h.wait_post(&square, "mira", "Approval needed", since).await;
        // Each button is signed for its own action (§6.4): a fact's
        // signature is its Approve button's.
        let facts = |approval: String, channel: &str| Facts {
            signature: sign(&key, &button(&approval, "approve", None)),
            approval,
            channel: channel.to_string(),
        };
        let (decided, parked) = (
            facts(h.decision_for_prompt(&first.id).await, &dm),
            facts(h.decision_for_prompt(&second.id).await, &square),
        );
        let parked_turn = store(&h)
            .last_turn("mira", &square)
            .expect("query")
            .expect("the parked turn")
            .id;
        let ids = Ids {
            people: vec![h.user("ana").await.id, h.user("bo").await.id],
            bots: vec![h.user("mira").await.id, h.user("theo").await.id],
            stranger: h.stranger("cy").await,
            channels: vec![square.clone(), dm.clone()],
            approvals: vec![parked.approval.clone(), decided.approval.clone()],
            // The parked prompt's Approve and Deny signatures, then its
            // "Deny with reason" one (never an approval), the decided
            // prompt's, and one under another key.
            signatures: vec![
                parked.signature.clone(),
                sign(&key, &button(&parked.approval, "deny", None)),
                sign(&key, &button(&parked.approval, "reason", None)),
                decided.signature.clone(),
                sign("not-the-key", &button(&parked.approval, "approve", None)),
            ],
            token: key,
        };
        let mut world = Self {
            h,
            _daemon: daemon,
            record,
            decided,
            parked,
            parked_turn,
            turns: 0,
            ids,
        };
        world.turns = world.turn_count();
        world.unchanged().expect("the world as set up");
        world
    }

    fn turn_count(&self) -> usize {
        let store = store(&self.h);
        self.ids
            .channels
            .iter()
            .map(|c| store.turns_of("mira", c).expect("turns").len())
            .sum()
    }

    /// The invariant: one tool ran (the decided approval's), the parked
    /// approval is undecided, its turn still runs, no turn began.
    fn unchanged(&self) -> Result<(), String> {
        let ran = fixture_toolset::asked(&self.record).len();
        if ran != 1 {
            return Err(format!("the fixture ran {ran} times"));
        }
        let store = store(&self.h);
        let parked = store
            .decision(&self.parked.approval)
            .map_err(|e| e.to_string())?
            .ok_or("the parked approval vanished")?;
        if parked.outcome.is_some() {
            return Err(format!("the parked approval was decided: {parked:?}"));
        }
        let decided = store
            .decision(&self.decided.approval)
            .map_err(|e| e.to_string())?
            .ok_or("the decided approval vanished")?;
        if decided.outcome.as_deref() != Some("approved")
            || decided.decided_by.as_deref() != Some("ana")
        {
            return Err(format!("the decided approval changed: {decided:?}"));
        }
        let turn = store
            .last_turn("mira", &self.parked.channel)
            .map_err(|e| e.to_string())?
            .ok_or("the parked turn vanished")?;
        if turn.id != self.parked_turn || turn.ended_at.is_some() {
            return Err(format!("the parked turn changed: {turn:?}"));
        }
        if self.turn_count() != self.turns {
            return Err("a turn began".into());
        }
        Ok(())
    }

    /// Whether a forgery is in fact the genuine article: a person in the
    /// parked approval's channel deciding it with its own signature. Those
    /// are left out; the end of the test sends one on purpose.
    fn genuine(&self, forged: &Forged) -> bool {
        let person = |user: &str| self.ids.people.iter().any(|p| p == user);
        match forged {
            Forged::Click {
                user,
                channel,
                approval,
                signature,
                action,
                choice,
            } => {
                person(user)
                    && *channel == self.parked.channel
                    && *approval == self.parked.approval
                    && *signature == sign(&self.ids.token, &button(approval, action, *choice))
                    && matches!(action.as_str(), "approve" | "deny")
            }
            Forged::Dialog {
                user,
                channel,
                callback_id,
                state,
                cancelled,
                words,
            } => {
                person(user)
                    && *channel == self.parked.channel
                    && *callback_id == self.parked.approval
                    && *state == self.parked.signature
                    && !cancelled
                    && !words.trim().is_empty()
            }
            Forged::Command { .. } | Forged::Raw { .. } => false,
        }
    }

    async fn send(&self, forged: &Forged) -> String {
        let url = |route: &str| format!("{}{route}", self.h.loaded().config.callbacks.public_url);
        let client = reqwest::Client::new();
        let request = match forged {
            Forged::Click {
                user,
                channel,
                approval,
                signature,
                action,
                choice,
            } => client.post(url(DECISION_ROUTE)).json(&json!({
                "user_id": user, "channel_id": channel, "post_id": "p", "trigger_id": "t",
                "context": {"action": action, "approval": approval, "signature": signature, "choice": choice}
            })),
            Forged::Dialog {
                user,
                channel,
                callback_id,
                state,
                cancelled,
                words,
            } => client.post(url(DIALOG_ROUTE)).json(&json!({
                "url": "u", "callback_id": callback_id, "state": state, "user_id": user,
                "channel_id": channel, "team_id": "t", "cancelled": cancelled,
                "submission": {"reason": words, "answer": words}
            })),
            Forged::Command {
                token,
                user,
                channel,
                text,
            } => client.post(url(COMMAND_ROUTE)).form(&[
                ("token", token.as_str()),
                ("user_id", user),
                ("user_name", "ana"),
                ("channel_id", channel),
                ("command", "/collegium"),
                ("text", text),
            ]),
            Forged::Raw { route, body, json } => client
                .post(url(route))
                .header(
                    "content-type",
                    if *json {
                        "application/json"
                    } else {
                        "application/x-www-form-urlencoded"
                    },
                )
                .body(body.clone()),
        };
        match request.send().await {
            Ok(response) => format!(
                "{} {}",
                response.status(),
                response.text().await.unwrap_or_default()
            ),
            Err(error) => format!("no answer: {error}"),
        }
    }
}

/// One request to a callback route.
#[derive(Clone, Debug)]
enum Forged {
    Click {
        user: String,
        channel: String,
        approval: String,
        signature: String,
        action: String,
        choice: Option<usize>,
    },
    Dialog {
        user: String,
        channel: String,
        callback_id: String,
        state: String,
        cancelled: bool,
        words: String,
    },
    Command {
        token: String,
        user: String,
        channel: String,
        text: String,
    },
    Raw {
        route: &'static str,
        body: Vec<u8>,
        json: bool,
    },
}

/// A field of a forgery: mostly the genuine value (so that forgeries are
/// near misses, one or two fields off, which is where a missing check
/// hides), else another known value, a genuine value with a character
/// added, or noise.
fn field(genuine: Vec<String>, others: Vec<String>) -> BoxedStrategy<String> {
    let near = genuine.clone();
    let mut choices = vec![
        (6, proptest::sample::select(genuine).boxed()),
        (
            1,
            (proptest::sample::select(near), any::<char>())
                .prop_map(|(k, c)| format!("{k}{c}"))
                .boxed(),
        ),
        (1, "[a-z0-9]{0,40}".boxed()),
        (1, Just(String::new()).boxed()),
    ];
    if !others.is_empty() {
        choices.push((3, proptest::sample::select(others).boxed()));
    }
    proptest::strategy::Union::new_weighted(choices).boxed()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

fn forgery(ids: &Ids) -> impl Strategy<Value = Forged> {
    let users = field(
        ids.people.clone(),
        ids.bots
            .iter()
            .chain(std::iter::once(&ids.stranger))
            .cloned()
            .collect(),
    );
    // The first of each list is the parked approval's; the rest are the
    // decided one's (replays) and strangers to it (cross-channel, forged).
    let channels = field(ids.channels[..1].to_vec(), ids.channels[1..].to_vec());
    let approvals = field(ids.approvals[..1].to_vec(), ids.approvals[1..].to_vec());
    let signatures = field(ids.signatures[..2].to_vec(), ids.signatures[2..].to_vec());
    let actions = field(
        strings(&["approve", "deny"]),
        strings(&["reason", "choose", "write"]),
    );
    let tokens = field(
        vec![format!("{}x", ids.token)],
        vec![
            ids.token.chars().skip(1).collect(),
            ids.token.to_uppercase(),
            ids.signatures[0].clone(),
        ],
    );
    let texts = field(
        strings(&["stop", "kill", "resume", "steer mira stop it"]),
        strings(&["approvals", "queue mira", ""]),
    );
    let click = (
        users.clone(),
        channels.clone(),
        approvals.clone(),
        signatures.clone(),
        actions,
        proptest::option::of(0usize..4),
    )
        .prop_map(
            |(user, channel, approval, signature, action, choice)| Forged::Click {
                user,
                channel,
                approval,
                signature,
                action,
                choice,
            },
        );
    let dialog = (
        users.clone(),
        channels.clone(),
        approvals,
        signatures,
        any::<bool>(),
        "\\PC{0,30}",
    )
        .prop_map(
            |(user, channel, callback_id, state, cancelled, words)| Forged::Dialog {
                user,
                channel,
                callback_id,
                state,
                cancelled,
                words,
            },
        );
    let command =
        (tokens, users, channels, texts).prop_map(|(token, user, channel, text)| Forged::Command {
            token,
            user,
            channel,
            text,
        });
    let raw = (
        proptest::sample::select(vec![DECISION_ROUTE, DIALOG_ROUTE, COMMAND_ROUTE]),
        proptest::collection::vec(any::<u8>(), 0..200),
        any::<bool>(),
    )
        .prop_map(|(route, body, json)| Forged::Raw { route, body, json });
    prop_oneof![3 => click, 2 => dialog, 1 => command, 1 => raw]
}

#[test]
fn s6_4_no_forged_replayed_cross_channel_or_malformed_callback_acts() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let world = runtime.block_on(World::set_up());
    let mut runner = TestRunner::new(Config {
        cases: 400,
        // The daemon's state cannot be rewound between cases, so the case
        // to report is the one that broke it, not a shrunk one.
        max_shrink_iters: 0,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = forgery(&world.ids).prop_filter("a genuine decision", |f| !world.genuine(f));
    let outcome = runner.run(&strategy, |forged| {
        let answer = runtime.block_on(world.send(&forged));
        world.unchanged().map_err(|broken| {
            TestCaseError::fail(format!("{broken}, after {forged:?} answered {answer}"))
        })
    });
    if let Err(failure) = outcome {
        panic!("{failure}");
    }
    // The genuine article still works after the storm, once.
    runtime.block_on(async {
        let since = now_ms() - 60_000;
        let prompt = world
            .h
            .wait_post(&world.parked.channel, "mira", "Approval needed", since)
            .await;
        world.h.click("bo", &prompt.id, "approve").await;
        world
            .h
            .wait_post(&world.parked.channel, "mira", "Done in the square.", since)
            .await;
    });
    assert_eq!(fixture_toolset::asked(&world.record).len(), 2);
    let decided = store(&world.h)
        .decision(&world.parked.approval)
        .expect("query")
        .expect("row");
    assert_eq!(decided.decided_by.as_deref(), Some("bo"));
}

/// §6.4: a click, dialog or command body is parsed before its signature or
/// token can be checked, so a forger's is read too; one over
/// `CALLBACK_BODY_MAX_BYTES` is refused unread (413), far above what
/// Mattermost sends and far below axum's default.
#[tokio::test(flavor = "multi_thread")]
async fn s6_4_an_oversized_callback_body_is_refused_unread() {
    let (h, _daemon, _record) = with_fixture("debounce_window_ms = 0").await;
    let pad = "x".repeat(collegium_control::callbacks::CALLBACK_BODY_MAX_BYTES + 1);
    for route in [DECISION_ROUTE, DIALOG_ROUTE] {
        let (status, _) = e2e::scenario::callback(&h, route, &json!({"pad": pad})).await;
        assert_eq!(status, 413, "{route}");
    }
    let url = format!("{}{COMMAND_ROUTE}", h.loaded().config.callbacks.public_url);
    let command = reqwest::Client::new()
        .post(url)
        .form(&[("token", "guessed"), ("text", pad.as_str())])
        .send()
        .await
        .expect("the callback server answers");
    assert_eq!(command.status(), 413);
    // A body of Mattermost's own size still reaches the route's checks.
    let (status, _) =
        e2e::scenario::callback(&h, DECISION_ROUTE, &json!({"pad": "x".repeat(16_383)})).await;
    assert_ne!(status, 413);
}
