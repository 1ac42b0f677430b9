//! What a command's result says (§3.4): its exit status, then each
//! stream's bounded prefix, saying how much more there was, so nothing
//! reads as whole that is not.

use crate::run::{Capture, Ending, Finished};

/// The result's text, each stream shown up to `shown` bytes.
pub fn text(finished: &Finished, shown: usize) -> String {
    let status = match &finished.ending {
        Ending::Exited(0) => "exit status 0".to_string(),
        Ending::Exited(code) if *code > 128 => format!("killed by signal {}", code - 128),
        Ending::Exited(code) => format!("exit status {code}"),
        Ending::Killed => "killed at its deadline".to_string(),
        Ending::Refused(reason) => format!("not run: {reason}"),
    };
    format!(
        "{status}\n{}{}",
        stream("stdout", &finished.stdout, shown),
        stream("stderr", &finished.stderr, shown)
    )
}

fn stream(name: &str, capture: &Capture, shown: usize) -> String {
    if capture.total == 0 {
        return format!("[{name}: empty]\n");
    }
    let shown = &capture.bytes[..capture.bytes.len().min(shown)];
    let text = String::from_utf8_lossy(shown);
    let more = capture.total - shown.len() as u64;
    let mut out = format!("[{name}]\n{text}");
    if !text.ends_with('\n') {
        out.push('\n');
    }
    if more > 0 {
        out.push_str(&format!(
            "[{name}: the first {} of {} bytes are shown; {more} more were not]\n",
            shown.len(),
            capture.total
        ));
    }
    out
}

/// The streams that ran past what the result shows, captured whole up to
/// the runner's bound, for the daemon to keep in the workspace (§3.4).
pub fn captures(
    finished: &Finished,
    shown: usize,
) -> Vec<collegium_proto::toolset::v1::StreamCapture> {
    [("stdout", &finished.stdout), ("stderr", &finished.stderr)]
        .into_iter()
        .filter(|(_, capture)| capture.total > shown as u64)
        .map(
            |(stream, capture)| collegium_proto::toolset::v1::StreamCapture {
                stream: stream.into(),
                content: capture.bytes.clone(),
                total: capture.total,
            },
        )
        .collect()
}

/// The command's first line, bounded, for status lines and replay.
pub fn summary(command: &str) -> String {
    let first = command.lines().next().unwrap_or_default();
    let cut: String = first.chars().take(80).collect();
    if cut.len() < command.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::SHOWN;

    #[test]
    fn s3_4_a_long_stream_says_how_much_more_there_was() {
        let finished = Finished {
            ending: Ending::Exited(0),
            stdout: Capture {
                bytes: vec![b'x'; SHOWN + 10],
                total: 1_000_000,
            },
            stderr: Capture::default(),
        };
        let text = text(&finished, SHOWN);
        assert!(text.starts_with("exit status 0\n[stdout]\nxxx"));
        assert!(text.contains(&format!(
            "[stdout: the first {SHOWN} of 1000000 bytes are shown; {} more were not]",
            1_000_000 - SHOWN
        )));
        assert!(text.ends_with("[stderr: empty]\n"));
    }

    #[test]
    fn s3_4_the_agents_prefix_bounds_what_is_shown_and_says_so() {
        let finished = Finished {
            ending: Ending::Exited(0),
            stdout: Capture {
                bytes: b"0123456789".to_vec(),
                total: 10,
            },
            stderr: Capture::default(),
        };
        let text = text(&finished, 4);
        assert!(text.contains("[stdout]\n0123\n"), "{text}");
        assert!(
            text.contains("[stdout: the first 4 of 10 bytes are shown; 6 more were not]"),
            "{text}"
        );
        assert_eq!(captures(&finished, 4).len(), 1, "the whole stream is kept");
        assert!(captures(&finished, 10).is_empty());
    }
}
