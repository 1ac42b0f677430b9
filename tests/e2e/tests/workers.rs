//! Dispatch to a worker over the real wire (ARCHITECTURE §4; spec §7.1): the
//! fixture toolset as its own process, a real store, signed grants, the
//! audit log anchored call by call, lost answers ended as each tool's
//! declaration says, and peers judged by their real uids.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use collegium_control::store::worker_calls::Disclosure;
use collegium_control::store::{Store, StoreHandle};
use collegium_control::tools::Gate;
use collegium_control::workers::dispatch::{
    CallOutcome, Dispatch, RenderError, Worker, WorkerError, WorkerSpec,
};
use collegium_control::workers::handshake::SandboxExpectation;
use collegium_proto::toolset::v1::{PayloadKind, tool_result};
use collegium_worker_kit::grant::GrantSigner;
use e2e::binary;
use e2e::fixture::{FixtureProcess, declaration};
use serde_json::{Value, json};

fn me() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// What the fixture, started by this process, must look like: this process's
/// user, whatever capabilities it inherited, and no-new-privileges.
fn as_started() -> SandboxExpectation {
    SandboxExpectation {
        uid: me(),
        gid: nix::unistd::getegid().as_raw(),
        allowed_capabilities: u64::MAX,
        landlock_floor: None,
        command_cgroups: false,
        command_namespaces: &[],
        command_bounds: &[],
    }
}

struct Setup {
    dir: tempfile::TempDir,
    fixture: FixtureProcess,
    store: StoreHandle,
    signer: GrantSigner,
    worker: Worker,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = FixtureProcess::start(dir.path(), me(), None);
    let store = StoreHandle::spawn(Store::open(&dir.path().join("collegium.db")).expect("store"))
        .expect("store thread");
    let signer = GrantSigner::generate("boot-e2e");
    let spec = WorkerSpec {
        socket: fixture.socket.clone(),
        served_by: Some(me()),
        declaration: declaration(),
        sandbox: as_started(),
    };
    let worker = Worker::connect(&spec, &signer).await.expect("handshake");
    Setup {
        dir,
        fixture,
        store,
        signer,
        worker,
    }
}

fn dispatch(call_id: &str, tool: &str, arguments: Value) -> Dispatch {
    Dispatch {
        call_id: call_id.into(),
        turn_id: "turn-1".into(),
        agent: "mira".into(),
        tool: tool.into(),
        arguments_json: arguments.to_string().into_bytes(),
        settings_json: "{}".into(),
        channel: "research".into(),
        held_tools: Vec::new(),
        unit: None,
        decision_id: None,
        deadline: Duration::from_secs(10),
    }
}

async fn invoke(s: &Setup, d: Dispatch) -> CallOutcome {
    s.worker
        .invoke(&s.store, &s.signer, d, |_| {})
        .await
        .expect("store")
}

async fn recorded(s: &Setup, call_id: &str) -> (Option<String>, Option<u64>) {
    let id = call_id.to_string();
    let row = s
        .store
        .call(move |store| store.worker_call(&id))
        .await
        .expect("store")
        .expect("the call was recorded");
    (row.outcome, row.audit.map(|a| a.seq))
}

fn success_text(outcome: &CallOutcome) -> String {
    match outcome {
        CallOutcome::Finished(result) => match &result.outcome {
            Some(tool_result::Outcome::Success(s)) => s.text.clone(),
            other => panic!("expected a success, got {other:?}"),
        },
        other => panic!("expected a result, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn arch4_a_call_is_granted_run_audited_and_anchored_in_the_store() {
    let s = setup().await;
    let outcome = invoke(&s, dispatch("c1", "read", json!({"key": "k"}))).await;
    assert_eq!(success_text(&outcome), "the value of k");
    assert_eq!(recorded(&s, "c1").await, (Some("success".into()), Some(1)));
    let asked = fixture_toolset::asked(&s.fixture.record);
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0]["arguments"], json!({"key": "k"}));

    // The worker's own log proves it against the store's anchor.
    let out = Command::new(binary("collegium"))
        .args(["audit", "verify"])
        .arg(&s.fixture.audit)
        .arg("--store")
        .arg(s.dir.path().join("collegium.db"))
        .args(["--worker", "fixture"])
        .output()
        .expect("run collegium");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{report}");
    assert!(report.contains("line 1 is the one"), "{report}");
}

/// Records a turn and a decision on `tool` with `outcome` (none: undecided).
async fn decision(s: &Setup, id: &str, tool: &str, outcome: Option<&str>) {
    let (id, tool, outcome) = (
        id.to_string(),
        tool.to_string(),
        outcome.map(str::to_string),
    );
    s.store
        .call(move |store| {
            if store.turn("turn-1")?.is_none() {
                store.open_turn(&collegium_control::store::NewTurn {
                    id: "turn-1".into(),
                    agent: "mira".into(),
                    channel_id: "c1".into(),
                    boot_id: "boot-e2e".into(),
                    started_at: 1,
                    cause: collegium_control::store::TurnCause::Post,
                    answers_post_id: None,
                    depth: 0,
                    chain_root: "turn-1".into(),
                    chain_length: 1,
                    model: "demo".into(),
                })?;
            }
            store.open_decision(&collegium_control::store::decisions::NewDecision {
                id: id.clone(),
                turn_id: "turn-1".into(),
                call_id: id.clone(),
                agent: "mira".into(),
                channel_id: format!("channel-of-{id}"),
                kind: "approval".into(),
                tool: Some(tool),
                payload: "{}".into(),
                choices: Vec::new(),
                requested_at: 2,
            })?;
            if let Some(outcome) = outcome {
                store.decide(&id, &outcome, "ana", None, 3)?;
            }
            Ok(())
        })
        .await
        .expect("store");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_7_no_gated_tool_is_dispatched_without_a_recorded_approving_decision() {
    let s = setup().await;
    let gated: Vec<_> = declaration()
        .tools
        .into_iter()
        .filter(|t| t.gate != collegium_control::tools::Gate::None)
        .collect();
    assert!(!gated.is_empty(), "the fixture declares gated tools");
    for (index, tool) in gated.iter().enumerate() {
        let name = format!("fixture::{}", tool.name);
        let arguments = json!({"path": "a.txt", "content": "hello", "question": "q?"});
        let bare = invoke(
            &s,
            dispatch(&format!("bare-{index}"), &tool.name, arguments.clone()),
        )
        .await;
        assert!(
            matches!(&bare, CallOutcome::NotSent(r) if r.contains("no approving decision")),
            "{name} without a decision: {bare:?}"
        );
        for (outcome, label) in [(Some("denied"), "denied"), (None, "undecided")] {
            let id = format!("{label}-{index}");
            decision(&s, &id, &name, outcome).await;
            let mut call = dispatch(
                &format!("{label}-call-{index}"),
                &tool.name,
                arguments.clone(),
            );
            call.decision_id = Some(id);
            let refused = invoke(&s, call).await;
            assert!(
                matches!(refused, CallOutcome::NotSent(_)),
                "{name} {label}: {refused:?}"
            );
        }
        let other = format!("other-tool-{index}");
        decision(&s, &other, "fixture::read", Some("approved")).await;
        let mut call = dispatch(
            &format!("other-call-{index}"),
            &tool.name,
            arguments.clone(),
        );
        call.decision_id = Some(other);
        let refused = invoke(&s, call).await;
        assert!(
            matches!(refused, CallOutcome::NotSent(_)),
            "an approval of another tool: {refused:?}"
        );
    }
    assert!(
        fixture_toolset::asked(&s.fixture.record).is_empty(),
        "no gated call reached the tool"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn arch4_an_approved_write_runs_and_its_decision_is_audited() {
    let s = setup().await;
    decision(&s, "decision-7", "fixture::write", Some("approved")).await;
    let mut approved = dispatch("w2", "write", json!({"path": "a.txt", "content": "hello"}));
    approved.decision_id = Some("decision-7".into());
    let outcome = invoke(&s, approved).await;
    assert_eq!(success_text(&outcome), "wrote 5 bytes to a.txt");
    let row = s
        .store
        .call(|store| store.worker_call("w2"))
        .await
        .expect("store")
        .expect("recorded");
    assert_eq!(
        row.disclosure,
        Some(Disclosure {
            description: "the file a.txt".into(),
            body: "hello".into(),
            reference: "a.txt".into(),
            superseded: vec!["the earlier a.txt".into()],
        }),
        "what the write disclosed is kept with the call, for its trace (§3.4, §8.3)"
    );
    let lines: Vec<Value> = std::fs::read_to_string(&s.fixture.audit)
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["outcome"], "success");
    assert_eq!(lines[0]["decision"], "decision-7");
}

/// §3.4, §3.14: a gated call's payload is rendered by the toolset from the
/// call it would receive; a rendering that never comes is given up on at
/// its bound, and nothing is dispatched or recorded either way.
#[tokio::test(flavor = "multi_thread")]
async fn s3_14_a_rendering_is_asked_of_the_toolset_and_bounded_in_time() {
    let s = setup().await;
    let rendered = s
        .worker
        .render(
            &dispatch("r1", "write", json!({"path": "a.txt", "content": "hello"})),
            Duration::from_secs(5),
        )
        .await
        .expect("rendered");
    assert_eq!(rendered.payload, "write a.txt:\nhello");
    assert_eq!(rendered.kind, PayloadKind::Text as i32);
    let path = format!("{}.txt", fixture_toolset::RENDER_HANGS);
    let started = std::time::Instant::now();
    let hung = s
        .worker
        .render(
            &dispatch("r2", "write", json!({"path": path, "content": "hello"})),
            Duration::from_millis(300),
        )
        .await;
    assert!(matches!(hung, Err(RenderError::TimedOut(_))), "{hung:?}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let refused = s
        .worker
        .render(
            &dispatch(
                "r3",
                "write",
                json!({"path": fixture_toolset::UNRENDERABLE, "content": "hello"}),
            ),
            Duration::from_secs(5),
        )
        .await;
    assert!(
        matches!(&refused, Err(RenderError::Failed(m)) if m == fixture_toolset::UNRENDERABLE_BECAUSE),
        "{refused:?}"
    );
    assert!(fixture_toolset::asked(&s.fixture.record).is_empty());
    for id in ["r1", "r2", "r3"] {
        let id = id.to_string();
        let row = s
            .store
            .call(move |store| store.worker_call(&id))
            .await
            .expect("store");
        assert!(row.is_none(), "a rendering is no call");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn arch4_progress_arrives_before_the_result_and_a_failing_tool_is_a_failure() {
    let s = setup().await;
    let lines = Arc::new(Mutex::new(Vec::new()));
    let seen = lines.clone();
    let outcome = s
        .worker
        .invoke(
            &s.store,
            &s.signer,
            dispatch("s1", "slow", json!({"ms": 200})),
            move |line| seen.lock().expect("lock").push(line),
        )
        .await
        .expect("store");
    assert_eq!(success_text(&outcome), "slept 200 ms");
    assert_eq!(
        lines.lock().expect("lock").as_slice(),
        ["25% done", "50% done", "75% done", "100% done"]
    );

    let outcome = invoke(&s, dispatch("f1", "fail", json!({}))).await;
    match outcome {
        CallOutcome::Finished(result) => assert!(matches!(
            result.outcome,
            Some(tool_result::Outcome::Failure(_))
        )),
        other => panic!("expected a failure result, got {other:?}"),
    }
    assert_eq!(recorded(&s, "f1").await.0.as_deref(), Some("failure"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_call_past_its_deadline_ends_as_its_declaration_says() {
    let s = setup().await;
    let mut read = dispatch("h1", "hang_read", json!({}));
    read.deadline = Duration::from_millis(300);
    let outcome = invoke(&s, read).await;
    assert!(
        matches!(&outcome, CallOutcome::Lost(r) if r.contains("deadline")),
        "a retryable read is a plain failure: {outcome:?}"
    );
    assert_eq!(recorded(&s, "h1").await.0.as_deref(), Some("lost"));

    let mut write = dispatch("h2", "hang_write", json!({}));
    write.deadline = Duration::from_millis(300);
    let outcome = invoke(&s, write).await;
    assert!(
        matches!(&outcome, CallOutcome::Ambiguous(r) if r.contains("cannot be confirmed")),
        "a mutating call is side-effect ambiguity: {outcome:?}"
    );
    assert_eq!(recorded(&s, "h2").await.0.as_deref(), Some("ambiguous"));

    // Each admitted call left its line, whether the worker was cancelled or
    // saw its caller go first.
    for _ in 0..50 {
        let text = std::fs::read_to_string(&s.fixture.audit).unwrap_or_default();
        if text.lines().count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let lines: Vec<Value> = std::fs::read_to_string(&s.fixture.audit)
        .expect("audit")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let calls: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["call"].as_str().unwrap_or(""),
                l["outcome"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    for (call, outcome) in calls {
        assert!(["h1", "h2"].contains(&call), "{call}");
        assert!(
            ["failure", "abandoned"].contains(&outcome),
            "{call}: {outcome}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_worker_killed_mid_call_ends_each_call_as_its_declaration_says() {
    let mut s = setup().await;
    let (slow, hang) = {
        let mut slow = dispatch("k1", "slow", json!({"ms": 20000}));
        slow.deadline = Duration::from_secs(30);
        let mut hang = dispatch("k2", "hang_read", json!({}));
        hang.deadline = Duration::from_secs(30);
        let first = s.worker.invoke(&s.store, &s.signer, slow, |_| {});
        let second = s.worker.invoke(&s.store, &s.signer, hang, |_| {});
        let kill = async {
            // Both calls reach the worker before it dies.
            for _ in 0..100 {
                if fixture_toolset::asked(&s.fixture.record).len() == 2 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            s.fixture.kill();
        };
        let (slow, hang, ()) = tokio::join!(first, second, kill);
        (slow.expect("store"), hang.expect("store"))
    };
    assert!(
        matches!(&slow, CallOutcome::Ambiguous(_)),
        "a call that may have acted and is not retryable: {slow:?}"
    );
    assert!(
        matches!(&hang, CallOutcome::Lost(_)),
        "a retryable read: {hang:?}"
    );
    assert_eq!(recorded(&s, "k1").await.0.as_deref(), Some("ambiguous"));
    assert_eq!(recorded(&s, "k2").await.0.as_deref(), Some("lost"));

    // A call to the dead worker is never sent, so it cannot have acted.
    // The connection's end reaches the client a moment after the process
    // ends; a call made before that may find the old connection and be
    // answered "lost" (for a write, "may have acted": the client cannot
    // tell a request canceled unsent from one the worker took). A read,
    // safe to retry, waits for the connection's end to be known first.
    for attempt in 0..50 {
        let probe = invoke(
            &s,
            dispatch(&format!("p{attempt}"), "read", json!({"key": "k"})),
        )
        .await;
        if matches!(&probe, CallOutcome::NotSent(_)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = invoke(&s, dispatch("k3", "hang_write", json!({}))).await;
    assert!(
        matches!(&after, CallOutcome::NotSent(r) if r.contains("could not be reached")),
        "{after:?}"
    );
    assert_eq!(recorded(&s, "k3").await.0.as_deref(), Some("not_sent"));
}

#[tokio::test(flavor = "multi_thread")]
async fn arch4_a_worker_restarted_under_the_daemon_is_handshaken_again() {
    let mut s = setup().await;
    // The worker restarts (a crash, a package upgrade, an operator's
    // restart) while the daemon runs: the new process holds no boot key.
    s.fixture.kill();
    s.fixture = FixtureProcess::start(s.dir.path(), me(), None);
    let outcome = invoke(&s, dispatch("r1", "read", json!({"key": "k"}))).await;
    assert_eq!(
        success_text(&outcome),
        "the value of k",
        "the key is handed over again and the call runs"
    );
    assert_eq!(recorded(&s, "r1").await.0.as_deref(), Some("success"));
    let asked = fixture_toolset::asked(&s.fixture.record);
    assert_eq!(asked.len(), 1, "the tool ran once: {asked:?}");
    // And the calls after it need no second handshake.
    let outcome = invoke(&s, dispatch("r2", "read", json!({"key": "j"}))).await;
    assert_eq!(success_text(&outcome), "the value of j");
}

#[tokio::test(flavor = "multi_thread")]
async fn arch4_a_worker_that_differs_from_its_declaration_is_refused_naming_the_field() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture = FixtureProcess::start(dir.path(), me(), None);
    let mut declared = declaration();
    declared.tools.retain(|t| t.name != "lookup");
    if let Some(write) = declared.tools.iter_mut().find(|t| t.name == "write") {
        write.gate = Gate::None;
    }
    let spec = WorkerSpec {
        socket: fixture.socket.clone(),
        served_by: Some(me()),
        declaration: declared,
        sandbox: as_started(),
    };
    let signer = GrantSigner::generate("boot-e2e");
    let error = match Worker::connect(&spec, &signer).await {
        Err(error) => error.to_string(),
        Ok(_) => panic!("a differing worker was accepted"),
    };
    assert!(
        error.starts_with("worker `fixture` does not match"),
        "{error}"
    );
    assert!(
        error.contains("tools.lookup: served, but not declared"),
        "{error}"
    );
    assert!(
        error.contains("tools.write.gate: the worker declares Approval, the daemon None"),
        "{error}"
    );
}

/// The OS user `tests/setup.sh` creates for workers.
const WORKER_USER: &str = "collegium-test-worker";

/// The worker as a real other user, the daemon as this one: the handshake
/// reports that user, and both ends' peer checks are exercised.
#[tokio::test(flavor = "multi_thread")]
async fn arch4_a_worker_under_its_own_user_is_checked_by_both_ends() {
    // Starting a process as another user takes root.
    e2e::require_root();
    let worker_user = nix::unistd::User::from_name(WORKER_USER)
        .expect("lookup")
        .unwrap_or_else(|| panic!("no OS user {WORKER_USER}: run tests/setup.sh"));
    let (uid, gid) = (worker_user.uid.as_raw(), worker_user.gid.as_raw());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let fixture = FixtureProcess::start(dir.path(), me(), Some((uid, gid)));
    let signer = GrantSigner::generate("boot-e2e");
    let confined = SandboxExpectation {
        uid,
        gid,
        allowed_capabilities: 0,
        landlock_floor: None,
        command_cgroups: false,
        command_namespaces: &[],
        command_bounds: &[],
    };
    let spec = WorkerSpec {
        socket: fixture.socket.clone(),
        served_by: Some(uid),
        declaration: declaration(),
        sandbox: confined.clone(),
    };
    let worker = Worker::connect(&spec, &signer).await;
    assert!(
        worker.is_ok(),
        "a worker under its own user, no capabilities, no-new-privileges: {:?}",
        worker.err().map(|e| e.to_string())
    );

    // A socket served by someone other than the worker's user is not spoken to.
    let impostor = WorkerSpec {
        served_by: Some(me()),
        ..spec.clone()
    };
    match Worker::connect(&impostor, &signer).await {
        Err(WorkerError::Connect { reason, .. }) => {
            assert!(reason.contains("not the worker's uid"), "{reason}")
        }
        other => panic!("expected a refused connection, got {:?}", other.err()),
    }

    // A worker that admits only another uid never answers this one.
    let other_dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(other_dir.path(), std::fs::Permissions::from_mode(0o777))
        .expect("chmod");
    let closed = FixtureProcess::start(other_dir.path(), uid, Some((uid, gid)));
    let spec = WorkerSpec {
        socket: closed.socket.clone(),
        ..spec
    };
    assert!(
        Worker::connect(&spec, &signer).await.is_err(),
        "the worker closes a peer it does not admit"
    );
}

/// A worker that stops answering altogether (here, SIGSTOP) still lets the
/// call end once its deadline passes: the cancel the daemon sends after it
/// is bounded too.
#[tokio::test(flavor = "multi_thread")]
async fn s7_1_a_wedged_worker_does_not_hold_a_call_past_its_deadline() {
    let s = setup().await;
    let pid = s.fixture.child.id().to_string();
    let stopped = Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .expect("kill");
    assert!(stopped.success());
    let mut read = dispatch("w1", "hang_read", json!({}));
    read.deadline = Duration::from_millis(300);
    let outcome = tokio::time::timeout(Duration::from_secs(30), invoke(&s, read))
        .await
        .expect("the call ended although the worker never answers");
    assert!(
        matches!(&outcome, CallOutcome::Lost(r) if r.contains("deadline")),
        "{outcome:?}"
    );
    let _ = Command::new("kill").args(["-CONT", &pid]).status();
}
