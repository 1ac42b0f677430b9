//! A toolset served with the kit on a real Unix socket (ARCHITECTURE §4):
//! only allowed peers are served, the handshake hands over the grant key,
//! grants are checked before the tool acts, and every call — refused or run
//! — leaves its line in the audit log, anchored on the result.

mod support;

use std::collections::BTreeSet;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    Call, DescribeRequest, HealthRequest, InvokeRequest, invoke_event,
};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::audit::{self, Anchor};
use collegium_worker_kit::client;
use collegium_worker_kit::grant::GrantSigner;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use support::shout::shout;

fn me() -> u32 {
    nix::unistd::geteuid().as_raw()
}

fn call(id: &str, text: &str) -> Call {
    Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: id.into(),
        tool: "it".into(),
        arguments_json: text.as_bytes().to_vec(),
        ..Call::default()
    }
}

#[tokio::test]
async fn arch4_calls_are_granted_run_audited_and_anchored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("shout.sock");
    let log = dir.path().join("shout.audit.jsonl");
    let (toolset, ran) = shout(&log);
    let policy = PeerPolicy {
        allowed_uids: BTreeSet::from([me()]),
    };
    let serving = serve(&socket, 0o660, policy, toolset).await.expect("serve");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&socket)
            .expect("socket")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o660);
    }

    let signer = GrantSigner::generate("boot-1");
    let mut client = client::connect(&socket, Some(me())).await.expect("connect");
    let described = client
        .describe(DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
            boot_id: signer.boot_id().into(),
            grant_public_key: signer.public_key().to_vec(),
        })
        .await
        .expect("describe")
        .into_inner();
    assert_eq!(
        described.sandbox.expect("sandbox").effective_uid,
        me(),
        "the worker reports who it runs as"
    );

    let c = call("c1", "hello");
    let grant = signer.sign("shout", &c, "", now_ms());
    let mut events = client
        .invoke(InvokeRequest {
            call: Some(c.clone()),
            grant: Some(grant.clone()),
        })
        .await
        .expect("invoke")
        .into_inner();
    let event = events.message().await.expect("stream").expect("an event");
    let Some(invoke_event::Event::Result(result)) = event.event else {
        panic!("expected a result");
    };
    let anchor = result.audit.expect("the result carries its audit line");
    assert_eq!(anchor.seq, 1);

    // The same grant again: refused before the tool runs, and audited.
    let refused = client
        .invoke(InvokeRequest {
            call: Some(c.clone()),
            grant: Some(grant),
        })
        .await
        .expect_err("replay refused");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(
        refused.message().contains("never replayed"),
        "{}",
        refused.message()
    );

    // Changed bytes under a fresh call's grant: refused too.
    let approved = call("c2", "quiet");
    let grant = signer.sign("shout", &approved, "", now_ms());
    let refused = client
        .invoke(InvokeRequest {
            call: Some(call("c2", "LOUD")),
            grant: Some(grant),
        })
        .await
        .expect_err("changed bytes refused");
    assert!(
        refused.message().contains("not the bytes"),
        "{}",
        refused.message()
    );

    assert_eq!(ran.lock().expect("lock").as_slice(), ["HELLO".to_string()]);
    let verified = audit::verify(
        &log,
        Some(&Anchor {
            seq: anchor.seq,
            hash: anchor.hash,
        }),
    )
    .expect("the log verifies against the anchor");
    assert_eq!(verified.lines, 3);
    let text = std::fs::read_to_string(&log).expect("log");
    let outcomes: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json")["outcome"].to_string())
        .collect();
    assert_eq!(
        outcomes,
        ["\"success\"", "\"grant_refused\"", "\"grant_refused\""]
    );
    serving.shutdown().await.expect("clean shutdown");
    assert!(!socket.exists(), "the socket is removed at shutdown");
}

#[tokio::test]
async fn arch4_a_peer_whose_uid_is_not_allowed_is_closed_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("shout.sock");
    let (toolset, _) = shout(&dir.path().join("audit.jsonl"));
    let policy = PeerPolicy {
        allowed_uids: BTreeSet::from([me().wrapping_add(4242)]),
    };
    let serving = serve(&socket, 0o660, policy, toolset).await.expect("serve");
    let outcome = async {
        let mut client = client::connect(&socket, None).await?;
        client
            .health(HealthRequest {})
            .await
            .map_err(|status| Box::new(status) as Box<dyn std::error::Error>)?;
        Ok::<_, Box<dyn std::error::Error>>(())
    }
    .await;
    assert!(outcome.is_err(), "a refused peer is never answered");
    serving.shutdown().await.expect("clean shutdown");
}

#[tokio::test]
async fn arch4_the_daemon_does_not_speak_to_a_socket_served_by_another_user() {
    let dir = tempfile::tempdir().expect("tempdir");
    let socket = dir.path().join("shout.sock");
    let (toolset, _) = shout(&dir.path().join("audit.jsonl"));
    let policy = PeerPolicy {
        allowed_uids: BTreeSet::from([me()]),
    };
    let serving = serve(&socket, 0o660, policy, toolset).await.expect("serve");
    let error = client::connect(&socket, Some(me().wrapping_add(4242)))
        .await
        .expect_err("refused");
    let chain = format!("{error:?}");
    assert!(chain.contains("not the worker's uid"), "{chain}");
    serving.shutdown().await.expect("clean shutdown");
}

/// With root, the peer is a real process of another user (`nobody`): closed
/// unread when its uid is not allowed, answered (the server's HTTP/2 preface)
/// when it is.
#[tokio::test]
async fn arch4_a_real_process_of_another_user_is_judged_by_its_uid() {
    use std::os::unix::fs::PermissionsExt;
    // Only root can start a process as another user; the uid check itself
    // is covered above with this process's own uid.
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test starts a process as another user: run it as root, as CI does"
    );
    let nobody = nix::unistd::User::from_name("nobody")
        .expect("lookup")
        .expect("nobody");
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for (allowed, answered) in [(me(), false), (nobody.uid.as_raw(), true)] {
        let socket = dir.path().join(format!("shout-{allowed}.sock"));
        let (toolset, _) = shout(&dir.path().join(format!("audit-{allowed}.jsonl")));
        let policy = PeerPolicy {
            allowed_uids: BTreeSet::from([allowed]),
        };
        let serving = serve(&socket, 0o666, policy, toolset).await.expect("serve");
        let probe = format!(
            "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({:?})\n\
             s.settimeout(5)\n\
             try:\n\
             \x20   s.sendall(b'PRI * HTTP/2.0\\r\\n\\r\\nSM\\r\\n\\r\\n' + bytes([0,0,0,4,0,0,0,0,0]))\n\
             \x20   print(len(s.recv(64)))\n\
             except (BrokenPipeError, ConnectionResetError):\n\
             \x20   print(0)\n",
            socket.display().to_string()
        );
        let out = tokio::process::Command::new("python3")
            .args(["-c", &probe])
            .uid(nobody.uid.as_raw())
            .gid(nobody.gid.as_raw())
            .output()
            .await
            .expect("python3");
        let stdout = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if answered {
            assert!(
                stdout.parse::<u32>().is_ok_and(|n| n > 0),
                "an allowed peer is answered: {stdout} {stderr}"
            );
        } else {
            assert!(
                stdout == "0",
                "a refused peer reads nothing: {stdout} {stderr}"
            );
        }
        serving.shutdown().await.expect("clean shutdown");
    }
}
