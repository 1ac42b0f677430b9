//! Readiness and watchdog (issue 21, item 4): the real daemon against the
//! simulators, with a notify socket the test binds and a watchdog the test
//! asks for. `STATUS=` names each boot phase in order; `READY=1` arrives
//! only after the boot notice is posted (§7.3); `WATCHDOG=1` pings arrive
//! while the store and the event loop answer, and stop when the `test-hooks`
//! build's SIGUSR1 wedges the store thread; SIGTERM sends `STOPPING=1` before
//! the stop, even while the store is still wedged.

use std::process::Command;
use std::time::Duration;

use e2e::notify::{during, listen, pings, until};
use e2e::people::now_ms;

fn signal(daemon: &e2e::Daemon, name: &str) {
    let status = Command::new("kill")
        .args([name, &daemon.child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

#[tokio::test(flavor = "multi_thread")]
async fn i21_ready_follows_the_boot_notice_pings_stop_on_a_wedged_store_and_sigterm_says_stopping()
{
    let h = e2e::Harness::start().await;
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    // A plugin the daemon starts as its child: it must not speak for the
    // daemon, so no READY=1 or STATUS= of its own reaches this socket.
    let record = h.dir.path().join("asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(&["workspace", "fixture"]);
    // A first run, stopped cleanly, so the second boot posts its notice.
    let mut first = h.daemon();
    first.wait_for("agents are listening");
    first.terminate();
    let _ = first.child.wait();
    let square = e2e::scenario::square_with(&h, &[]).await;

    let socket = h.dir.path().join("notify.sock");
    let said = listen(&socket);
    let since = now_ms();
    let mut launcher = Command::new(e2e::binary("collegium"));
    launcher
        .env("NOTIFY_SOCKET", &socket)
        // One second: a ping every half second, each probe bounded by 250 ms.
        .env("WATCHDOG_USEC", "1000000");
    let mut daemon = h.daemon_from(launcher);

    let boot = until(&said, "READY=1", Duration::from_secs(60));
    let ready_at = boot.last().expect("READY=1").at_ms;
    let statuses: Vec<&str> = boot
        .iter()
        .flat_map(|s| &s.lines)
        .filter_map(|l| l.strip_prefix("STATUS="))
        .collect();
    assert_eq!(
        statuses,
        vec![
            "store migrated; verifying models",
            "checking Mattermost",
            "starting plugins and connecting workers",
            "recording this run, sweeping the previous one, posting the boot notice",
            "serving",
        ],
        "each boot phase said in order, serving with READY=1"
    );
    assert!(
        boot.iter().any(|s| s
            .lines
            .iter()
            .any(|l| l.starts_with("EXTEND_TIMEOUT_USEC="))),
        "more start time asked for while the models are verified"
    );
    let notice = h
        .wait_post(&square, "collegium", "Collegium restarted", since)
        .await;
    assert!(
        notice.create_at <= ready_at,
        "READY=1 ({ready_at}) came before the boot notice ({})",
        notice.create_at
    );

    let healthy = during(&said, Duration::from_secs(3));
    assert!(
        pings(&healthy) >= 3,
        "a healthy daemon pings every half second; saw {}",
        pings(&healthy)
    );
    assert!(
        !healthy.iter().any(|s| s.has("READY=1")),
        "READY=1 is said once"
    );

    // The test hook wedges the store thread for eight seconds.
    signal(&daemon, "-USR1");
    daemon.wait_for("test hook: wedging the store thread");
    // A probe already past the store may still ping once.
    let _ = during(&said, Duration::from_millis(800));
    let wedged = during(&said, Duration::from_millis(2500));
    assert_eq!(
        pings(&wedged),
        0,
        "no ping while the store thread does not answer"
    );

    daemon.terminate();
    let stopping = until(&said, "STOPPING=1", Duration::from_secs(3));
    assert!(stopping.last().expect("STOPPING=1").has("STATUS=stopping"));
    // The stop itself waits for the store, which the hook releases.
    daemon.wait_for("stopped cleanly");
}

/// A stop while the boot still checks its models ends the boot at once:
/// `STOPPING=1`, a clean exit, and no run recorded, rather than a stop
/// that waits for the checks and the whole boot after them.
#[tokio::test(flavor = "multi_thread")]
async fn i21_sigterm_while_the_models_are_verified_stops_the_boot_at_once() {
    let h = e2e::Harness::start().await;
    h.provision().await.expect("provisioned");
    // The model holds its answer to the boot's check (10 s at most).
    h.model.sim.script(
        "demo-model",
        vec![model_sim::script::Scripted {
            text: Some("ok".into()),
            hold: Some("verify".into()),
            ..Default::default()
        }],
    );
    let socket = h.dir.path().join("notify.sock");
    let said = listen(&socket);
    let mut launcher = Command::new(e2e::binary("collegium"));
    launcher.env("NOTIFY_SOCKET", &socket);
    let mut daemon = h.daemon_from(launcher);
    until(
        &said,
        "STATUS=store migrated; verifying models",
        Duration::from_secs(30),
    );
    // The check reached the model, and waits there.
    for _ in 0..400 {
        if !h.model.sim.requests().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(!h.model.sim.requests().is_empty(), "the model was checked");

    daemon.terminate();
    let stopping = until(&said, "STOPPING=1", Duration::from_secs(3));
    assert!(
        !stopping.is_empty() && stopping.iter().all(|s| !s.has("READY=1")),
        "STOPPING=1 without READY=1"
    );
    let seen = daemon.wait_for("stopped during the boot's checks");
    let exited = (0..60).find_map(|_| {
        std::thread::sleep(Duration::from_millis(50));
        daemon.child.try_wait().expect("wait")
    });
    assert!(
        exited.is_some_and(|status| status.success()),
        "the daemon exits cleanly within 3 s of SIGTERM: {exited:?}"
    );
    assert!(
        !seen.iter().any(|l| l["message"]
            .as_str()
            .is_some_and(|m| m.contains("collegium is running"))),
        "no run is recorded"
    );
    h.model.sim.release("verify");
}

#[test]
fn i21_a_worker_says_ready_once_its_socket_is_served() {
    let dir = tempfile::tempdir().expect("dir");
    let notify = dir.path().join("notify.sock");
    let said = listen(&notify);
    let socket = dir.path().join("toolset.sock");
    let mut worker = Command::new(e2e::binary("collegium-fixture-toolset"))
        .arg("--socket")
        .arg(&socket)
        .arg("--audit")
        .arg(dir.path().join("audit.jsonl"))
        .arg("--record")
        .arg(dir.path().join("asked.jsonl"))
        .args(["--allow-uid", &nix::unistd::getuid().to_string()])
        .env("NOTIFY_SOCKET", &notify)
        .env("RUST_LOG", "warn")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn the fixture toolset");
    let ready = until(&said, "READY=1", Duration::from_secs(30));
    let accepts = std::os::unix::net::UnixStream::connect(&socket).is_ok();
    let _ = worker.kill();
    let _ = worker.wait();
    let ready = ready.last().expect("READY=1");
    assert!(
        ready.has(&format!("STATUS=serving on {}", socket.display())),
        "READY=1 names the socket served; said {:?}",
        ready.lines
    );
    assert!(
        accepts,
        "the socket accepts connections once READY=1 is said"
    );
}
