//! A notify socket the test binds, as systemd binds one for a
//! `Type=notify` unit: every datagram the daemon or a worker sends to it
//! (`READY=1`, `STATUS=`, `WATCHDOG=1`, `STOPPING=1`), with when it arrived.

use std::os::unix::net::UnixDatagram;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::people::now_ms;

/// One notification as the daemon sent it, with when it arrived.
pub struct Said {
    pub at_ms: i64,
    /// The same moment, for measuring against an `Instant`.
    pub at: Instant,
    pub lines: Vec<String>,
}

impl Said {
    pub fn has(&self, line: &str) -> bool {
        self.lines.iter().any(|l| l == line)
    }
}

/// Binds `path` as the notify socket; every datagram, as it arrives.
pub fn listen(path: &std::path::Path) -> Receiver<Said> {
    let socket = UnixDatagram::bind(path).expect("bind the notify socket");
    let (send, said) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 4096];
        while let Ok(n) = socket.recv(&mut buffer) {
            let text = String::from_utf8_lossy(&buffer[..n]).into_owned();
            let lines = text
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            let said = Said {
                at_ms: now_ms(),
                at: Instant::now(),
                lines,
            };
            if send.send(said).is_err() {
                break;
            }
        }
    });
    said
}

/// Everything said within `window`.
pub fn during(said: &Receiver<Said>, window: Duration) -> Vec<Said> {
    let until = Instant::now() + window;
    let mut got = Vec::new();
    while let Some(left) = until.checked_duration_since(Instant::now()) {
        match said.recv_timeout(left) {
            Ok(one) => got.push(one),
            Err(RecvTimeoutError::Timeout) => break,
            Err(RecvTimeoutError::Disconnected) => panic!("the notify socket closed"),
        }
    }
    got
}

/// Everything said up to and including the first datagram holding `line`.
pub fn until(said: &Receiver<Said>, line: &str, within: Duration) -> Vec<Said> {
    let deadline = Instant::now() + within;
    let mut got = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        let Ok(one) = said.recv_timeout(left) else {
            break;
        };
        let found = one.has(line);
        got.push(one);
        if found {
            return got;
        }
    }
    let seen: Vec<_> = got.iter().flat_map(|s| s.lines.clone()).collect();
    panic!("no {line:?} within {within:?}; saw {seen:#?}");
}

/// How many watchdog pings `said` holds.
pub fn pings(said: &[Said]) -> usize {
    said.iter().filter(|s| s.has("WATCHDOG=1")).count()
}
