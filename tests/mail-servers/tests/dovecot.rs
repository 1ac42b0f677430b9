//! The harness's Dovecot is a real IMAP server: a seeded message and one
//! delivered over LMTP are both in the mailbox an IMAP client over TLS
//! selects, UIDVALIDITY changes when asked, and a restart keeps the mail.
//! Root only: Dovecot drops to its own users.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;

use mail_servers::{Dovecot, Protocol, User, send};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

const MIRA: &str = "mira@mail.test";

fn message(subject: &str) -> Vec<u8> {
    format!(
        "From: Ana <ana@outside.test>\r\nTo: {MIRA}\r\nSubject: {subject}\r\n\
         Message-ID: <{}@outside.test>\r\nDate: Wed, 02 Dec 2026 10:00:00 +0000\r\n\r\nHello.\r\n",
        subject.replace(' ', "-")
    )
    .into_bytes()
}

/// A line-at-a-time IMAP session over TLS, trusting the harness's CA.
struct Imap {
    stream: BufReader<rustls::StreamOwned<rustls::ClientConnection, TcpStream>>,
    tag: u32,
}

impl Imap {
    fn connect(at: SocketAddr, ca_pem: &str) -> Self {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots
                .add(cert.expect("a PEM certificate"))
                .expect("trust the CA");
        }
        let config = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::aws_lc_rs::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("protocols")
        .with_root_certificates(roots)
        .with_no_client_auth();
        let name = ServerName::try_from("localhost").expect("a name");
        let connection =
            rustls::ClientConnection::new(Arc::new(config), name).expect("a TLS client");
        let socket = TcpStream::connect(at).expect("connect to IMAP");
        let mut imap = Self {
            stream: BufReader::new(rustls::StreamOwned::new(connection, socket)),
            tag: 0,
        };
        let greeting = imap.line();
        assert!(greeting.starts_with("* OK"), "{greeting}");
        imap
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stream.read_line(&mut line).expect("read a line");
        line
    }

    /// Sends `command` and returns every line up to its tagged answer.
    fn command(&mut self, command: &str) -> Vec<String> {
        self.tag += 1;
        let tag = format!("a{}", self.tag);
        self.stream
            .get_mut()
            .write_all(format!("{tag} {command}\r\n").as_bytes())
            .expect("send");
        let mut lines = Vec::new();
        loop {
            let line = self.line();
            assert!(!line.is_empty(), "the server closed: {lines:?}");
            let done = line.starts_with(&format!("{tag} "));
            lines.push(line);
            if done {
                return lines;
            }
        }
    }

    fn select(&mut self, mailbox: &str) -> (u32, u32) {
        let lines = self.command(&format!("SELECT {mailbox}"));
        assert!(
            lines.last().is_some_and(|l| l.contains(" OK ")),
            "{lines:?}"
        );
        let exists = lines
            .iter()
            .find_map(|l| {
                l.strip_prefix("* ")?
                    .strip_suffix(" EXISTS\r\n")?
                    .parse()
                    .ok()
            })
            .expect("EXISTS");
        let uidvalidity = lines
            .iter()
            .find_map(|l| {
                let rest = l.split("[UIDVALIDITY ").nth(1)?;
                rest.split(']').next()?.parse().ok()
            })
            .expect("UIDVALIDITY");
        (exists, uidvalidity)
    }
}

#[test]
fn s3_13_a_seeded_and_a_delivered_message_are_in_the_mailbox_imap_reads() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let mut dovecot =
        Dovecot::start(&[User::new(MIRA, "tide-table")]).unwrap_or_else(|e| panic!("{e}"));
    dovecot
        .seed(MIRA, "INBOX", &message("seeded"))
        .unwrap_or_else(|e| panic!("{e}"));
    // As an SMTP server hands it over.
    send(
        Protocol::Lmtp,
        dovecot.lmtp,
        "ana@outside.test",
        &[MIRA],
        &message("delivered"),
    )
    .unwrap_or_else(|e| panic!("{e}"));

    let mut imap = Imap::connect(dovecot.imaps, dovecot.ca_pem());
    let refused = imap.command(&format!("LOGIN {MIRA} wrong"));
    assert!(
        refused.last().is_some_and(|l| l.contains(" NO ")),
        "{refused:?}"
    );
    let login = imap.command(&format!("LOGIN {MIRA} tide-table"));
    assert!(
        login.last().is_some_and(|l| l.contains(" OK ")),
        "{login:?}"
    );
    let (exists, uidvalidity) = imap.select("INBOX");
    assert_eq!(exists, 2);
    let subjects = imap.command("FETCH 1:2 (BODY.PEEK[HEADER.FIELDS (SUBJECT)])");
    let subjects = subjects.concat();
    assert!(
        subjects.contains("Subject: seeded") && subjects.contains("Subject: delivered"),
        "{subjects}"
    );
    imap.command("LOGOUT");

    dovecot
        .set_uidvalidity(MIRA, "INBOX", uidvalidity + 7)
        .unwrap_or_else(|e| panic!("{e}"));
    dovecot.restart().unwrap_or_else(|e| panic!("{e}"));
    let mut imap = Imap::connect(dovecot.imaps, dovecot.ca_pem());
    imap.command(&format!("LOGIN {MIRA} tide-table"));
    assert_eq!(imap.select("INBOX"), (2, uidvalidity + 7));
}

#[test]
fn s3_13_a_filled_mailbox_holds_every_message_numbered_oldest_first() {
    if !nix::unistd::geteuid().is_root() {
        return;
    }
    let dovecot =
        Dovecot::start(&[User::new(MIRA, "tide-table")]).unwrap_or_else(|e| panic!("{e}"));
    dovecot
        .fill(MIRA, "INBOX", 300, |i| message(&format!("filled {i}")))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(dovecot.count(MIRA, "INBOX").expect("count"), 300);

    let mut imap = Imap::connect(dovecot.imaps, dovecot.ca_pem());
    imap.command(&format!("LOGIN {MIRA} tide-table"));
    assert_eq!(imap.select("INBOX").0, 300);
    let first = imap
        .command("UID FETCH 1 (INTERNALDATE BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        .concat();
    assert!(first.contains("Subject: filled 0\r\n"), "{first}");
    let last = imap
        .command("UID FETCH 300 (FLAGS BODY.PEEK[HEADER.FIELDS (SUBJECT)])")
        .concat();
    assert!(last.contains("Subject: filled 299\r\n"), "{last}");
    assert!(!last.contains("\\Seen"), "filled mail is unread: {last}");
    // Each message arrived a second after the one before it.
    let dates = imap.command("UID FETCH 299:300 (INTERNALDATE)").concat();
    let times: Vec<&str> = dates
        .split("INTERNALDATE \"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .collect();
    assert_eq!(times.len(), 2, "{dates}");
    assert_ne!(times[0], times[1], "{dates}");
    imap.command("LOGOUT");

    let refused = dovecot.fill(MIRA, "INBOX", 1, |i| message(&format!("again {i}")));
    assert!(
        refused
            .as_ref()
            .is_err_and(|e| e.to_string().contains("holds 300 messages")),
        "{refused:?}"
    );
}
