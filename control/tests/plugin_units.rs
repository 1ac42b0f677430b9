//! The read-only unit lookup a plugin makes over its `Storage` connection
//! (§3.14, issue 22 item 5), driven over a real socketpair against a real
//! store: answered only for a call of that plugin in flight, among the units
//! the call's agent created or was assigned in its turn's channel.

use collegium_control::plugin_storage::{StorageService, collections, serve};
use collegium_control::store::worker_calls::{CallEnd, NewWorkerCall};
use collegium_control::store::{
    ClosedBy, NewClose, NewTurn, NewUnit, Store, StoreHandle, TurnCause, UnitState,
};
use collegium_proto::storage::v1::{UnitRequest, storage_client::StorageClient};
use hyper_util::rt::TokioIo;
use tonic::Code;
use tonic::transport::{Channel, Endpoint};

fn turn(id: &str, agent: &str, channel: &str) -> NewTurn {
    NewTurn {
        id: id.into(),
        agent: agent.into(),
        channel_id: channel.into(),
        boot_id: "boot".into(),
        started_at: 100,
        cause: TurnCause::Post,
        answers_post_id: None,
        depth: 0,
        chain_root: id.into(),
        chain_length: 1,
        model: "demo-model".into(),
    }
}

fn call(id: &str, turn: &str, worker: &str) -> NewWorkerCall {
    NewWorkerCall {
        call_id: id.into(),
        turn_id: turn.into(),
        agent: "naomi".into(),
        worker: worker.into(),
        tool: format!("{worker}::save"),
        arguments_sha256: "0".repeat(64),
        decision_id: None,
        retryable: false,
        dispatched_at: 110,
    }
}

/// U-1 sam→naomi in c1 (readable), U-2 sam→mira in c1 (another pair), U-3
/// sam→naomi in c2 (another channel), U-4 naomi→sam in c1 continuing U-1,
/// closed by naomi. Turn t1 is naomi's in c1 with call k1 of `bookmark` in
/// flight; k2 is another plugin's, k3 ended.
fn store() -> (tempfile::TempDir, StoreHandle) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("collegium.db")).expect("open");
    for (creator, assignee, channel, follows) in [
        ("sam", "naomi", "c1", None),
        ("sam", "mira", "c1", None),
        ("sam", "naomi", "c2", None),
        ("naomi", "sam", "c1", Some(1)),
    ] {
        let id = store
            .reserve_unit_number(channel, creator, 1)
            .expect("number");
        store
            .record_continuation(
                &NewUnit {
                    id,
                    channel_id: channel.into(),
                    creator: creator.into(),
                    assignee: assignee.into(),
                    outcome: format!("outcome {id}"),
                    criteria: format!("criteria {id}"),
                    context: format!("context {id}"),
                    assignment_post_id: format!("a{id}"),
                    assigning_turn_id: "t0".into(),
                    follows,
                    at: 10 * id,
                },
                None,
                "",
            )
            .expect("assignment");
    }
    store
        .record_close(&NewClose {
            unit_id: 4,
            post_id: "close4".into(),
            state: UnitState::Cancelled,
            closed_by: ClosedBy::Creator,
            closer: "naomi".into(),
            verdict: "not needed".into(),
            at: 90,
        })
        .expect("close");
    store.open_turn(&turn("t1", "naomi", "c1")).expect("turn");
    store
        .record_dispatch(&call("k1", "t1", "bookmark"))
        .expect("k1");
    store
        .record_dispatch(&call("k2", "t1", "other"))
        .expect("k2");
    store
        .record_dispatch(&call("k3", "t1", "bookmark"))
        .expect("k3");
    store
        .record_call_end("k3", CallEnd::Success, None, None, 120)
        .expect("k3 ended");
    (dir, StoreHandle::spawn(store).expect("store thread"))
}

async fn connect(store: &StoreHandle, namespace: &str) -> StorageClient<Channel> {
    let compiled = collections::compile(namespace, &[]).expect("collections");
    let (daemon, plugin) = tokio::net::UnixStream::pair().expect("socketpair");
    serve::connection(daemon, StorageService::new(compiled, store.clone()));
    let mut slot = Some(plugin);
    let channel = Endpoint::from_static("http://storage.invalid")
        .connect_with_connector(tower::service_fn(move |_| {
            let stream = slot.take();
            async move {
                stream
                    .map(TokioIo::new)
                    .ok_or_else(|| std::io::Error::other("one connection"))
            }
        }))
        .await
        .expect("connect");
    StorageClient::new(channel)
}

fn ask(call: &str, reference: &str) -> UnitRequest {
    UnitRequest {
        turn_id: "t1".into(),
        call_id: call.into(),
        reference: reference.into(),
    }
}

#[tokio::test]
async fn s3_14_a_plugin_reads_a_unit_of_the_calls_agent_in_the_turns_channel() {
    let (_dir, store) = store();
    let mut bookmark = connect(&store, "bookmark").await;
    let unit = bookmark
        .unit(ask("k1", "U-1"))
        .await
        .expect("U-1")
        .into_inner();
    assert_eq!(unit.reference, "U-1");
    assert_eq!(
        (unit.creator.as_str(), unit.assignee.as_str()),
        ("sam", "naomi")
    );
    assert_eq!(unit.outcome, "outcome 1");
    assert_eq!(unit.criteria, "criteria 1");
    assert_eq!(unit.context, "context 1");
    assert_eq!(unit.state, "assigned");
    assert_eq!(unit.assigned_at_unix_ms, 10);
    assert_eq!(
        unit.followed_by.as_deref(),
        Some("U-4"),
        "the link either way"
    );
    assert_eq!(unit.closed_by, None);

    let closed = bookmark
        .unit(ask("k1", "4"))
        .await
        .expect("U-4")
        .into_inner();
    assert_eq!(closed.follows.as_deref(), Some("U-1"));
    assert_eq!(closed.state, "cancelled");
    assert_eq!(closed.closed_from_state.as_deref(), Some("assigned"));
    assert_eq!(closed.closed_by.as_deref(), Some("creator"));
    assert_eq!(closed.closer.as_deref(), Some("naomi"));
    assert_eq!(closed.closed_at_unix_ms, Some(90));
}

#[tokio::test]
async fn s3_14_another_pairs_or_another_channels_unit_is_simply_absent() {
    let (_dir, store) = store();
    let mut bookmark = connect(&store, "bookmark").await;
    for reference in ["U-2", "U-3", "U-99"] {
        let status = bookmark
            .unit(ask("k1", reference))
            .await
            .expect_err("absent");
        assert_eq!(
            status.code(),
            Code::NotFound,
            "{reference}: {}",
            status.message()
        );
    }
    let status = bookmark
        .unit(ask("k1", "mine"))
        .await
        .expect_err("not a reference");
    assert_eq!(status.code(), Code::InvalidArgument);
}

#[tokio::test]
async fn s3_14_units_are_read_only_for_a_call_of_this_plugin_in_flight() {
    let (_dir, store) = store();
    let mut bookmark = connect(&store, "bookmark").await;
    // Another plugin's call, an ended call, an unknown call, a call named
    // with the wrong turn: none lets the plugin read.
    for request in [
        ask("k2", "U-1"),
        ask("k3", "U-1"),
        ask("nope", "U-1"),
        UnitRequest {
            turn_id: "t9".into(),
            ..ask("k1", "U-1")
        },
    ] {
        let status = bookmark.unit(request.clone()).await.expect_err("refused");
        assert_eq!(status.code(), Code::PermissionDenied, "{request:?}");
    }
    // The other plugin reads through its own call.
    let mut other = connect(&store, "other").await;
    other.unit(ask("k2", "U-1")).await.expect("its own call");
}
