//! The split itself: find the first boundary, make everything above it a part, strip one
//! level of `>` from what follows if the boundary quotes, and go on with the rest (§3.13).
//! Iterative, so a deeply nested thread cannot exhaust the stack.

use crate::lines::{Line, fenced, quoted_to_end, strip_quote};
use crate::{Boundary, Quoted, Thread, attribution, header_block, markers};

/// Past this many quoted messages the rest stays in the last one as written: a thread that
/// deep is a crafted body, and each level costs a copy of what remains.
const MOST_QUOTED: usize = 100;

/// A boundary found at `start`; its own lines run to `end`.
#[derive(Debug)]
struct Found {
    start: usize,
    end: usize,
    boundary: Boundary,
    sender: Option<String>,
    date: Option<String>,
    subject: Option<String>,
}

pub(crate) fn split(lines: Vec<Line>) -> Thread {
    let mut thread = Thread::default();
    let mut current = lines;
    // The boundary above `current`, and its lines; none for the newest part.
    let mut above: Option<(Found, String)> = None;
    loop {
        let quoted_so_far = thread.quoted.len() + usize::from(above.is_some());
        let found = if quoted_so_far < MOST_QUOTED {
            find(&current)
        } else {
            None
        };
        let part_end = found.as_ref().map_or(current.len(), |f| f.start);
        let body = join(&current[..part_end]);
        match above.take() {
            None => thread.newest = body,
            Some((f, boundary_text)) => thread.quoted.push(Quoted {
                sender: f.sender,
                date: f.date,
                subject: f.subject,
                body,
                boundary: f.boundary,
                boundary_text,
            }),
        }
        let Some(mut found) = found else {
            return thread;
        };
        let mut boundary_text = join(&current[found.start..found.end]);
        let below = &current[found.end..];
        let mut rest: Vec<Line> = if found.boundary.quotes() && quoted_to_end(below)[0] {
            below
                .iter()
                .map(|l| Line {
                    text: strip_quote(&l.text).to_string(),
                    marker: l.marker,
                })
                .collect()
        } else {
            below.to_vec()
        };
        absorb_header_block(&mut found, &mut boundary_text, &mut rest);
        above = Some((found, boundary_text));
        current = rest;
    }
}

/// A boundary that named no sender, followed by a header block (Apple Mail's forward quotes
/// its header lines; Outlook on the web puts them in the marked `div`): the block is the
/// boundary's too, and names the message.
fn absorb_header_block(found: &mut Found, boundary_text: &mut String, rest: &mut Vec<Line>) {
    if found.sender.is_some() {
        return;
    }
    let start = first_non_blank(rest, 0);
    let Some(block) = header_block::read(rest, start) else {
        return;
    };
    if !block.is_forward_shaped() {
        return;
    }
    found.sender = block.from;
    found.date = found.date.take().or(block.date);
    found.subject = found.subject.take().or(block.subject);
    let taken: Vec<Line> = rest.drain(..block.end).collect();
    if !boundary_text.is_empty() {
        boundary_text.push('\n');
    }
    boundary_text.push_str(&join(&taken));
}

fn join(lines: &[Line]) -> String {
    let mut out = String::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        out.push_str(&line.text);
    }
    out
}

fn first_non_blank(lines: &[Line], from: usize) -> usize {
    (from..lines.len())
        .find(|&i| !lines[i].is_blank())
        .unwrap_or(lines.len())
}

fn is_open_marker(line: &Line) -> Option<Boundary> {
    line.marker.filter(|_| !line.is_quoted())
}

/// The first boundary in the lines, outside code blocks.
fn find(lines: &[Line]) -> Option<Found> {
    let fenced = fenced(lines);
    let quoted_end = quoted_to_end(lines);
    (0..lines.len())
        .filter(|&i| !fenced[i])
        .find_map(|i| boundary_at(lines, i, &quoted_end))
}

fn boundary_at(lines: &[Line], i: usize, quoted_end: &[bool]) -> Option<Found> {
    let line = &lines[i];
    // A boundary that is a sentence's continuation is prose, not a boundary: the rules that
    // read ordinary words want a paragraph to start there.
    let opens_paragraph =
        i == 0 || lines[i - 1].is_blank() || is_open_marker(&lines[i - 1]).is_some();
    if let Some(boundary) = is_open_marker(line) {
        return Some(after_html_marker(lines, i, boundary, quoted_end));
    }
    if opens_paragraph
        && attribution::opens(&line.text)
        && let Some(found) = attribution_at(lines, i, quoted_end)
    {
        return Some(found);
    }
    if let Some(boundary) = markers::marker(&line.text)
        && (boundary != Boundary::AppleMail || opens_paragraph)
    {
        return Some(after_text_marker(lines, i, boundary));
    }
    if opens_paragraph {
        let block_start = if markers::is_separator(&line.text) {
            i + 1
        } else {
            i
        };
        if let Some(block) = header_block::read(lines, block_start)
            && block.is_outlook_shaped()
        {
            return Some(Found {
                start: i,
                end: block.end,
                boundary: Boundary::OutlookHeaderBlock,
                sender: block.from,
                date: block.date,
                subject: block.subject,
            });
        }
    }
    if line.is_quoted() && quoted_end[i] {
        return Some(Found {
            start: i,
            end: i,
            boundary: Boundary::AngleQuoted,
            sender: None,
            date: None,
            subject: None,
        });
    }
    None
}

/// "On … wrote:" on one line or two, followed by a `>` quote to the end (or the HTML quote
/// it introduces). Without the quote below, it is a sentence.
fn attribution_at(lines: &[Line], i: usize, quoted_end: &[bool]) -> Option<Found> {
    let one = &lines[i].text;
    let (read, after) = match attribution::parse(one) {
        Some(read) => (read, i + 1),
        None => {
            let next = lines
                .get(i + 1)
                .filter(|l| !l.is_blank() && !l.is_quoted() && l.marker.is_none())?;
            let joined = format!("{} {}", one.trim_end(), next.text.trim());
            (attribution::parse(&joined)?, i + 2)
        }
    };
    let j = first_non_blank(lines, after);
    let mut found = Found {
        start: i,
        end: after,
        boundary: read.boundary,
        sender: Some(read.sender),
        date: Some(read.date),
        subject: None,
    };
    if let Some(boundary) = lines.get(j).and_then(is_open_marker) {
        // Thunderbird's and Apple Mail's HTML: the attribution sits above the cited
        // blockquote; the marker names the rule, the attribution the sender.
        found.boundary = boundary;
        found.end = j + 1;
        return Some(found);
    }
    quoted_end.get(j).copied().unwrap_or(false).then_some(found)
}

/// A one-line marker ("-----Original Message-----", a forward's) and the header lines that
/// follow it, if any.
fn after_text_marker(lines: &[Line], i: usize, boundary: Boundary) -> Found {
    let mut found = Found {
        start: i,
        end: i + 1,
        boundary,
        sender: None,
        date: None,
        subject: None,
    };
    let j = first_non_blank(lines, i + 1);
    if let Some(html) = lines.get(j).and_then(is_open_marker) {
        // Apple Mail's HTML forward: "Begin forwarded message:" above a cited blockquote
        // that opens with the header lines (taken after the quote is stripped).
        found.boundary = html;
        found.end = j + 1;
        return found;
    }
    if let Some(block) = header_block::read(lines, j).filter(|b| b.is_forward_shaped()) {
        found.end = block.end;
        found.sender = block.from;
        found.date = block.date;
        found.subject = block.subject;
    }
    found
}

/// Where an HTML quote element began: what the element opens with — Gmail's attribution or
/// forward line, Outlook's header lines — belongs to the boundary.
fn after_html_marker(lines: &[Line], i: usize, boundary: Boundary, quoted_end: &[bool]) -> Found {
    let j = first_non_blank(lines, i + 1);
    if j < lines.len()
        && attribution::opens(&lines[j].text)
        && let Some(mut found) = attribution_at(lines, j, quoted_end)
    {
        found.start = i;
        found.boundary = boundary;
        return found;
    }
    if let Some(found) = cited_attribution(lines, i, boundary) {
        return found;
    }
    if let Some(marker) = lines.get(j).and_then(|l| markers::marker(&l.text)) {
        let mut found = after_text_marker(lines, j, marker);
        found.start = i;
        found.boundary = boundary;
        return found;
    }
    Found {
        start: i,
        end: i + 1,
        boundary,
        sender: None,
        date: None,
        subject: None,
    }
}

/// Apple Mail on iOS cites the attribution in a blockquote of its own, directly above the
/// cited message's: the two markers and the attribution between them are one boundary.
fn cited_attribution(lines: &[Line], i: usize, boundary: Boundary) -> Option<Found> {
    let j = first_with_text(lines, i + 1);
    let line = lines.get(j).filter(|l| l.marker.is_none())?;
    let read = attribution::parse(strip_quote(&line.text))?;
    let k = first_with_text(lines, j + 1);
    is_open_marker(lines.get(k)?)?;
    Some(Found {
        start: i,
        end: k + 1,
        boundary,
        sender: Some(read.sender),
        date: Some(read.date),
        subject: None,
    })
}

/// The first line from `from` holding text once one level of `>` is off, or a marker.
fn first_with_text(lines: &[Line], from: usize) -> usize {
    (from..lines.len())
        .find(|&i| lines[i].marker.is_some() || !strip_quote(&lines[i].text).trim().is_empty())
        .unwrap_or(lines.len())
}
