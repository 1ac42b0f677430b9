//! The real worker, started as an unprivileged user on a socket in a fresh
//! directory, and a client that collects a read's events.
#![allow(dead_code)]

pub mod deflate;
pub mod pdfs;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use collegium_proto::pdf::v1::pdf_reader_client::PdfReaderClient;
use collegium_proto::pdf::v1::pdf_text_event::Event;
use collegium_proto::pdf::v1::{PdfTextEvent, PdfTextRequest};
use tonic::transport::Channel;

/// The uid the worker runs as: `nobody` when the tests run as root (as CI
/// does), else the tests' own.
pub fn worker_uid() -> u32 {
    if nix::unistd::geteuid().is_root() {
        65534
    } else {
        nix::unistd::geteuid().as_raw()
    }
}

pub struct Worker {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub audit: PathBuf,
}

impl Worker {
    pub fn start(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777))
            .expect("chmod");
        let socket = dir.path().join("pdf.sock");
        let audit = dir.path().join("pdf.audit.jsonl");
        let me = nix::unistd::geteuid().as_raw().to_string();
        let mut command = Command::new(env!("CARGO_BIN_EXE_collegium-worker-pdf"));
        command
            .args(["serve", "--socket"])
            .arg(&socket)
            .arg("--audit")
            .arg(&audit)
            .args(["--allow-uid", &me, "--socket-mode", "666"])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let uid = worker_uid();
        if uid != nix::unistd::geteuid().as_raw() {
            command.uid(uid).gid(uid);
        }
        let mut child = command.spawn().expect("worker starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("ready line");
        assert_eq!(line.trim(), "ready", "the worker did not start");
        Self {
            child,
            dir,
            socket,
            audit,
        }
    }

    pub async fn client(&self) -> PdfReaderClient<Channel> {
        let channel = collegium_worker_kit::client::channel(&self.socket, Some(worker_uid()))
            .await
            .expect("connects");
        PdfReaderClient::new(channel)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(64 << 20)
    }

    /// The worker's own resident memory.
    pub fn rss(&self) -> u64 {
        collegium_worker_pdf::read::resident_bytes(self.child.id()).expect("worker's VmRSS")
    }

    /// The pids of the worker's children still running.
    pub fn children(&self) -> Vec<u32> {
        // A child is listed under the thread that started it, which may be
        // any of the runtime's.
        let pid = self.child.id();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return Vec::new();
        };
        tasks
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
            .flat_map(|listed| {
                listed
                    .split_whitespace()
                    .filter_map(|p| p.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn unix_ms_in(from_now: Duration) -> i64 {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("clock");
    i64::try_from((now + from_now).as_millis()).expect("ms")
}

pub fn request(pdf: Vec<u8>, deadline: Duration, ceiling: u64) -> PdfTextRequest {
    PdfTextRequest {
        pdf,
        deadline_unix_ms: unix_ms_in(deadline),
        text_ceiling_chars: ceiling,
        call_id: "call-1".into(),
    }
}

/// Every event of one read, in order.
pub async fn read_all(
    client: &mut PdfReaderClient<Channel>,
    request: PdfTextRequest,
) -> Vec<Event> {
    let mut stream = client.pdf_text(request).await.expect("read").into_inner();
    let mut events = Vec::new();
    while let Some(event) = stream.message().await.expect("event") {
        let PdfTextEvent { event } = event;
        events.push(event.expect("an event has a body"));
    }
    events
}

/// The pages' texts, and the last event.
pub fn split(events: Vec<Event>) -> (Vec<(u32, String)>, Event) {
    let mut events = events;
    let last = events.pop().expect("a last event");
    let pages = events
        .into_iter()
        .map(|e| match e {
            Event::Page(p) => (p.number, p.text),
            other => panic!("a page was expected, not {other:?}"),
        })
        .collect();
    (pages, last)
}
