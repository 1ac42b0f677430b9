//! `SKILL.md` (§3.5, control/src/skills/parse.rs): any text parses or is
//! refused with a reason. What parses holds what the loader relies on (a
//! one-line description, a body, an index of plain file names beside the
//! skill, each once, each saying what it holds), and is a fixed point:
//! written back in the documented form (frontmatter, body, `## References`
//! with one `- file — summary` item each) it parses to the same skill.

use collegium_control::skills::parse::{Parsed, parse};

fn write_back(parsed: &Parsed) -> String {
    let mut front = serde_yaml_ng::Mapping::new();
    if let Some(name) = &parsed.name {
        front.insert("name".into(), name.as_str().into());
    }
    front.insert("description".into(), parsed.description.as_str().into());
    front.insert(
        "tools".into(),
        serde_yaml_ng::Value::Sequence(parsed.tools.iter().map(|t| t.as_str().into()).collect()),
    );
    let yaml = serde_yaml_ng::to_string(&front).expect("a mapping of strings serialises");
    let mut out = format!("---\n{yaml}---\n{}\n", parsed.body);
    if !parsed.index.is_empty() {
        out.push_str("\n## References\n\n");
        for entry in &parsed.index {
            // Backticks hold any name but one with a backtick, which the
            // unquoted form (cut at whitespace or `:`) reads whole.
            if entry.file.contains('`') {
                out.push_str(&format!("- {} — {}\n", entry.file, entry.summary));
            } else {
                out.push_str(&format!("- `{}` — {}\n", entry.file, entry.summary));
            }
        }
    }
    out
}

pub fn run(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let parsed = match parse(&text) {
        Ok(parsed) => parsed,
        Err(reason) => {
            assert!(!reason.is_empty(), "refused without a reason");
            return;
        }
    };
    assert!(!parsed.description.is_empty() && parsed.description.lines().count() == 1);
    assert!(!parsed.body.is_empty());
    for (n, entry) in parsed.index.iter().enumerate() {
        assert!(
            !entry.file.is_empty() && !entry.summary.is_empty(),
            "{entry:?}"
        );
        assert!(!entry.file.contains(['/', '\\']) && !entry.file.starts_with('.'));
        assert_ne!(entry.file, "SKILL.md");
        assert!(parsed.index[..n].iter().all(|e| e.file != entry.file));
    }
    // A body line ending in a carriage return reads, written back before
    // its line feed, as a CRLF line end: that text has no written form.
    if parsed.body.contains('\r') {
        return;
    }
    let written = write_back(&parsed);
    match parse(&written) {
        Ok(again) => assert_eq!(again, parsed, "written back:\n{written}"),
        Err(reason) => panic!("a parsed skill, written back, is refused: {reason}\n{written}"),
    }
}
