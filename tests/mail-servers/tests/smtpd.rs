//! The harness's OpenSMTPD is a real SMTP server: what a client submits
//! reaches exactly its envelope recipients' mailboxes in Dovecot, byte for
//! byte, and two instances run side by side, each in its own mount
//! namespace. Root only.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mail_servers::{Dovecot, Smtpd, User};

/// Submits `message` from `from` to `to` over SMTP.
fn submit(at: SocketAddr, from: &str, to: &[&str], message: &[u8]) {
    let socket = TcpStream::connect(at).expect("connect to SMTP");
    let mut reader = BufReader::new(socket.try_clone().expect("clone"));
    let mut writer = socket;
    let mut expect = |code: &str| loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("read");
        assert!(line.starts_with(code), "expected {code}: {line}");
        if line.as_bytes().get(3) == Some(&b' ') {
            break;
        }
    };
    expect("220");
    let mut steps = vec![
        ("EHLO client.test".to_string(), "250"),
        (format!("MAIL FROM:<{from}>"), "250"),
    ];
    steps.extend(to.iter().map(|r| (format!("RCPT TO:<{r}>"), "250")));
    steps.push(("DATA".to_string(), "354"));
    for (send, code) in steps {
        writer
            .write_all(format!("{send}\r\n").as_bytes())
            .expect("send");
        expect(code);
    }
    writer.write_all(message).expect("send the message");
    writer.write_all(b"\r\n.\r\n").expect("end the message");
    expect("250");
    writer.write_all(b"QUIT\r\n").expect("quit");
    let mut rest = Vec::new();
    let _ = reader.read_to_end(&mut rest);
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
fn submitted_mail_reaches_exactly_its_envelope_recipients() {
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
