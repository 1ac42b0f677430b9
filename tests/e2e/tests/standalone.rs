//! The repository stands alone. No tracked file points at a path outside
//! it; every citation of the design document by section number names a
//! section `docs/ARCHITECTURE.md` has; and that document keeps the sections
//! code comments cite, states the invariants the design rests on and what it
//! does not defend against, and names only paths that exist in this tree.
//!
//! The strings searched for are assembled with `concat!`, so that this file
//! does not find them in itself.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Substrings that point at a place outside the repository.
const OUTSIDE: &[&str] = &[
    concat!("../", "shared"),
    concat!("shared/", "spec"),
    concat!("shared/", "ARCHITECTURE"),
    concat!("mattermost-", "contract.md"),
    concat!("dependency-", "notes.md"),
    concat!("ROAD", "MAP.md"),
];

/// How a file cites a numbered section of the design document.
const CITATION: &str = concat!("ARCHITECTURE", " §");

/// The design document, from the repository's root.
const DESIGN: &str = "docs/ARCHITECTURE.md";

/// The sections whose numbers code comments cite, each with the topic it
/// must keep so that a citation still points at the right thing.
const CITED_SECTIONS: &[&str] = &[
    "## 1. Shape",
    "## 2. Repository layout",
    "## 3. The control daemon",
    "## 4. Workers and the wire",
    "## 5. Dependencies",
    "## 6. Plugins",
    "## 7. Configuration",
    "## 8. Testing",
];

/// What the design document's headings must state: its invariants, and the
/// threats it leaves open.
const HEADING_PHRASES: &[&str] = &[
    "sole writer of the store",
    "without a recorded decision",
    "bytes executed are the bytes approved",
    "holds a secret",
    "does not defend against",
];

/// Where a path the design document names in a code span begins.
const TREE: &[&str] = &[
    ".ci/",
    "control/",
    "demo/",
    "deploy/",
    "docs/",
    "mattermost-wire/",
    "migrations/",
    "proto/",
    "provisioner/",
    "tests/",
    "worker-kit/",
    "worker-shell/",
];

/// The repository's root: this crate lives in `tests/e2e`.
fn root() -> PathBuf {
    // Read at run time: a build cache shared between checkouts may hold a
    // binary compiled elsewhere.
    let manifest =
        std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into());
    Path::new(&manifest).join("..").join("..")
}

/// Every tracked text file as (path from the root, text), and the design
/// document whether or not it is tracked yet. Files that are not UTF-8 are
/// binary and left out, and so is `Cargo.lock`.
fn texts(root: &Path) -> Vec<(String, String)> {
    let listed = Command::new("git")
        // The checkout may belong to another user than the one testing it.
        .args(["-c", "safe.directory=*", "ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("git runs: the tracked files are listed with `git ls-files`");
    assert!(
        listed.status.success(),
        "`git ls-files` failed in {}: {}",
        root.display(),
        String::from_utf8_lossy(&listed.stderr)
    );
    let mut paths: BTreeSet<String> = String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter(|path| !path.is_empty())
        .map(str::to_string)
        .collect();
    paths.insert(DESIGN.to_string());
    let mut read = Vec::new();
    for path in paths {
        if path == "Cargo.lock" || path.ends_with("/Cargo.lock") {
            continue;
        }
        let full = root.join(&path);
        // Tracked but deleted in this checkout, or not a regular file.
        if !full.is_file() {
            continue;
        }
        let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("reading {path}: {e}"));
        if let Ok(text) = String::from_utf8(bytes) {
            read.push((path, text));
        }
    }
    read
}

fn read_design(root: &Path) -> String {
    std::fs::read_to_string(root.join(DESIGN))
        .unwrap_or_else(|e| panic!("{DESIGN} must exist and be text: {e}"))
}

/// The numbers of the design document's `## N.` headings.
fn numbered_sections(design: &str) -> BTreeSet<u32> {
    design
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix("## ")?;
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            if digits.is_empty() || !rest[digits.len()..].starts_with('.') {
                return None;
            }
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn no_file_points_outside_the_repository() {
    let root = root();
    let mut found = Vec::new();
    for (path, text) in texts(&root) {
        for (index, line) in text.lines().enumerate() {
            for outside in OUTSIDE {
                if line.contains(*outside) {
                    found.push(format!("{path}:{}: `{outside}`", index + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "the repository must stand alone, and these lines point outside it:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn every_cited_section_of_the_design_exists() {
    let root = root();
    let sections = numbered_sections(&read_design(&root));
    let mut found = Vec::new();
    for (path, text) in texts(&root) {
        for (index, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices(CITATION) {
                let rest = &line[at + CITATION.len()..];
                let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
                // A citation names a number; the words alone name none.
                if digits.is_empty() {
                    continue;
                }
                if !digits.parse::<u32>().is_ok_and(|n| sections.contains(&n)) {
                    found.push(format!("{path}:{}: §{digits}", index + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "{DESIGN} has the sections {sections:?}; these citations name none of them:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_design_keeps_its_cited_sections_and_states_its_invariants() {
    let design = read_design(&root());
    let headings: Vec<&str> = design.lines().filter(|l| l.starts_with('#')).collect();
    let missing: Vec<&str> = CITED_SECTIONS
        .iter()
        .copied()
        .filter(|wanted| !headings.iter().any(|h| h.starts_with(*wanted)))
        .collect();
    let unstated: Vec<&str> = HEADING_PHRASES
        .iter()
        .copied()
        .filter(|phrase| !headings.iter().any(|h| h.contains(*phrase)))
        .collect();
    assert!(
        missing.is_empty() && unstated.is_empty(),
        "{DESIGN} lacks the headings {missing:?}, and a heading stating each of {unstated:?}"
    );
}

#[test]
fn every_path_the_design_names_exists() {
    let root = root();
    let design = read_design(&root);
    let mut missing = Vec::new();
    for (index, line) in design.lines().enumerate() {
        // Code spans only: a fence's line has an odd number of backticks.
        if !line.matches('`').count().is_multiple_of(2) {
            continue;
        }
        for span in line.split('`').skip(1).step_by(2) {
            let in_tree = TREE.iter().any(|top| span.starts_with(*top));
            let placeholder =
                span.contains("NNNN") || span.contains("NAME") || span.contains(['*', ' ', '…']);
            if in_tree && !placeholder && !root.join(span.trim_end_matches('/')).exists() {
                missing.push(format!("{DESIGN}:{}: `{span}`", index + 1));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "the design document names paths this tree does not have:\n  {}",
        missing.join("\n  ")
    );
}
