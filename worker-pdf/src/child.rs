//! `collegium-worker-pdf read-child`: one PDF, read in a process of its own
//! (§3.4). The bytes come on stdin, the pages go out on stdout as frames,
//! each once it is read whole. Before it reads a byte it offers itself first
//! to the kernel's out-of-memory killer and bounds its own address space,
//! CPU time and core dumps; the worker polls its resident memory and kills
//! its process group at the cap or the read's deadline. It starts no
//! threads: lopdf runs without its rayon feature.

use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;

use lopdf::{Document, LoadOptions};
use nix::sys::resource::{Resource, setrlimit};

use crate::frame::{self, Frame};
use crate::text::{PageError, page_text};

/// The child's own bounds, as the worker computed them.
#[derive(Debug, Clone, Copy)]
pub struct ChildLimits {
    pub address_space_bytes: u64,
    pub cpu_seconds: u64,
    /// No stream is inflated past this (the memory cap): the parser's own
    /// refusal, met before the poll has to kill.
    pub max_inflated_bytes: u64,
    pub body_cap_bytes: u64,
}

impl ChildLimits {
    /// The arguments that give a child these limits.
    pub fn args(&self) -> Vec<String> {
        vec![
            "read-child".into(),
            "--address-space".into(),
            self.address_space_bytes.to_string(),
            "--cpu-seconds".into(),
            self.cpu_seconds.to_string(),
            "--max-inflated".into(),
            self.max_inflated_bytes.to_string(),
            "--body-cap".into(),
            self.body_cap_bytes.to_string(),
        ]
    }
}

/// A panic is the parser meeting a PDF it cannot read: the child aborts at
/// once (as `panic = "abort"` would, which a workspace profile cannot set
/// for one binary), and the worker reports the abort as unparseable. The
/// message goes to stderr, where the worker reads it.
fn abort_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        eprintln!("collegium-worker-pdf read-child: parser panicked: {info}");
        std::process::abort();
    }));
}

fn confine(limits: &ChildLimits) -> Result<(), String> {
    abort_on_panic();
    // Offered first to the OOM killer should it act before the cap (§3.4).
    std::fs::write("/proc/self/oom_score_adj", "1000")
        .map_err(|e| format!("oom_score_adj: {e}"))?;
    setrlimit(
        Resource::RLIMIT_AS,
        limits.address_space_bytes,
        limits.address_space_bytes,
    )
    .map_err(|e| format!("RLIMIT_AS: {e}"))?;
    // SIGXCPU at the soft limit, SIGKILL a second later.
    setrlimit(
        Resource::RLIMIT_CPU,
        limits.cpu_seconds,
        limits.cpu_seconds.saturating_add(1),
    )
    .map_err(|e| format!("RLIMIT_CPU: {e}"))?;
    setrlimit(Resource::RLIMIT_CORE, 0, 0).map_err(|e| format!("RLIMIT_CORE: {e}"))?;
    Ok(())
}

pub fn main(limits: ChildLimits) -> ExitCode {
    if let Err(why) = confine(&limits) {
        eprintln!("collegium-worker-pdf read-child: cannot confine itself: {why}");
        return ExitCode::FAILURE;
    }
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin()
        .take(limits.body_cap_bytes.saturating_add(1))
        .read_to_end(&mut bytes)
    {
        eprintln!("collegium-worker-pdf read-child: reading the PDF: {e}");
        return ExitCode::FAILURE;
    }
    let mut out = BufWriter::new(std::io::stdout().lock());
    match read(&bytes, &limits, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        // The worker went away; nothing is left to tell.
        Err(_) => ExitCode::FAILURE,
    }
}

/// What the child does with the bytes once confined: public for the fuzz
/// harness (fuzz/harness), which drives it without the confinement.
#[doc(hidden)]
pub fn read(bytes: &[u8], limits: &ChildLimits, out: &mut impl Write) -> std::io::Result<()> {
    let max_inflated = usize::try_from(limits.max_inflated_bytes).unwrap_or(usize::MAX);
    let options = LoadOptions {
        max_decompressed_size: Some(max_inflated),
        ..LoadOptions::default()
    };
    let doc = match Document::load_mem_with_options(bytes, options) {
        Ok(doc) => doc,
        Err(error) => {
            return match PageError::from(error) {
                PageError::OverLimit => frame::write(out, &Frame::OverLimit),
                PageError::Parse(error) => {
                    frame::write(out, &Frame::Unparseable(error.to_string()))
                }
            };
        }
    };
    // One by one, not collect(): lopdf's page iterator reports the
    // document's own /Count as its size, and collect() reserves that much
    // first, so a PDF claiming 10^13 pages aborted the child on allocation
    // (found by fuzzing, fuzz/regressions/pdf/). Only pages the tree holds
    // are walked.
    let mut pages = Vec::new();
    for page in doc.page_iter() {
        pages.push(page);
    }
    let total = u32::try_from(pages.len()).unwrap_or(u32::MAX);
    frame::write(out, &Frame::Total(total))?;
    if pages.is_empty() {
        return frame::write(out, &Frame::Unparseable("the document has no pages".into()));
    }
    let mut first_error = None;
    let mut unreadable = 0usize;
    for (index, page) in pages.iter().enumerate() {
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let text = match page_text(&doc, *page, max_inflated) {
            Ok(text) => text,
            Err(PageError::OverLimit) => return frame::write(out, &Frame::OverLimit),
            // One page the parser cannot read is a page without text; a
            // document none of whose pages read is unparseable, not a scan.
            Err(PageError::Parse(error)) => {
                unreadable += 1;
                first_error.get_or_insert_with(|| format!("page {number}: {error}"));
                String::new()
            }
        };
        frame::write(out, &Frame::Page { number, text })?;
    }
    match first_error {
        Some(error) if unreadable == pages.len() => frame::write(out, &Frame::Unparseable(error)),
        _ => frame::write(out, &Frame::Done),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::ExitStatusExt;

    /// Run in a child of this test binary: installs the read-child's hook
    /// and panics as a parser would.
    #[test]
    fn panicking_under_the_hook() {
        if std::env::var_os("COLLEGIUM_PDF_PANIC_PROBE").is_none() {
            return;
        }
        super::abort_on_panic();
        let pages: Vec<u32> = Vec::new();
        let index = pages.len() + 1;
        let _ = pages[index];
    }

    /// A parser panic aborts the child at once, saying so on stderr, where
    /// the worker reads it (§3.4: the worker keeps serving; the PDF is a
    /// typed failure).
    #[test]
    fn s3_4_a_parser_panic_aborts_the_child_saying_so() {
        let output = std::process::Command::new(std::env::current_exe().expect("this test"))
            .args([
                "--exact",
                "child::tests::panicking_under_the_hook",
                "--nocapture",
            ])
            .env("COLLEGIUM_PDF_PANIC_PROBE", "1")
            .output()
            .expect("run the probe");
        assert_eq!(
            output.status.signal(),
            Some(nix::sys::signal::Signal::SIGABRT as i32),
            "{output:?}"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("collegium-worker-pdf read-child: parser panicked"),
            "{stderr}"
        );
    }
}
