//! The worker's audit log (ARCHITECTURE §4): one JSON line per call, each
//! carrying the SHA-256 of the line before it, so an edited, removed or
//! reordered line breaks the chain. A chain alone cannot show that lines were
//! cut off the end; the daemon stores each call's sequence number and the
//! head hash (an anchor outside the file), and `verify` with that anchor
//! catches a truncated tail too.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `prev` of the first line: there is nothing before it.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// A position in the chain: a line's sequence number and its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Anchor {
    pub seq: u64,
    pub hash: String,
}

/// How a call ended, as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Success,
    Refusal,
    InvalidArguments,
    Unresolved,
    Failure,
    /// The dispatch grant was refused: the call never ran.
    GrantRefused,
    /// Admitted, and ended without a result: it may have acted.
    Abandoned,
}

/// What a worker records of one call; the log adds the time, the sequence
/// number and the chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub agent: String,
    pub turn: String,
    pub call: String,
    /// `namespace::tool`.
    pub tool: String,
    /// Hex SHA-256 of the exact argument bytes.
    pub arguments_sha256: String,
    /// The approving decision; empty for a tool that does not gate.
    pub decision: String,
    pub outcome: Outcome,
    /// Why, for a refused grant or a failure; empty otherwise.
    pub detail: String,
    pub duration_ms: u64,
}

/// One line as written: the record between the log's own fields. Field
/// order is the serialisation order, so the bytes (and with them the hash)
/// are the same wherever a line is rebuilt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    pub seq: u64,
    pub time: String,
    pub worker: String,
    #[serde(flatten)]
    pub record: Record,
    pub prev: String,
}

#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path}: the log takes no more lines: {reason}; the worker must be restarted once the cause is fixed"
    )]
    Broken { path: PathBuf, reason: String },
    /// The first line that is not what an untouched log holds.
    #[error("{path}: line {line}: {reason}")]
    Bad {
        path: PathBuf,
        line: u64,
        reason: String,
    },
}

/// Hex SHA-256 of a line's bytes, without its newline.
pub fn line_hash(line: &[u8]) -> String {
    hex::encode(Sha256::digest(line))
}

/// Hex SHA-256 of argument bytes, as grants and the log carry it.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// An open log, appended to by one worker.
pub struct AuditLog {
    path: PathBuf,
    worker: String,
    file: File,
    head: Anchor,
    /// The file's length after the last whole line: a failed append is cut
    /// back to it.
    len: u64,
    /// Why the log stopped taking lines: after a failed append the file's
    /// state is not known, and no later line may chain onto it.
    broken: Option<String>,
}

impl AuditLog {
    /// Opens (or creates, mode 0600) the log of `worker`, checking the chain
    /// already in it: a worker never extends a log that was tampered with.
    pub fn open(path: &Path, worker: &str) -> Result<Self, AuditError> {
        use std::os::unix::fs::OpenOptionsExt;
        let io = |source| AuditError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .read(true)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        let verified = verify(path, None)?;
        if let Some(other) = verified.worker.as_deref().filter(|w| *w != worker) {
            return Err(AuditError::Bad {
                path: path.to_path_buf(),
                line: 1,
                reason: format!("written by worker '{other}', not '{worker}'"),
            });
        }
        let head = verified.head.unwrap_or_else(|| Anchor {
            seq: 0,
            hash: GENESIS.to_string(),
        });
        let len = file.metadata().map_err(io)?.len();
        Ok(Self {
            path: path.to_path_buf(),
            worker: worker.to_string(),
            file,
            head,
            len,
            broken: None,
        })
    }

    /// The last line written.
    pub fn head(&self) -> &Anchor {
        &self.head
    }

    /// Appends one call, flushed to disk before it returns, and emits the
    /// same line through `tracing` (the journal under systemd).
    pub fn append(&mut self, record: Record) -> Result<Anchor, AuditError> {
        if let Some(reason) = &self.broken {
            return Err(AuditError::Broken {
                path: self.path.clone(),
                reason: reason.clone(),
            });
        }
        let line = Line {
            seq: self.head.seq + 1,
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            worker: self.worker.clone(),
            record,
            prev: self.head.hash.clone(),
        };
        // A struct of strings and integers always serialises.
        let text = serde_json::to_string(&line).map_err(|e| AuditError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        let io = |source| AuditError::Io {
            path: self.path.clone(),
            source,
        };
        // One write of the whole line: an O_APPEND write is never interleaved.
        let bytes = format!("{text}\n");
        let written = self
            .file
            .write_all(bytes.as_bytes())
            .and_then(|()| self.file.sync_data());
        if let Err(error) = written {
            // Cut back whatever part of the line reached the file, and take
            // no more lines: the next one would chain onto a state unknown.
            let cut = self
                .file
                .set_len(self.len)
                .and_then(|()| self.file.sync_data());
            self.broken = Some(match cut {
                Ok(()) => format!("appending line {} failed: {error}", line.seq),
                Err(cut) => format!(
                    "appending line {} failed ({error}), and cutting it back failed too ({cut})",
                    line.seq
                ),
            });
            return Err(io(error));
        }
        self.len += bytes.len() as u64;
        tracing::info!(target: "audit", worker = %self.worker, seq = line.seq, "{text}");
        self.head = Anchor {
            seq: line.seq,
            hash: line_hash(text.as_bytes()),
        };
        Ok(self.head.clone())
    }
}

/// What a verified log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub lines: u64,
    /// The worker that wrote it; none for an empty log.
    pub worker: Option<String>,
    /// The last line; none for an empty log.
    pub head: Option<Anchor>,
}

/// Walks the whole chain; with an `anchor` from the daemon's store, also
/// checks that the log still reaches it and that the anchored line is the
/// one the daemon saw. Names the first bad line.
pub fn verify(path: &Path, anchor: Option<&Anchor>) -> Result<Verified, AuditError> {
    verify_each(path, anchor, |_| {})
}

/// `verify`, handing each line to `each` as it is read: a reader that shows
/// the lines (`collegium audit show`) reads the file once, so what it shows
/// is exactly what was verified. Nothing handed over may be shown before
/// this returns `Ok`: a later line can still break the chain.
pub fn verify_each(
    path: &Path,
    anchor: Option<&Anchor>,
    mut each: impl FnMut(Line),
) -> Result<Verified, AuditError> {
    let bad = |line: u64, reason: String| AuditError::Bad {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let file = File::open(path).map_err(|source| AuditError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = BufReader::new(file);
    let mut verified = Verified {
        lines: 0,
        worker: None,
        head: None,
    };
    let mut prev_hash = GENESIS.to_string();
    let mut raw = Vec::new();
    let mut anchored: Option<String> = None;
    loop {
        raw.clear();
        let read = reader
            .read_until(b'\n', &mut raw)
            .map_err(|source| AuditError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        if read == 0 {
            break;
        }
        let number = verified.lines + 1;
        let Some(text) = raw.strip_suffix(b"\n") else {
            return Err(bad(
                number,
                "the line is cut off (no newline ends it): the file was truncated mid-line".into(),
            ));
        };
        let line: Line = serde_json::from_slice(text)
            .map_err(|e| bad(number, format!("not an audit line: {e}")))?;
        if line.seq != number {
            return Err(bad(
                number,
                format!(
                    "it carries sequence number {}, where line {number} belongs: lines were removed, reordered or inserted",
                    line.seq
                ),
            ));
        }
        if line.prev != prev_hash {
            return Err(bad(
                number - 1,
                format!(
                    "its content does not hash to what line {number} records of it: line {} was edited (or line {number}'s record of it)",
                    number - 1
                ),
            ));
        }
        match &verified.worker {
            None => verified.worker = Some(line.worker.clone()),
            Some(worker) if *worker != line.worker => {
                return Err(bad(
                    number,
                    format!(
                        "written by worker '{}' in a log of worker '{worker}'",
                        line.worker
                    ),
                ));
            }
            Some(_) => {}
        }
        prev_hash = line_hash(text);
        if anchor.is_some_and(|a| a.seq == number) {
            anchored = Some(prev_hash.clone());
        }
        verified.lines = number;
        each(line);
    }
    if verified.lines > 0 {
        verified.head = Some(Anchor {
            seq: verified.lines,
            hash: prev_hash,
        });
    }
    if let Some(anchor) = anchor {
        match anchored {
            None => {
                return Err(bad(
                    verified.lines + 1,
                    format!(
                        "missing: the log ends after line {}, but the store recorded line {}: lines were cut off the end",
                        verified.lines, anchor.seq
                    ),
                ));
            }
            Some(hash) if hash != anchor.hash => {
                return Err(bad(
                    anchor.seq,
                    "its content does not hash to what the store recorded of it: the line was edited"
                        .into(),
                ));
            }
            Some(_) => {}
        }
    }
    Ok(verified)
}
