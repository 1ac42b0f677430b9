//! The two revisions that send only a change (§3.6): an append adds to the
//! body as stored; a replace substitutes passages of it, all or none, each
//! passage found exactly once. Pure text, so a compare-and-swap miss simply
//! applies the same change again to the body as it now is.

/// One substitution a `memory::replace` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Passage {
    pub find: String,
    pub replace: String,
}

/// Why one passage could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// Found this many times (0, or more than once).
    Found { index: usize, times: usize },
    /// It overlaps an earlier passage of the same call.
    Overlaps { index: usize, earlier: usize },
}

/// The body with `text` added on a line of its own.
pub fn append(body: &str, text: &str) -> String {
    if body.is_empty() {
        text.to_string()
    } else if body.ends_with('\n') {
        format!("{body}{text}")
    } else {
        format!("{body}\n{text}")
    }
}

/// Where `find` starts in `body`, overlapping matches counted: "aa" is in
/// "aaa" twice, so it does not name one place.
fn occurrences(body: &str, find: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(at) = body.get(from..).and_then(|rest| rest.find(find)) {
        let start = from + at;
        out.push(start);
        let step = body[start..].chars().next().map_or(1, char::len_utf8);
        from = start + step;
    }
    out
}

/// Every passage applied to `body`, or every fault and nothing applied.
pub fn replace(body: &str, passages: &[Passage]) -> Result<String, Vec<Fault>> {
    let mut faults = Vec::new();
    let mut spans: Vec<(usize, usize, usize)> = Vec::new();
    for (index, passage) in passages.iter().enumerate() {
        let found = occurrences(body, &passage.find);
        if found.len() != 1 {
            faults.push(Fault::Found {
                index,
                times: found.len(),
            });
            continue;
        }
        let (start, end) = (found[0], found[0] + passage.find.len());
        if let Some(&(_, _, earlier)) = spans.iter().find(|(s, e, _)| start < *e && *s < end) {
            faults.push(Fault::Overlaps { index, earlier });
            continue;
        }
        spans.push((start, end, index));
    }
    if !faults.is_empty() {
        return Err(faults);
    }
    spans.sort_unstable();
    let mut out = String::with_capacity(body.len());
    let mut at = 0;
    for (start, end, index) in spans {
        out.push_str(&body[at..start]);
        out.push_str(&passages[index].replace);
        at = end;
    }
    out.push_str(&body[at..]);
    Ok(out)
}
