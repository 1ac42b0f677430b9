//! Fetching messages from a selected INBOX: a summary (enough of the
//! message's start for its headers and a preview) or the whole message, each
//! bounded so no single message can exhaust the worker (issue 18: a 50 MB
//! attachment is described, never carried).

use chrono::{DateTime, FixedOffset};
use futures::TryStreamExt;

use crate::imap::{ImapSession, step};

/// How much of a message's start a summary reads.
pub const SUMMARY_BYTES: u32 = 64 * 1024;
/// The largest message read whole: a 50 MB attachment, base64-encoded, is
/// read and described (never carried on). One past it is described from its
/// headers alone, and the result says so.
pub const WHOLE_BYTES: u32 = 96 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Fetched {
    pub uid: u32,
    pub internal_date: Option<DateTime<FixedOffset>>,
    /// RFC822.SIZE.
    pub size: u32,
    /// The bytes fetched: the message's start, or all of it.
    pub bytes: Vec<u8>,
    /// Whether `bytes` is the whole message.
    pub whole: bool,
    pub seen: bool,
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FetchError(pub String);

/// Runs `UID FETCH set items` and collects each message.
async fn collect(
    session: &mut ImapSession,
    set: &str,
    items: &str,
    whole: bool,
) -> Result<Vec<Fetched>, FetchError> {
    let fetched: Vec<async_imap::types::Fetch> = step(async {
        let stream = session.uid_fetch(set, items).await?;
        stream.try_collect().await
    })
    .await
    .map_err(FetchError)?
    .map_err(|e: async_imap::error::Error| FetchError(format!("fetching {set}: {e}")))?;
    Ok(fetched
        .into_iter()
        .filter_map(|f| {
            let uid = f.uid?;
            let size = f.size.unwrap_or(0);
            let bytes = f
                .body()
                .or_else(|| f.header())
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            let seen = f
                .flags()
                .any(|flag| matches!(flag, async_imap::types::Flag::Seen));
            Some(Fetched {
                uid,
                internal_date: f.internal_date(),
                size,
                whole: whole && bytes.len() as u64 >= u64::from(size),
                bytes,
                seen,
            })
        })
        .collect())
}

/// Summaries of `uids`: the start of each message.
pub async fn summaries(
    session: &mut ImapSession,
    uids: &[u32],
) -> Result<Vec<Fetched>, FetchError> {
    if uids.is_empty() {
        return Ok(Vec::new());
    }
    let set = uid_set(uids);
    let items = format!("(UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[]<0.{SUMMARY_BYTES}>)");
    let mut fetched = collect(session, &set, &items, false).await?;
    for f in &mut fetched {
        f.whole = f.bytes.len() as u64 >= u64::from(f.size);
    }
    Ok(fetched)
}

/// The size and internal date of `uids`, nothing of their content.
pub async fn sizes(session: &mut ImapSession, uids: &[u32]) -> Result<Vec<Fetched>, FetchError> {
    if uids.is_empty() {
        return Ok(Vec::new());
    }
    collect(
        session,
        &uid_set(uids),
        "(UID FLAGS INTERNALDATE RFC822.SIZE)",
        false,
    )
    .await
}

/// One message whole where it is within [`WHOLE_BYTES`], else its headers
/// alone (`whole` false). `None` where no message has the UID.
pub async fn whole(session: &mut ImapSession, uid: u32) -> Result<Option<Fetched>, FetchError> {
    let Some(sized) = sizes(session, &[uid]).await?.into_iter().next() else {
        return Ok(None);
    };
    let items = if sized.size <= WHOLE_BYTES {
        "(UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[])"
    } else {
        "(UID FLAGS INTERNALDATE RFC822.SIZE BODY.PEEK[HEADER])"
    };
    let fetched = collect(session, &uid.to_string(), items, sized.size <= WHOLE_BYTES).await?;
    Ok(fetched.into_iter().find(|f| f.uid == uid))
}

/// The UIDs matching `criteria`, ascending.
pub async fn search(session: &mut ImapSession, criteria: &str) -> Result<Vec<u32>, FetchError> {
    let found = step(session.uid_search(criteria))
        .await
        .map_err(FetchError)?
        .map_err(|e| FetchError(format!("searching: {e}")))?;
    let mut uids: Vec<u32> = found.into_iter().collect();
    uids.sort_unstable();
    Ok(uids)
}

/// The UIDs of the messages at sequence numbers `from..=to`, ascending.
pub async fn uids_at(
    session: &mut ImapSession,
    from: u32,
    to: u32,
) -> Result<Vec<u32>, FetchError> {
    if from == 0 || from > to {
        return Ok(Vec::new());
    }
    let set = format!("{from}:{to}");
    let fetched: Vec<async_imap::types::Fetch> = step(async {
        let stream = session.fetch(&set, "(UID)").await?;
        stream.try_collect().await
    })
    .await
    .map_err(FetchError)?
    .map_err(|e: async_imap::error::Error| FetchError(format!("fetching {set}: {e}")))?;
    let mut uids: Vec<u32> = fetched.into_iter().filter_map(|f| f.uid).collect();
    uids.sort_unstable();
    Ok(uids)
}

/// `uids` as an IMAP set, runs joined (`1:4,9`).
pub fn uid_set(uids: &[u32]) -> String {
    let mut sorted = uids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut iter = sorted.into_iter().peekable();
    while let Some(start) = iter.next() {
        let mut end = start;
        while iter.peek() == Some(&(end + 1)) {
            end += 1;
            iter.next();
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}:{end}")
        });
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn s3_13_uid_sets_join_runs() {
        assert_eq!(super::uid_set(&[9, 1, 2, 3, 4, 11, 12]), "1:4,9,11:12");
        assert_eq!(super::uid_set(&[5]), "5");
    }
}
