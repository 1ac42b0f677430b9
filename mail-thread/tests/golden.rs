//! Golden files: every `tests/golden/NAME.txt` (text/plain) or `NAME.html` (text/html) is
//! split and rendered as the announcement's blockquote under fixed newest headers, followed
//! by a comment naming the rule behind each quoted message, and compared with
//! `NAME.expected.md`.
//!
//! After a deliberate change, rewrite the expectations and read the diff before committing:
//! `UPDATE_GOLDEN=1 cargo test -p collegium-mail-thread --test golden`

use std::fs;
use std::path::{Path, PathBuf};

use collegium_mail_thread::{Headers, Thread, blockquote, split_html, split_text};

fn newest_headers() -> Headers {
    Headers {
        from: "Bo Reyes <bo@harbour.test>".into(),
        date: "Wed, 4 Mar 2026 09:00:00 +0000".into(),
        subject: "Re: Harbour budget".into(),
    }
}

fn rendered(thread: &Thread) -> String {
    let rules: Vec<String> = thread
        .quoted
        .iter()
        .map(|q| format!("{:?}", q.boundary))
        .collect();
    format!(
        "{}\n<!-- boundaries: {} -->\n",
        blockquote(&newest_headers(), thread),
        if rules.is_empty() {
            "none".to_string()
        } else {
            rules.join(", ")
        }
    )
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .expect("the golden directory is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("txt" | "html")))
        .collect();
    found.sort();
    found
}

#[test]
fn s3_13_every_golden_input_splits_and_renders_as_expected() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let update = std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1");
    let inputs = inputs(&dir);
    assert!(
        inputs.len() >= 30,
        "issue 18 asks for 30 or more golden messages; found {}",
        inputs.len()
    );
    let mut failures = Vec::new();
    for input in &inputs {
        let body = fs::read_to_string(input).expect("a golden input is UTF-8");
        let thread = match input.extension().and_then(|e| e.to_str()) {
            Some("html") => split_html(&body),
            _ => split_text(&body),
        };
        let actual = rendered(&thread);
        let expected_path = input.with_extension("expected.md");
        if update {
            fs::write(&expected_path, &actual).expect("the expectation is writable");
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => failures.push(format!(
                "{}:\n--- expected\n{expected}--- actual\n{actual}",
                input.display()
            )),
            Err(e) => failures.push(format!("{}: no expectation ({e})", expected_path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
