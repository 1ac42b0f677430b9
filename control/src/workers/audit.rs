//! `collegium audit verify FILE [--store STORE]`: a worker's audit log
//! checked line by line against its own chain and, with the store, against
//! the anchors the daemon recorded call by call (ARCHITECTURE §4).

use std::path::Path;

use collegium_worker_kit::audit::{self, Anchor, AuditError};

use crate::store::StoreError;
use crate::store::worker_calls::latest_audit_anchor;

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Log(#[from] AuditError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What was proven, in words for the operator.
pub fn verify(file: &Path, store: Option<&Path>) -> Result<String, VerifyError> {
    let chained = audit::verify(file, None)?;
    let Some(worker) = chained.worker.clone() else {
        return Ok(format!("{}: empty; nothing to verify", file.display()));
    };
    let intro = format!(
        "{}: {} lines from worker '{worker}', each chained to the one before",
        file.display(),
        chained.lines
    );
    let Some(store) = store else {
        return Ok(format!(
            "{intro}.\nWithout --store, lines cut off the end or an edit to the last line cannot be detected."
        ));
    };
    let Some(anchor) = latest_audit_anchor(store, &worker)? else {
        return Ok(format!(
            "{intro}.\n{} holds no anchor for '{worker}' (it records calls that ran, not refused grants); only the chain was checked.",
            store.display()
        ));
    };
    audit::verify(
        file,
        Some(&Anchor {
            seq: anchor.seq,
            hash: anchor.hash,
        }),
    )?;
    Ok(format!(
        "{intro}; line {} is the one {} recorded last.",
        anchor.seq,
        store.display()
    ))
}
