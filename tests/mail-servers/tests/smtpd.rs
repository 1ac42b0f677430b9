//! The harness's OpenSMTPD is a real SMTP server: what a client submits
//! reaches exactly its envelope recipients' mailboxes in Dovecot, byte for
//! byte, and two instances run side by side, each in its own mount
//! namespace. Root only.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mail_servers::{Dovecot, Protocol, Smtpd, User, send};

/// Submits `message` from `from` to `to` over SMTP.
fn submit(at: SocketAddr, from: &str, to: &[&str], message: &[u8]) {
    send(Protocol::Smtp, at, from, to, message).unwrap_or_else(|e| panic!("{e}"));
}

fn wait_for(dovecot: &Dovecot, user: &str, count: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let now = dovecot
            .count(user, "INBOX")
            .unwrap_or_else(|e| panic!("{e}"));
        if now >= count {
            assert_eq!(now, count, "{user} got more than was sent");
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{user} has {now} of {count} messages; dovecot said:\n{}",
            dovecot.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn s3_13_submitted_mail_reaches_exactly_its_envelope_recipients() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let dovecot = Dovecot::start(&[User::new("mira@mail.test", "tide-table")])
        .unwrap_or_else(|e| panic!("{e}"));
    let first = Smtpd::start(dovecot.lmtp).unwrap_or_else(|e| panic!("{e}"));
    let second = Smtpd::start(dovecot.lmtp).unwrap_or_else(|e| panic!("{e}"));
    let body = "From: Mira <mira@mail.test>\r\nTo: ana@outside.test\r\nCc: ben@elsewhere.test\r\n\
                Subject: Tide tables\r\nMessage-ID: <tides-1@mail.test>\r\n\r\n\
                High water is at 06:12 on Monday.\r\n";
    submit(
        first.smtp,
        "mira@mail.test",
        &["ana@outside.test", "ben@elsewhere.test"],
        body.as_bytes(),
    );
    submit(
        second.smtp,
        "mira@mail.test",
        &["ana@outside.test"],
        b"Subject: Second\r\n\r\nVia the second instance.\r\n",
    );
    wait_for(&dovecot, "ana@outside.test", 2);
    wait_for(&dovecot, "ben@elsewhere.test", 1);
    assert_eq!(
        dovecot
            .count("carl@outside.test", "INBOX")
            .unwrap_or_else(|e| panic!("{e}")),
        0
    );
    let received = dovecot
        .messages("ben@elsewhere.test", "INBOX")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        received.contains("High water is at 06:12 on Monday.")
            && received.contains("Message-ID: <tides-1@mail.test>"),
        "{received}"
    );
}
