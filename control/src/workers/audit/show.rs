//! `collegium audit show FILE`: a worker's audit log for an administrator
//! (issue 21 item 7, ARCHITECTURE §4). The log is verified first, in the
//! same pass that reads the lines shown: a broken chain is said before
//! anything is shown, and then nothing is. Each call is one line, joined
//! with the store (opened read-only) for who approved it, when, where, and
//! a link to the prompt.

use std::io::Write;
use std::path::PathBuf;

use super::filter::{Filter, FilterError};
use super::join::{ApprovalLookup, ArgumentsLookup, Join};
use super::render::{self, Entry};
use super::site::{Site, SiteError};
use super::verify::{VerifyError, verify_each};
use crate::store::StoreError;
use collegium_worker_kit::audit::AuditError;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct Show {
    pub file: PathBuf,
    /// The daemon's store, with the worker whose anchors it holds.
    pub anchored: Option<(PathBuf, String)>,
    pub config: Option<PathBuf>,
    pub filter: Filter,
    pub json: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ShowError {
    /// The log is not what the worker wrote; nothing was shown.
    #[error("{0}\nNothing is shown from a log that does not verify.")]
    Verify(AuditError),
    #[error(transparent)]
    Site(#[from] SiteError),
    #[error(transparent)]
    Filter(#[from] FilterError),
    /// The store could not be read; the log may be fine.
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the output: {0}")]
    Write(#[from] std::io::Error),
}

/// Runs the command: the lines on `out`; the verification report, the
/// timezone and the closing count on `out` as well, or on `note` with
/// `--json`, so that a log shipper reads nothing but JSON lines.
pub fn show(request: &Show, out: &mut dyn Write, note: &mut dyn Write) -> Result<(), ShowError> {
    let site = match &request.config {
        Some(path) => Site::from_config(path)?,
        None => Site::default(),
    };
    let window = request.filter.window(site.timezone)?;
    let mut total = 0u64;
    let mut kept = Vec::new();
    let anchored = request
        .anchored
        .as_ref()
        .map(|(store, worker)| (store.as_path(), worker.as_str()));
    // Only the lines shown are held: a review of a long log is narrowed by
    // its filters, not by reading it twice.
    let report = verify_each(&request.file, anchored, |line| {
        total += 1;
        if window.keeps(&line) {
            kept.push(line);
        }
    })
    .map_err(|error| match error {
        VerifyError::Log(log) => ShowError::Verify(log),
        VerifyError::Store(store) => ShowError::Store(store),
    })?;
    let mut join = request
        .anchored
        .as_ref()
        .map(|(store, _)| Join::open(store))
        .transpose()?;
    let header: &mut dyn Write = if request.json { &mut *note } else { &mut *out };
    writeln!(header, "{report}")?;
    writeln!(header, "{}", site.times_are_in())?;
    let shown = kept.len();
    for line in kept {
        let (approval, arguments) = match join.as_mut() {
            Some(join) => (join.approval(&line)?, join.arguments(&line)?),
            None => (
                if line.record.decision.is_empty() {
                    ApprovalLookup::Ungated
                } else {
                    ApprovalLookup::StoreNotGiven
                },
                ArgumentsLookup::StoreNotGiven,
            ),
        };
        let entry = Entry {
            line,
            approval,
            arguments,
        };
        if request.json {
            writeln!(out, "{}", render::json(&entry, &site))?;
        } else {
            writeln!(out, "{}", render::text(&entry, &site))?;
        }
    }
    let filters = request.filter.describe();
    let closing: &mut dyn Write = if request.json { note } else { &mut *out };
    if filters.is_empty() {
        writeln!(closing, "{shown} of {total} lines shown.")?;
    } else {
        writeln!(closing, "{shown} of {total} lines shown ({filters}).")?;
    }
    Ok(())
}

/// The command as the binary runs it: stdout and stderr, and whether it
/// succeeded. A refusal goes where the lines would have gone (stdout), as
/// `audit verify` says its own; with `--json`, to stderr, so that stdout
/// stays JSON lines.
pub fn run(request: &Show) -> bool {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let mut out = stdout.lock();
    let mut note = stderr.lock();
    match show(request, &mut out, &mut note) {
        Ok(()) => true,
        Err(error) => {
            // Where even the refusal cannot be written (a closed pipe),
            // the exit status is what is left to say it.
            let _ = if request.json {
                writeln!(note, "{error}")
            } else {
                writeln!(out, "{error}")
            };
            false
        }
    }
}
