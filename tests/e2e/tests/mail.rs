//! Mail end to end (§3.13, §3.7): the mail worker started as root beside
//! the daemon, dropping to `collegium-mail`, against a real Dovecot and
//! OpenSMTPD. An agent granted `mail` lists and opens a message through the
//! daemon; a send a person approves is delivered and one they deny is not;
//! refused credentials refuse boot, naming the mailbox and the server; and
//! the configuration check refuses a mailbox password the daemon could read.

use std::time::Duration;

use e2e::Harness;
use e2e::mail_worker::{MailServers, PASSWORD};
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with, tool_results, turn_requests};
use serde_json::json;

/// The INBOX's UIDVALIDITY, as the worker's own poll reports it.
async fn uidvalidity(h: &Harness) -> u32 {
    let loaded = h.loaded();
    let account = nix::unistd::User::from_name("collegium-mail")
        .expect("lookup")
        .expect("collegium-mail");
    let client = collegium_control::workers::mail::MailWorker::connect(
        &collegium_control::workers::framework::socket(&loaded, "mail"),
        account.uid.as_raw(),
    )
    .await
    .expect("the Mailbox service");
    client
        .poll("mira", None, 1)
        .await
        .expect("poll")
        .cursor
        .expect("a cursor")
        .uidvalidity
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_an_agent_lists_and_opens_a_message_through_the_daemon() {
    let h = Harness::start().await;
    let servers = e2e::mail_worker::deployment(&h, PASSWORD).await;
    servers.seed_from_ana("tides", "High water is at 06:12 on Monday.");
    let _worker = e2e::mail_worker::start(&h.config, &servers.ca()).expect("the mail worker");
    let validity = uidvalidity(&h).await;
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("mail__list", json!({}))]),
            calls(&[("mail__open", json!({"message": format!("{validity}.1")}))]),
            reply("Read it."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira what is in the mailbox?").await;
    h.wait_post(&square, "mira", "Read it.", since).await;
    let results = tool_results(&turn_requests(&h).pop().expect("completions"));
    assert!(results[0].contains("holds 1 messages"), "{}", results[0]);
    assert!(results[0].contains("subject: tides"), "{}", results[0]);
    assert!(
        results[1].contains("From: Ana <ana@outside.test>"),
        "{}",
        results[1]
    );
    assert!(results[1].contains("Attachments: none."), "{}", results[1]);
    assert!(
        results[1].contains("High water is at 06:12 on Monday."),
        "{}",
        results[1]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_an_approved_send_is_delivered_and_a_denied_one_is_not() {
    let h = Harness::start().await;
    let servers = e2e::mail_worker::deployment(&h, PASSWORD).await;
    let _worker = e2e::mail_worker::start(&h.config, &servers.ca()).expect("the mail worker");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[(
                "mail__send",
                json!({"to": ["ben@outside.test"], "cc": ["cy@outside.test"], "subject": "Tides", "body": "High water at 06:12."}),
            )]),
            reply("Sent."),
            calls(&[(
                "mail__send",
                json!({"to": ["dee@outside.test"], "subject": "Never", "body": "Not to be sent."}),
            )]),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira tell Ben the tides").await;
    let prompt = h.wait_post(&square, "mira", "Approval needed", since).await;
    // The person reads the message as it will go: From, every recipient,
    // the subject and the whole body (§3.7).
    for shown in [
        "From: mira@mail.test",
        "To: ben@outside.test",
        "Cc: cy@outside.test",
        "Subject: Tides",
        "High water at 06:12.",
    ] {
        assert!(
            prompt.message.contains(shown),
            "{shown}: {}",
            prompt.message
        );
    }
    h.click("ana", &prompt.id, "approve").await;
    h.wait_post(&square, "mira", "Sent.", since).await;
    let delivered = |user: &str| servers.dovecot.count(user, "INBOX").expect("count");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while (delivered("ben@outside.test") < 1 || delivered("cy@outside.test") < 1)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(delivered("ben@outside.test"), 1);
    assert_eq!(delivered("cy@outside.test"), 1);

    let since = now_ms() - 1;
    h.say("ana", &square, "@mira and write to Dee").await;
    let second = h
        .wait_post(&square, "mira", "To: dee@outside.test", since)
        .await;
    h.click("ana", &second.id, "deny").await;
    h.wait_edit(&second.id, "Denied by @ana").await;
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        delivered("dee@outside.test"),
        0,
        "a denied send delivers nothing"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_refused_credentials_refuse_boot_naming_the_mailbox_and_server() {
    let h = Harness::start().await;
    let servers = e2e::mail_worker::deployment(&h, "not-the-password").await;
    let _worker = e2e::mail_worker::start(&h.config, &servers.ca()).expect("the mail worker");
    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("agent mira")
            && stderr.contains("mailbox mira@mail.test")
            && stderr.contains(&format!("localhost:{}", servers.dovecot.imaps.port()))
            && stderr.contains("refused"),
        "{stderr}"
    );
    assert!(!stderr.contains("not-the-password"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_the_configuration_check_refuses_a_password_the_daemon_could_read() {
    let h = Harness::start().await;
    let servers = MailServers::start().unwrap_or_else(|e| panic!("{e}"));
    servers.configure(&h, PASSWORD);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let inline = text.replacen(
        "password = { file = ",
        &format!("password = {{ value = \"{PASSWORD}\" }}\n# was: password = {{ file = "),
        1,
    );
    std::fs::write(&h.config, inline).expect("write config");
    let error = collegium_control::config::load(&h.config).expect_err("refused");
    let report = error.report();
    assert!(
        report.contains("agents[0].settings.mail.mailbox.imap.password")
            && report.contains("never inline"),
        "{report}"
    );
    assert!(!report.contains(PASSWORD), "{report}");
}
