//! How a hit and a read post are shown (§3.8): its id, its channel, its
//! author as the window names them, its time, then its text delimited rather
//! than requoted, as a pinned post is; and what was left out, stated.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::context::window::{author_line, local_time, strip_mentions_of_agents};
use crate::store::{ChannelKind, ObservedChannel, ObservedPost};

use super::matching::Excerpt;

/// How a source channel is named, so the model sees when it quotes from
/// elsewhere (§3.8).
pub fn channel_label(channel: &ObservedChannel, here: &str) -> String {
    if channel.id == here {
        return "this channel".to_string();
    }
    match channel.kind {
        ChannelKind::Open => format!("~{} (public)", channel.name),
        ChannelKind::Private => format!("~{} (private)", channel.name),
        ChannelKind::Direct => format!("a direct message ({})", channel.display_name),
        ChannelKind::Group => format!("a group message with {}", channel.display_name),
    }
}

/// What the rendering needs beside the post.
pub struct Style<'a> {
    pub display_names: &'a BTreeMap<String, String>,
    pub timezone: chrono_tz::Tz,
}

/// One post, or the part of it shown: a header line, the text between
/// `<<<` and `>>>`, the attached files, then a line stating what was left out
/// and how to read it, when anything was.
pub fn post(
    post: &ObservedPost,
    channel: &str,
    shown: &Excerpt,
    left_out: Option<String>,
    style: &Style<'_>,
) -> String {
    let mut out = format!(
        "post {} · {channel} · {} · {}\n<<<\n{}\n>>>",
        post.id,
        author_line(post, style.display_names),
        local_time(post.created_at, style.timezone),
        strip_mentions_of_agents(&shown.text, style.display_names),
    );
    for file in &post.files {
        let _ = write!(
            out,
            "\n[attached file: {} ({}, {} bytes)]",
            file.name, file.mime_type, file.size
        );
    }
    if let Some(line) = left_out {
        let _ = write!(out, "\n{line}");
    }
    out
}

/// The line under a hit that is not the whole post.
pub fn hit_left_out(post_id: &str, shown: &Excerpt) -> Option<String> {
    if shown.is_whole() {
        return None;
    }
    Some(format!(
        "[Shown: characters {}–{} of {}, around the match; {} before and {} after are left out. conversations::read with post {post_id} reads it whole.]",
        shown.before + 1,
        shown.total - shown.after,
        shown.total,
        shown.before,
        shown.after,
    ))
}

/// The line under a read that is one page of a longer post.
pub fn read_left_out(post_id: &str, shown: &Excerpt) -> Option<String> {
    if shown.is_whole() {
        return None;
    }
    let end = shown.total - shown.after;
    let mut line = format!(
        "[Shown: characters {}–{end} of {}.",
        shown.before + 1,
        shown.total
    );
    if shown.after > 0 {
        let _ = write!(
            line,
            " {} more follow: conversations::read with post {post_id} and offset {end} reads on.",
            shown.after
        );
    }
    if shown.before > 0 {
        let _ = write!(
            line,
            " The first {} are before this page: offset 0 reads from the start.",
            shown.before
        );
    }
    line.push(']');
    Some(line)
}
