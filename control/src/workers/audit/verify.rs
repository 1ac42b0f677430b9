//! `collegium audit verify FILE [--store STORE]`: a worker's audit log
//! checked line by line against its own chain and, with the store, against
//! the anchors the daemon recorded call by call (ARCHITECTURE §4).

use std::path::Path;

use collegium_worker_kit::audit::{self, Anchor, AuditError, Line};

use crate::store::StoreError;
use crate::store::worker_calls::latest_audit_anchor;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Log(#[from] AuditError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was proven, in words for the operator. With the store, the worker
/// is named by the operator, never taken from the file: a log rewritten
/// under another name, or emptied, must not escape its anchor.
pub fn verify(file: &Path, anchored: Option<(&Path, &str)>) -> Result<String, VerifyError> {
    verify_each(file, anchored, |_| {})
}

/// `verify`, handing each line to `each` as the one pass over the file reads
/// it (`audit show`): what is shown is what was verified, never a second
/// reading of a file a live worker may have grown since. The store's anchor
/// is read before the file, so a line appended in between is only ever past
/// the anchor, which the chain covers.
pub fn verify_each(
    file: &Path,
    anchored: Option<(&Path, &str)>,
    each: impl FnMut(Line),
) -> Result<String, VerifyError> {
    let Some((store, worker)) = anchored else {
        let chained = audit::verify_each(file, None, each)?;
        let Some(worker) = chained.worker else {
            return Ok(format!("{}: empty; nothing to verify", file.display()));
        };
        return Ok(format!(
            "{}: {} lines from worker '{worker}', each chained to the one before.\n\
             Without --store, lines cut off the end or an edit to the last line cannot be detected.",
            file.display(),
            chained.lines
        ));
    };
    let anchor = latest_audit_anchor(store, worker)?.map(|a| Anchor {
        seq: a.seq,
        hash: a.hash,
    });
    let verified = audit::verify_each(file, anchor.as_ref(), each)?;
    if let Some(other) = verified.worker.as_deref().filter(|w| *w != worker) {
        return Err(AuditError::Bad {
            path: file.to_path_buf(),
            line: 1,
            reason: format!("written by worker '{other}', not '{worker}'"),
        }
        .into());
    }
    let intro = format!(
        "{}: {} lines from worker '{worker}', each chained to the one before",
        file.display(),
        verified.lines
    );
    Ok(match anchor {
        Some(anchor) => format!(
            "{intro}; line {} is the one {} recorded last.",
            anchor.seq,
            store.display()
        ),
        None => format!(
            "{intro}.\n{} records no call that ran on '{worker}' (refused grants are logged, not anchored); only the chain was checked.",
            store.display()
        ),
    })
}
