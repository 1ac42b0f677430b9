//! One logging initialiser for the daemon and every worker (issue 21 item 6):
//! native journal records when stderr is the journal, so `AGENT`, `CHANNEL`,
//! `TURN`, `TOOL`, `CALL` and `OUTCOME` are fields `journalctl` can match;
//! readable lines on a terminal; one JSON object a line anywhere else (log
//! shippers read those). The level comes from `RUST_LOG` (default `info`).
//! Nothing secret ever is a field: secrets are held as
//! [`crate::redact::Redacted`], which prints `[redacted]`.

pub mod stream;

use std::io::IsTerminal;

use tracing_journald::{Priority, PriorityMappings};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, Registry};

/// Where log records go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// journald's native protocol on its datagram socket.
    Journal,
    /// Human-readable lines on stderr.
    Terminal,
    /// One JSON object a line on stderr.
    Json,
}

/// The sink for this process: the journal when `JOURNAL_STREAM` names
/// stderr, text when stderr is a terminal, JSON otherwise.
pub fn choose(
    journal_stream: Option<&str>,
    stderr: Option<stream::FileId>,
    terminal: bool,
) -> Sink {
    if stream::names_stderr(journal_stream, stderr) {
        Sink::Journal
    } else if terminal {
        Sink::Terminal
    } else {
        Sink::Json
    }
}

/// The journal's priorities for tracing's levels (syslog(3) numbers):
/// info is Informational (6), not the crate's default Notice (5), so that
/// `journalctl -p notice` shows only what needs a look; debug and trace are
/// both Debug (7), journald having nothing below it.
pub fn priorities() -> PriorityMappings {
    PriorityMappings {
        error: Priority::Error,
        warn: Priority::Warning,
        info: Priority::Informational,
        debug: Priority::Debug,
        trace: Priority::Debug,
    }
}

/// Installs the process's subscriber, `identifier` being its
/// `SYSLOG_IDENTIFIER` (the binary's name). Returns the sink in use. A
/// second call in one process (tests that run the daemon in process) keeps
/// the first subscriber.
pub fn init(identifier: &str) -> Sink {
    let journal_stream = std::env::var("JOURNAL_STREAM").ok();
    let chosen = choose(
        journal_stream.as_deref(),
        stream::stderr_id(),
        std::io::stderr().is_terminal(),
    );
    let (layer, sink, unreachable) = match chosen {
        Sink::Journal => match journal(identifier) {
            Ok(layer) => (layer, Sink::Journal, None),
            // stderr is the journal's stream but its socket refused: JSON
            // on stderr still reaches the journal, unstructured.
            Err(error) => (json(), Sink::Json, Some(error)),
        },
        Sink::Terminal => (text(), Sink::Terminal, None),
        Sink::Json => (json(), Sink::Json, None),
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    if tracing_subscriber::registry()
        .with(layer.with_filter(filter))
        .try_init()
        .is_ok()
        && let Some(error) = unreachable
    {
        tracing::warn!(%error, "stderr is the journal, but its socket refused; logging JSON lines instead");
    }
    sink
}

type Boxed = Box<dyn Layer<Registry> + Send + Sync>;

/// Native journal records: user fields unprefixed (`AGENT=`, not
/// `F_AGENT=`), so `journalctl AGENT=mira` matches. journald strips a
/// leading underscore from a field a client sends, so no field can pose as
/// a trusted one (`_UID`, `_SYSTEMD_UNIT`).
fn journal(identifier: &str) -> std::io::Result<Boxed> {
    Ok(tracing_journald::layer()?
        .with_field_prefix(None)
        .with_syslog_identifier(identifier.to_string())
        .with_priority_mappings(priorities())
        .boxed())
}

fn text() -> Boxed {
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .boxed()
}

fn json() -> Boxed {
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .json()
        .flatten_event(true)
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stream::FileId;

    #[test]
    fn i21_the_journal_only_when_journal_stream_names_stderr() {
        let id = FileId { dev: 1, ino: 2 };
        assert_eq!(choose(Some("1:2"), Some(id), false), Sink::Journal);
        assert_eq!(choose(Some("1:2"), Some(id), true), Sink::Journal);
        assert_eq!(choose(Some("1:3"), Some(id), true), Sink::Terminal);
        assert_eq!(choose(Some("1:3"), Some(id), false), Sink::Json);
        assert_eq!(choose(None, Some(id), false), Sink::Json);
        assert_eq!(choose(None, None, true), Sink::Terminal);
    }

    #[test]
    fn i21_levels_map_to_syslog_priorities() {
        let p = priorities();
        let numbers = [p.error, p.warn, p.info, p.debug, p.trace].map(|p| p as u8 - b'0');
        assert_eq!(numbers, [3, 4, 6, 7, 7]);
    }
}
