//! The configuration (ARCHITECTURE §7, control/src/config): a TOML text
//! parsed and checked whole as `config check` and boot check it, with
//! relative paths resolved against the test configurations' directory (so
//! the seeds' prompt files and skills are found; nothing else is read but
//! what a configuration names). Every refusal names at least one problem;
//! a configuration that passes re-serialises to a text that passes too and
//! serialises the same again (inline secrets show as hidden, which is a
//! fixed point).

use std::path::{Path, PathBuf};

use collegium_control::config::{LoadError, load_str};

fn base() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/config")
}

pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let base = base();
    let path = base.join("fuzzed.toml");
    match load_str(text, &path, &base) {
        Ok(loaded) => {
            let written = match toml::to_string(&loaded.config) {
                Ok(written) => written,
                Err(e) => panic!("a configuration that passed cannot be written back: {e}"),
            };
            let again = match load_str(&written, &path, &base) {
                Ok(again) => again,
                Err(e) => panic!(
                    "a configuration that passed, written back, is refused:\n{}\n{written}",
                    e.report()
                ),
            };
            let rewritten = toml::to_string(&again.config).unwrap_or_default();
            assert_eq!(
                rewritten, written,
                "writing the configuration is not stable"
            );
        }
        Err(LoadError::Invalid { problems, .. }) => {
            assert!(!problems.is_empty(), "refused without naming a problem");
        }
        Err(LoadError::Syntax { message, .. }) => {
            assert!(!message.is_empty(), "a syntax error without a message");
        }
        Err(LoadError::Read { .. }) => panic!("load_str read a file for the text it was given"),
    }
}
