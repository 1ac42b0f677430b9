//! Polling a big INBOX (issue 18, Performance: "polling a 50,000-message
//! mailbox with 10 new: bytes and time grow with the new mail, not the
//! mailbox"). A real Dovecot, its INBOX filled with 1,000, 10,000 and
//! 50,000 messages; the worker's own `Mailbox` service called in process
//! with a cursor 0, 10 and 100 messages behind the head, through a relay
//! counting the bytes each way; then a 10-new poll's steps timed one by one
//! through the worker's IMAP calls, to tell the worker's part from
//! Dovecot's. Recorded in `docs/benchmarks.md`.
//!
//! `cargo bench -p collegium-worker-mail --bench poll` (as root: Dovecot
//! drops to its own users)

use std::sync::Arc;
use std::time::{Duration, Instant};

use collegium_proto::mail::v1::mailbox_server::Mailbox as _;
use collegium_proto::mail::v1::{Cursor, PollRequest, PollResponse};
use collegium_worker_mail::mailbox::{MAX_PER_POLL, MailboxWorker};
use collegium_worker_mail::settings::{Mailbox, Mailboxes, Password, Server, Tls};
use collegium_worker_mail::tls::Trust;
use collegium_worker_mail::{fetch, imap};
use mail_servers::{Carried, Counted, Dovecot, User};

const AGENT: &str = "mira";
const ADDRESS: &str = "mira@mail.test";
const PASSWORD: &str = "tide-table-7731";

const SIZES: [u32; 3] = [1_000, 10_000, 50_000];
const NEW: [u32; 3] = [0, 10, 100];
const WARM_UP: usize = 3;
const RUNS: usize = 20;

/// Message `i` of a filled INBOX: an ordinary note of about 2 KB.
fn message(i: u32) -> Vec<u8> {
    let paragraph = "The figures for the week are in the shared folder; the \
                     second table is the one to look at before Thursday. \
                     Nothing in it needs an answer today.\r\n";
    format!(
        "From: Sender {sender} <sender{sender}@outside.test>\r\n\
         To: {ADDRESS}\r\n\
         Subject: Weekly report {i}\r\n\
         Message-ID: <report-{i}@outside.test>\r\n\
         Date: Mon, 1 Jun 2026 09:00:00 +0000\r\n\
         MIME-Version: 1.0\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\
         \r\n\
         Report {i}.\r\n\r\n{body}",
        sender = i % 50,
        body = paragraph.repeat(14),
    )
    .into_bytes()
}

fn server(port: u16) -> Server {
    Server {
        // The name the test CA's certificate is for.
        host: "localhost".into(),
        port,
        username: ADDRESS.into(),
        password: Password::new(PASSWORD.into()),
        tls: Tls::Implicit,
    }
}

fn trust(dovecot: &Dovecot) -> Trust {
    Trust::from_pems(vec![dovecot.ca_pem().as_bytes().to_vec()], "the test CA")
        .unwrap_or_else(|e| panic!("{e}"))
}

fn worker(dovecot: &Dovecot, relay: &Counted) -> MailboxWorker {
    let mut mailboxes = Mailboxes::new();
    mailboxes.insert(
        AGENT.into(),
        Mailbox {
            address: ADDRESS.into(),
            imap: server(relay.at.port()),
            // A poll never sends; the field is only filled.
            smtp: server(relay.at.port()),
            html_template: None,
        },
    );
    MailboxWorker::new(Arc::new(mailboxes), Arc::new(trust(dovecot)))
}

/// One poll: its answer, how long it took, and what crossed the wire,
/// the connection's last bytes included.
async fn poll(
    worker: &MailboxWorker,
    relay: &Counted,
    cursor: Option<Cursor>,
) -> (PollResponse, Duration, Carried) {
    relay.reset();
    let started = Instant::now();
    let answer = worker
        .poll(tonic::Request::new(PollRequest {
            agent: AGENT.into(),
            cursor,
            max: MAX_PER_POLL,
        }))
        .await
        .unwrap_or_else(|e| panic!("poll: {e}"))
        .into_inner();
    let took = started.elapsed();
    assert!(
        relay.settle(1, Duration::from_secs(10)),
        "the poll's connection did not end: {:?}",
        relay.carried()
    );
    (answer, took, relay.carried())
}

struct Row {
    messages: u32,
    new: u32,
    median: Duration,
    p90: Duration,
    to_server: u64,
    to_client: u64,
}

fn median<T: Ord + Copy>(values: &mut [T]) -> T {
    values.sort_unstable();
    values[values.len() / 2]
}

async fn measure(worker: &MailboxWorker, relay: &Counted, head: Cursor, new: u32) -> Row {
    // Each message arrived a second after the one before it (`fill`).
    let cursor = Cursor {
        uidvalidity: head.uidvalidity,
        last_uid: head.last_uid - new,
        last_internal_date: head.last_internal_date - i64::from(new),
    };
    let mut times = Vec::new();
    let mut to_server = Vec::new();
    let mut to_client = Vec::new();
    for run in 0..WARM_UP + RUNS {
        let (answer, took, carried) = poll(worker, relay, Some(cursor)).await;
        let uids: Vec<u32> = answer.arrivals.iter().map(|a| a.uid).collect();
        let expected: Vec<u32> = (cursor.last_uid + 1..=head.last_uid).collect();
        assert_eq!(uids, expected, "the poll read exactly the new mail");
        assert!(!answer.more && !answer.renumbered);
        if let Some(first) = answer.arrivals.first() {
            assert_eq!(
                first.subject,
                format!("Weekly report {}", cursor.last_uid),
                "UID n holds message n - 1"
            );
        }
        if run >= WARM_UP {
            times.push(took);
            to_server.push(carried.to_server);
            to_client.push(carried.to_client);
        }
    }
    times.sort_unstable();
    Row {
        messages: head.last_uid,
        new,
        median: times[times.len() / 2],
        p90: times[times.len() * 9 / 10],
        to_server: median(&mut to_server),
        to_client: median(&mut to_client),
    }
}

/// Where a poll of 10 new spends its time: the same steps as the worker's
/// poll, each timed, straight to Dovecot (no relay), to tell the worker's
/// part from the server's.
struct Steps {
    messages: u32,
    /// Connect, TLS, LOGIN, SELECT.
    open: Duration,
    search: Duration,
    first: Duration,
    /// Each message after the first, on average.
    each_further: Duration,
}

async fn steps(dovecot: &Dovecot, head: Cursor) -> Steps {
    let server = server(dovecot.imaps.port());
    let trust = trust(dovecot);
    let mut runs = Vec::new();
    for _ in 0..WARM_UP + RUNS {
        let started = Instant::now();
        let (mut session, _) = imap::open(&server, &trust)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let open = started.elapsed();
        let started = Instant::now();
        let uids = fetch::search(&mut session, &format!("UID {}:*", head.last_uid - 9))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let search = started.elapsed();
        assert_eq!(uids.len(), 10);
        let mut each = Vec::new();
        for uid in uids {
            let started = Instant::now();
            let read = fetch::whole(&mut session, uid)
                .await
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(read.is_some_and(|m| m.whole));
            each.push(started.elapsed());
        }
        imap::close(session).await;
        let further: Duration = each[1..].iter().sum();
        runs.push((open, search, each[0], further / 9));
    }
    let runs = &runs[WARM_UP..];
    let pick = |f: fn(&(Duration, Duration, Duration, Duration)) -> Duration| {
        let mut values: Vec<Duration> = runs.iter().map(f).collect();
        median(&mut values)
    };
    Steps {
        messages: head.last_uid,
        open: pick(|r| r.0),
        search: pick(|r| r.1),
        first: pick(|r| r.2),
        each_further: pick(|r| r.3),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    // `cargo test --all-targets` runs benches as tests once; this one is
    // a measurement, so it runs only under `cargo bench`.
    if std::env::args().any(|a| a == "--test") || !std::env::args().any(|a| a == "--bench") {
        println!("bench poll: skipped outside `cargo bench`");
        return;
    }
    assert!(
        nix::unistd::geteuid().is_root(),
        "bench poll starts a real Dovecot, which must be started as root"
    );
    let mut rows = Vec::new();
    let mut split = Vec::new();
    for size in SIZES {
        let dovecot =
            Dovecot::start(&[User::new(ADDRESS, PASSWORD)]).unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        dovecot
            .fill(ADDRESS, "INBOX", size, message)
            .unwrap_or_else(|e| panic!("{e}"));
        let filled = started.elapsed();
        let relay = Counted::start(dovecot.imaps).expect("a relay in front of IMAP");
        let worker = worker(&dovecot, &relay);
        let (first, took, _) = poll(&worker, &relay, None).await;
        let head = first.cursor.expect("the first poll answers the head");
        assert_eq!(head.last_uid, size, "every filled message is in the INBOX");
        println!(
            "{size} messages: filled in {:.1} s; the first poll (to the head, cold) took {}",
            filled.as_secs_f64(),
            ms(took)
        );
        for new in NEW {
            let row = measure(&worker, &relay, head, new).await;
            println!(
                "  {new} new: median {}, p90 {}, {} B to the server, {} B back",
                ms(row.median),
                ms(row.p90),
                row.to_server,
                row.to_client
            );
            rows.push(row);
        }
        split.push(steps(&dovecot, head).await);
    }
    println!(
        "\n| messages | new | median | p90 | bytes to the server | bytes back | bytes per new message |"
    );
    println!("|---|---|---|---|---|---|---|");
    let idle: Vec<(u32, u64)> = rows
        .iter()
        .filter(|r| r.new == 0)
        .map(|r| (r.messages, r.to_server + r.to_client))
        .collect();
    for row in &rows {
        let base = idle
            .iter()
            .find(|(m, _)| *m == row.messages)
            .map_or(0, |(_, b)| *b);
        let per_new = match row.new {
            0 => "—".to_string(),
            n => format!(
                "{}",
                (row.to_server + row.to_client).saturating_sub(base) / u64::from(n)
            ),
        };
        println!(
            "| {} | {} | {} | {} | {} | {} | {per_new} |",
            row.messages,
            row.new,
            ms(row.median),
            ms(row.p90),
            row.to_server,
            row.to_client
        );
    }
    println!(
        "\n10 new, step by step (medians): | messages | open: TLS, LOGIN, SELECT | UID SEARCH | first message | each further message |"
    );
    println!("|---|---|---|---|---|");
    for s in &split {
        let further = s.each_further.as_secs_f64() * 1000.0;
        println!(
            "| {} | {} | {} | {} | {further:.2} ms |",
            s.messages,
            ms(s.open),
            ms(s.search),
            ms(s.first),
        );
    }
}
