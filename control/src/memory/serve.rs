//! The six memory tools (§3.6), run against the store in one call so a
//! tool's checks and its write see the same rows. Every refusal is a result
//! the model reads (§7.2). A revision compares and swaps on the entry's
//! revision: an append or a replace that misses reads the entry again and
//! applies its change to the body as it now stands; a rewrite or a delete
//! that misses is refused, since the turn has not seen what changed.

use serde_json::Value;

use crate::store::{MemoryChange, MemoryEntry, MemoryOrigin, Millis, Store, StoreError};

use super::edit::{self, Passage};
use super::render::{self, Superseded};
use super::{Caps, refs};

/// Where and by whom a call is made.
pub struct Request<'a> {
    pub agent: &'a str,
    pub turn_id: &'a str,
    pub channel_id: &'a str,
    pub now: Millis,
    pub caps: Caps,
    pub timezone: chrono_tz::Tz,
    /// Whether the agent holds `memory::read`, so no refusal names a tool
    /// it cannot call (A4).
    pub reads: bool,
}

impl Request<'_> {
    fn origin(&self) -> MemoryOrigin<'_> {
        MemoryOrigin {
            turn_id: self.turn_id,
            channel_id: self.channel_id,
        }
    }
}

/// What a call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Served {
    /// The status post's subject for the call.
    pub summary: String,
    pub outcome: Result<Done, String>,
}

/// A call that did what it asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Done {
    pub text: String,
    /// The line later turns read in its place (§3.8).
    pub replay_line: Option<String>,
}

/// How often an append or a replace re-reads and re-applies before it
/// gives up; only another connection to the store can make it miss.
const ATTEMPTS: usize = 8;

/// Runs `memory::<tool>` with its checked arguments.
pub fn serve(
    store: &mut Store,
    request: &Request<'_>,
    tool: &str,
    arguments: &Value,
) -> Result<Served, StoreError> {
    let text = |key: &str| {
        arguments
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let description = arguments
        .get("description")
        .and_then(Value::as_str)
        .map(str::trim);
    let summary = match tool {
        "write" => format!("memory::write — {}", text("description").trim()),
        _ => format!("memory::{tool} {}", text("memory").trim()),
    };
    let outcome = match tool {
        "write" => write(store, request, text("description").trim(), text("body")),
        "read" => read(store, request, text("memory")),
        "append" => append(store, request, text("memory"), text("text"), description),
        "replace" => replace(
            store,
            request,
            text("memory"),
            &passages(arguments),
            description,
        ),
        "rewrite" => rewrite(store, request, text("memory"), text("body"), description),
        "delete" => delete(store, request, text("memory")),
        other => Ok(Err(format!(
            "memory::{other} is not a memory tool; the memory tools are read, write, append, replace, rewrite and delete."
        ))),
    }?;
    Ok(Served { summary, outcome })
}

fn passages(arguments: &Value) -> Vec<Passage> {
    arguments
        .get("passages")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|p| Passage {
                    find: p
                        .get("find")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    replace: p
                        .get("replace")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                })
                .collect()
        })
        .unwrap_or_default()
}

type Outcome = Result<Result<Done, String>, StoreError>;

/// A description's own refusal: over its cap, or more than one line (the
/// listing gives each one line).
fn check_description(description: &str, caps: &Caps) -> Option<String> {
    if description.is_empty() {
        return Some("Nothing was stored: the description is empty. Give one line saying when this memory is needed.".into());
    }
    if description.contains('\n') {
        return Some("Nothing was stored: the description runs over more than one line, and the listing gives each memory one line. Give it on one line.".into());
    }
    let chars = description.chars().count();
    (chars > caps.max_description_chars)
        .then(|| render::over_cap("description", chars, caps.max_description_chars))
}

fn write(store: &mut Store, request: &Request<'_>, description: &str, body: &str) -> Outcome {
    let caps = request.caps;
    if let Some(refusal) = check_description(description, &caps) {
        return Ok(Err(refusal));
    }
    let chars = body.chars().count();
    if chars > caps.max_body_chars {
        return Ok(Err(render::over_cap("body", chars, caps.max_body_chars)));
    }
    let written = store.write_memory(
        request.agent,
        description,
        body,
        request.origin(),
        request.now,
        caps.max_entries,
        new_key,
    )?;
    let count = store.memory_count(request.agent)?;
    Ok(Ok(Done {
        text: render::written(&written.entry, &written.evicted, count, &caps),
        replay_line: Some(render::written_line(&written.entry, &written.evicted)),
    }))
}

/// A fresh random key: sixteen hex characters.
fn new_key() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..16].to_string()
}

fn read(store: &mut Store, request: &Request<'_>, reference: &str) -> Outcome {
    let entry = match refs::resolve(store, request.agent, reference)? {
        Ok(entry) => entry,
        Err(refusal) => return Ok(Err(refusal)),
    };
    store.mark_memory_read(request.turn_id, entry.id, entry.revision, request.now)?;
    Ok(Ok(Done {
        text: render::body_view(&entry, request.now, request.timezone, &request.caps),
        replay_line: Some(format!(
            "[read memory {} — {}]",
            entry.reference(),
            entry.description
        )),
    }))
}

/// What one attempt at an append or a replace makes of the entry as it
/// stands: the change, or the refusal.
type Attempt<'a> = dyn Fn(&MemoryEntry, Option<i64>) -> Result<MemoryChange, String> + 'a;

/// Applies `attempt` to the entry as stored, comparing and swapping on its
/// revision and trying again on a miss (§3.6). The turn sees the new
/// revision only where it had seen the one it revised.
fn revise_as_stored(
    store: &mut Store,
    request: &Request<'_>,
    reference: &str,
    attempt: &Attempt<'_>,
) -> Result<Result<(MemoryEntry, MemoryEntry), String>, StoreError> {
    let mut entry = match refs::resolve(store, request.agent, reference)? {
        Ok(entry) => entry,
        Err(refusal) => return Ok(Err(refusal)),
    };
    for _ in 0..ATTEMPTS {
        let seen = store.memory_seen(request.turn_id, entry.id)?;
        let mut change = match attempt(&entry, seen) {
            Ok(change) => change,
            Err(refusal) => return Ok(Err(refusal)),
        };
        change.seen = seen == Some(entry.revision);
        if let Some(after) = store.revise_memory(
            request.agent,
            entry.id,
            entry.revision,
            &change,
            request.origin(),
            request.now,
        )? {
            return Ok(Ok((entry, after)));
        }
        entry = match store.memory(request.agent, entry.id)? {
            Some(now) => now,
            None => return Ok(Err(render::gone(reference.trim()))),
        };
    }
    Ok(Err(format!(
        "Nothing was changed: memory {} changed {ATTEMPTS} times while this call applied to it. Call again.",
        entry.reference()
    )))
}

/// The body a revision would leave, refused at the cap.
fn within_cap(entry: &MemoryEntry, body: &str, caps: &Caps) -> Result<(), String> {
    let chars = body.chars().count();
    if chars > caps.max_body_chars {
        return Err(render::revision_over_cap(entry, chars, caps));
    }
    Ok(())
}

fn new_description(description: Option<&str>, caps: &Caps) -> Result<Option<String>, String> {
    match description {
        None => Ok(None),
        Some(d) => match check_description(d, caps) {
            Some(refusal) => Err(refusal),
            None => Ok(Some(d.to_string())),
        },
    }
}

fn append(
    store: &mut Store,
    request: &Request<'_>,
    reference: &str,
    text: &str,
    description: Option<&str>,
) -> Outcome {
    let caps = request.caps;
    let attempt = |entry: &MemoryEntry, _seen: Option<i64>| {
        let description = new_description(description, &caps)?;
        let body = edit::append(&entry.body, text);
        within_cap(entry, &body, &caps)?;
        Ok(MemoryChange {
            description,
            body: Some(body),
            ..MemoryChange::default()
        })
    };
    Ok(
        revise_as_stored(store, request, reference, &attempt)?.map(|(before, after)| Done {
            text: render::revised(&after, &before, &Superseded::Appended(text), &caps),
            replay_line: Some(render::revised_line("memory::append", &after)),
        }),
    )
}

fn replace(
    store: &mut Store,
    request: &Request<'_>,
    reference: &str,
    passages: &[Passage],
    description: Option<&str>,
) -> Outcome {
    let caps = request.caps;
    if passages.is_empty() && description.is_none() {
        return Ok(Err(
            "Nothing was changed: give passages to replace, a new description, or both.".into(),
        ));
    }
    let attempt = |entry: &MemoryEntry, seen: Option<i64>| {
        let body = edit::replace(&entry.body, passages)
            .map_err(|faults| render::replace_refused(entry, seen, passages, &faults))?;
        let description = new_description(description, &caps)?;
        within_cap(entry, &body, &caps)?;
        Ok(MemoryChange {
            description,
            body: (!passages.is_empty()).then_some(body),
            ..MemoryChange::default()
        })
    };
    Ok(
        revise_as_stored(store, request, reference, &attempt)?.map(|(before, after)| Done {
            text: render::revised(&after, &before, &Superseded::Passages(passages), &caps),
            replay_line: Some(render::revised_line("memory::replace", &after)),
        }),
    )
}

/// The entry, if this turn has seen it as it stands; else the refusal
/// naming the read to make (§3.6).
fn seen_as_stored(
    store: &Store,
    request: &Request<'_>,
    reference: &str,
    action: &str,
) -> Result<Result<MemoryEntry, String>, StoreError> {
    let entry = match refs::resolve(store, request.agent, reference)? {
        Ok(entry) => entry,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let seen = store.memory_seen(request.turn_id, entry.id)?;
    if seen != Some(entry.revision) {
        return Ok(Err(render::unseen_refusal(
            action,
            &entry,
            seen,
            request.reads,
        )));
    }
    Ok(Ok(entry))
}

fn rewrite(
    store: &mut Store,
    request: &Request<'_>,
    reference: &str,
    body: &str,
    description: Option<&str>,
) -> Outcome {
    let caps = request.caps;
    let entry = match seen_as_stored(store, request, reference, "rewrite")? {
        Ok(entry) => entry,
        Err(refusal) => return Ok(Err(refusal)),
    };
    let description = match new_description(description, &caps) {
        Ok(description) => description,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if let Err(refusal) = within_cap(&entry, body, &caps) {
        return Ok(Err(refusal));
    }
    let change = MemoryChange {
        description,
        body: Some(body.to_string()),
        seen: true,
        whole: true,
    };
    let revised = store.revise_memory(
        request.agent,
        entry.id,
        entry.revision,
        &change,
        request.origin(),
        request.now,
    )?;
    Ok(match revised {
        Some(after) => Ok(Done {
            text: render::revised(&after, &entry, &Superseded::WholeBody(&entry.body), &caps),
            replay_line: Some(render::revised_line("memory::rewrite", &after)),
        }),
        None => Err(moved_on(store, request, &entry, "rewrite")?),
    })
}

/// A rewrite or delete whose compare and swap missed: the entry changed
/// between the check and the write.
fn moved_on(
    store: &Store,
    request: &Request<'_>,
    entry: &MemoryEntry,
    action: &str,
) -> Result<String, StoreError> {
    Ok(match store.memory(request.agent, entry.id)? {
        Some(now) => render::unseen_refusal(action, &now, Some(entry.revision), request.reads),
        None => render::gone(&entry.reference()),
    })
}

fn delete(store: &mut Store, request: &Request<'_>, reference: &str) -> Outcome {
    let entry = match seen_as_stored(store, request, reference, "delete")? {
        Ok(entry) => entry,
        Err(refusal) => return Ok(Err(refusal)),
    };
    if !store.delete_memory(request.agent, entry.id, entry.revision)? {
        return Ok(Err(moved_on(store, request, &entry, "delete")?));
    }
    Ok(Ok(Done {
        text: render::deleted(&entry),
        replay_line: Some(format!(
            "[deleted memory {} — {}]",
            entry.reference(),
            entry.description
        )),
    }))
}
