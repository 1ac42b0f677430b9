//! Replays every committed corpus and regression input of each fuzz target
//! through its harness (docs/fuzzing.md), one test per target, so CI checks
//! every input the fuzzer kept without needing cargo-fuzz. A target whose
//! corpus directory is empty fails: it would be checking nothing.

use std::path::{Path, PathBuf};

use collegium_fuzz_harness::TARGETS;

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str) {
    let run = TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, run)| *run)
        .unwrap_or_else(|| panic!("no target `{target}` in the harness"));
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpus = inputs(&fuzz.join("corpus").join(target));
    assert!(
        !corpus.is_empty(),
        "fuzz/corpus/{target} is empty: seed it with `cargo run -p collegium-fuzz-harness --bin seed`"
    );
    let regressions = inputs(&fuzz.join("regressions").join(target));
    for file in corpus.iter().chain(&regressions) {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        eprintln!("{target}: {}", file.display());
        run(&data);
    }
}

macro_rules! targets {
    ($($name:ident),+ $(,)?) => {
        $( #[test] fn $name() { replay(stringify!($name)); } )+

        /// Every target of the harness has its replay test above.
        #[test]
        fn every_target_is_replayed() {
            let replayed = [$(stringify!($name)),+];
            for (name, _) in TARGETS {
                assert!(replayed.contains(name), "`{name}` has no replay test");
            }
        }
    };
}

targets!(
    audit,
    callbacks,
    config,
    mail,
    mattermost_wire,
    mention,
    pdf,
    proto,
    proxy,
    references,
    skill,
    sse,
    tool_arguments,
    web_page,
    web_scope,
    webhook,
);
