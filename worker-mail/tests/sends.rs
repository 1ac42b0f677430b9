//! Sending through a real OpenSMTPD delivering into a real Dovecot (§3.13,
//! §3.7, §7.1): the envelope is exactly To and Cc, From is the mailbox's,
//! the approved body arrives; a reply threads; a refusal at RCPT is a result
//! and nothing is sent; a connection cut after the final dot is unresolved,
//! and the one copy the server took is the only one.

mod support;

use collegium_proto::toolset::v1::PayloadKind;
use collegium_proto::toolset::v1::tool_result::Outcome;
use mail_parser::MessageParser;
use serde_json::json;
use support::{ADDRESS, Options, Rig, ids, text};

/// SMTP carries lines ending in CRLF (RFC 5321), whatever the body used.
fn lines(text: &str) -> String {
    text.replace("\r\n", "\n")
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_send_reaches_exactly_to_and_cc_from_the_mailbox() {
    let rig = Rig::start(Options::default()).await;
    let body = "Hello Ana,\n\nthe tide turns at 06:12. Ünïcödé stays as written.\n-- Mira\n";
    let arguments = json!({
        "to": ["ana@outside.test", "ben@outside.test"],
        "cc": ["cy@elsewhere.test"],
        "subject": "Tides on Monday",
        "body": body,
    });
    // What the person approving reads: From, every recipient, the subject
    // and the whole body.
    let rendered = rig
        .render("send", arguments.clone())
        .await
        .expect("rendered");
    assert_eq!(rendered.kind, PayloadKind::Text as i32);
    assert!(rendered.payload.starts_with(&format!(
        "From: {ADDRESS}\nTo: ana@outside.test, ben@outside.test\nCc: cy@elsewhere.test\nSubject: Tides on Monday\n"
    )), "{}", rendered.payload);
    assert!(rendered.payload.ends_with(body), "{}", rendered.payload);

    let sent = rig.invoke("send", arguments).await;
    assert!(
        text(&sent).starts_with("Sent from mira@mail.test"),
        "{sent:?}"
    );
    for recipient in ["ana@outside.test", "ben@outside.test", "cy@elsewhere.test"] {
        rig.wait_for(recipient, 1);
    }
    // No one else: the sender's own INBOX got nothing.
    assert_eq!(rig.dovecot.count(ADDRESS, "INBOX").expect("count"), 0);
    let raw = rig
        .dovecot
        .messages("ana@outside.test", "INBOX")
        .expect("fetch");
    let raw = raw
        .split_once("text:")
        .map_or(raw.as_str(), |(_, m)| m)
        .trim_start();
    let message = MessageParser::default()
        .parse(raw.as_bytes())
        .expect("parses");
    assert_eq!(
        message
            .from()
            .and_then(|a| a.first())
            .and_then(|a| a.address()),
        Some(ADDRESS)
    );
    // doveadm's printout ends the message with line breaks of its own.
    assert_eq!(
        lines(&message.body_text(0).expect("a body")).trim_end_matches('\n'),
        body.trim_end_matches('\n')
    );
    assert!(message.header("Bcc").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_reply_threads_under_its_original() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(
        b"From: Ana <ana@outside.test>\r\nReply-To: desk@outside.test\r\nTo: mira@mail.test\r\nSubject: Plan\r\n\
          Message-ID: <p-2@outside.test>\r\nReferences: <p-1@outside.test>\r\n\r\nWhat is the plan?\r\n",
    );
    let listing = rig.invoke("list", json!({})).await;
    let id = ids(text(&listing)).remove(0);
    let arguments =
        json!({"message": id, "body": "The plan is **simple**.", "cc": ["ben@outside.test"]});
    let rendered = rig
        .render("reply", arguments.clone())
        .await
        .expect("rendered");
    assert!(
        rendered
            .payload
            .contains("To: desk@outside.test\nCc: ben@outside.test\nSubject: Re: Plan\n"),
        "{}",
        rendered.payload
    );
    let sent = rig.invoke("reply", arguments).await;
    assert!(text(&sent).starts_with("Sent"), "{sent:?}");
    rig.wait_for("desk@outside.test", 1);
    rig.wait_for("ben@outside.test", 1);
    let raw = rig
        .dovecot
        .messages("desk@outside.test", "INBOX")
        .expect("fetch");
    assert!(raw.contains("In-Reply-To: <p-2@outside.test>"), "{raw}");
    assert!(
        raw.contains("References: <p-1@outside.test> <p-2@outside.test>"),
        "{raw}"
    );
    assert!(raw.contains("Subject: Re: Plan"), "{raw}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_the_server_threads_a_reply_with_its_original() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(
        b"From: Ana <ana@outside.test>\r\nTo: mira@mail.test\r\nSubject: Tides\r\n\
          Message-ID: <t-1@outside.test>\r\n\r\nWhen is high water?\r\n",
    );
    let listing = rig.invoke("list", json!({})).await;
    let id = ids(text(&listing)).remove(0);
    // Copied to the mailbox itself, so the reply lands beside its original.
    let sent = rig
        .invoke(
            "reply",
            json!({"message": id, "body": "At 06:12.", "cc": [support::ADDRESS]}),
        )
        .await;
    assert!(text(&sent).starts_with("Sent"), "{sent:?}");
    rig.wait_for(support::ADDRESS, 2);
    let answer = imap_exchange(
        &rig,
        &[
            &format!("LOGIN {} {}", support::ADDRESS, support::PASSWORD),
            "SELECT INBOX",
            // The server's own threading (RFC 5256), not the worker's reading.
            "UID THREAD REFERENCES UTF-8 ALL",
        ],
    )
    .await;
    assert!(answer.contains("* THREAD (1 2)"), "{answer}");
}

/// Speaks IMAP by hand over TLS to the rig's Dovecot: each command tagged
/// and read to its tagged answer; everything the server said.
async fn imap_exchange(rig: &Rig, commands: &[&str]) -> String {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let trust = collegium_worker_mail::tls::Trust::from_pems(
        vec![rig.dovecot.ca_pem().as_bytes().to_vec()],
        "the test CA",
    )
    .expect("the test CA");
    let connector = tokio_rustls::TlsConnector::from(trust.client_config().expect("a TLS client"));
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", rig.dovecot.imaps.port()))
        .await
        .expect("connect");
    let name = rustls_pki_types::ServerName::try_from("localhost").expect("a name");
    let tls = connector.connect(name, tcp).await.expect("TLS");
    let mut stream = BufReader::new(tls);
    let mut said = String::new();
    stream.read_line(&mut said).await.expect("greeting");
    for (n, command) in commands.iter().enumerate() {
        let tag = format!("t{n}");
        stream
            .get_mut()
            .write_all(format!("{tag} {command}\r\n").as_bytes())
            .await
            .expect("write");
        loop {
            let mut line = String::new();
            if stream.read_line(&mut line).await.expect("read") == 0 {
                panic!("the server closed the connection: {said}");
            }
            said.push_str(&line);
            if line.starts_with(&format!("{tag} ")) {
                assert!(line.starts_with(&format!("{tag} OK")), "{said}");
                break;
            }
        }
    }
    said
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_template_sends_the_markdown_rendered_with_raw_html_escaped() {
    let rig = Rig::start(Options {
        template: Some("<html><body><div class=\"sig\">{{body}}</div></body></html>".into()),
        ..Options::default()
    })
    .await;
    let sent = rig
        .invoke(
            "send",
            json!({"to": ["ana@outside.test"], "subject": "Hi", "body": "**bold** <script>x()</script>"}),
        )
        .await;
    assert!(text(&sent).starts_with("Sent"), "{sent:?}");
    rig.wait_for("ana@outside.test", 1);
    let raw = rig
        .dovecot
        .messages("ana@outside.test", "INBOX")
        .expect("fetch");
    let raw = raw
        .split_once("text:")
        .map_or(raw.as_str(), |(_, m)| m)
        .trim_start();
    let message = MessageParser::default()
        .parse(raw.as_bytes())
        .expect("parses");
    let html = message.body_html(0).expect("an html part");
    assert!(
        html.contains(
            "<div class=\"sig\"><p><strong>bold</strong> &lt;script&gt;x()&lt;/script&gt;</p>"
        ),
        "{html}"
    );
    assert_eq!(
        lines(&message.body_text(0).expect("text")).trim_end_matches('\n'),
        "**bold** <script>x()</script>"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_refusal_at_rcpt_is_a_result_and_nothing_is_sent() {
    let rig = Rig::start(Options::default()).await;
    let refused = format!("nobody@{}", mail_servers::REFUSED_DOMAIN);
    let result = rig
        .invoke(
            "send",
            json!({"to": ["ana@outside.test", refused], "subject": "s", "body": "b"}),
        )
        .await;
    match &result.outcome {
        Some(Outcome::Refusal(r)) => {
            assert!(r.message.starts_with("Nothing was sent:"), "{}", r.message);
            assert!(r.message.contains("RCPT TO"), "{}", r.message);
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    std::thread::sleep(std::time::Duration::from_secs(2));
    assert_eq!(
        rig.dovecot
            .count("ana@outside.test", "INBOX")
            .expect("count"),
        0
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_connection_cut_after_the_final_dot_is_unresolved_and_sent_once() {
    let rig = Rig::start(Options {
        cut_after_dot: true,
        ..Options::default()
    })
    .await;
    let result = rig
        .invoke(
            "send",
            json!({"to": ["ana@outside.test"], "subject": "Once", "body": "only once"}),
        )
        .await;
    match &result.outcome {
        Some(Outcome::Unresolved(u)) => {
            assert!(u.message.contains("cannot be established"), "{}", u.message);
        }
        other => panic!("expected unresolved, got {other:?}"),
    }
    rig.wait_for("ana@outside.test", 1);
    // Never sent again: still one copy a while later.
    std::thread::sleep(std::time::Duration::from_secs(3));
    assert_eq!(
        rig.dovecot
            .count("ana@outside.test", "INBOX")
            .expect("count"),
        1
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_bad_address_or_a_bcc_is_refused_before_any_prompt() {
    let rig = Rig::start(Options::default()).await;
    let bad = rig
        .render(
            "send",
            json!({"to": ["not an address"], "subject": "s", "body": "b"}),
        )
        .await
        .expect_err("refused");
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
    assert!(
        bad.message()
            .starts_with("to[0]: `not an address` is not an e-mail address"),
        "{}",
        bad.message()
    );
    let bcc = rig
        .render(
            "send",
            json!({"to": ["a@outside.test"], "bcc": ["b@outside.test"], "subject": "s", "body": "b"}),
        )
        .await
        .expect_err("refused");
    assert_eq!(bcc.code(), tonic::Code::InvalidArgument);
    assert!(bcc.message().contains("bcc"), "{}", bcc.message());
    // The worker refuses the same at the call itself.
    let invoked = rig
        .invoke("send", json!({"to": ["a@@b"], "subject": "s", "body": "b"}))
        .await;
    assert!(
        matches!(invoked.outcome, Some(Outcome::InvalidArguments(_))),
        "{invoked:?}"
    );
    // An unknown message to reply to is refused before the prompt too.
    let stale = rig
        .render("reply", json!({"message": "1.1", "body": "b"}))
        .await
        .expect_err("refused");
    assert_eq!(stale.code(), tonic::Code::OutOfRange, "{stale:?}");
}
