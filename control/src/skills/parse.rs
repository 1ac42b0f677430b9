//! The text of a `SKILL.md` (§3.5): a frontmatter block giving the
//! description and optionally the tools the procedure calls, then the body,
//! whose `## References` section indexes the documents beside it. Pure: no
//! file is read here, so a compiled-in skill and one on disk parse alike.

use serde::Deserialize;

/// One line of a skill's reference index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    /// A file name beside `SKILL.md`.
    pub file: String,
    /// What the document holds, as the agent reads it before loading it.
    pub summary: String,
}

/// A `SKILL.md`, parsed and not yet checked against its directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    pub name: Option<String>,
    pub description: String,
    pub tools: Vec<String>,
    /// The body without the frontmatter and without the index, which the
    /// framework renders itself so its form never depends on the author.
    pub body: String,
    pub index: Vec<IndexEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Frontmatter {
    name: Option<String>,
    description: String,
    #[serde(default)]
    tools: Vec<String>,
}

/// The heading that opens the index (any level, any case).
const INDEX_HEADING: &str = "references";

/// Parses a `SKILL.md`; the error is the reason, which the caller prefixes
/// with the file's path.
pub fn parse(text: &str) -> Result<Parsed, String> {
    let (yaml, rest) = split_frontmatter(text)
        .ok_or("does not open with a frontmatter block between `---` lines")?;
    let front: Frontmatter =
        serde_yaml_ng::from_str(yaml).map_err(|e| format!("frontmatter: {e}"))?;
    if front.description.trim().is_empty() {
        return Err("the description is empty".into());
    }
    if front.description.trim().lines().count() > 1 {
        // The manifest gives each skill one line (§3.5).
        return Err("the description spans several lines; the manifest gives it one".into());
    }
    let (body, index) = split_index(rest)?;
    if body.is_empty() {
        return Err("the body is empty: a skill is a procedure to follow".into());
    }
    Ok(Parsed {
        name: front.name,
        description: front.description.trim().to_string(),
        tools: front.tools,
        body,
        index,
    })
}

fn split_frontmatter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let after = &rest[end + 4..];
    // The closing fence is a line of its own.
    let after = after.split_once('\n').map_or("", |(fence_rest, body)| {
        if fence_rest.trim().is_empty() {
            body
        } else {
            ""
        }
    });
    Some((&rest[..end + 1], after))
}

fn heading(line: &str) -> Option<&str> {
    let trimmed = line.trim_start();
    let title = trimmed.trim_start_matches('#');
    (title.len() < trimmed.len() && title.starts_with(' ')).then(|| title.trim())
}

/// Separates the `References` section from the body and parses its items.
fn split_index(rest: &str) -> Result<(String, Vec<IndexEntry>), String> {
    let mut body = Vec::new();
    let mut index = Vec::new();
    let mut in_index = false;
    let mut seen_index = false;
    for line in rest.lines() {
        if let Some(title) = heading(line) {
            if title.eq_ignore_ascii_case(INDEX_HEADING) {
                if seen_index {
                    return Err("holds two References sections; the index is one".into());
                }
                in_index = true;
                seen_index = true;
                continue;
            }
            in_index = false;
        }
        if !in_index {
            body.push(line);
            continue;
        }
        if line.trim().is_empty() {
            continue;
        }
        let entry = index_item(line)?;
        if index.iter().any(|e: &IndexEntry| e.file == entry.file) {
            return Err(format!(
                "the References section lists `{}` twice",
                entry.file
            ));
        }
        index.push(entry);
    }
    Ok((body.join("\n").trim().to_string(), index))
}

/// One index item: `- file.md — what it holds` (the file name may be in
/// backticks; the separator may be `—`, `–`, `-` or `:`).
fn index_item(line: &str) -> Result<IndexEntry, String> {
    let not_an_item = || {
        format!(
            "the References section holds `{}`, which is not an item `- file.md — what it holds`",
            line.trim()
        )
    };
    let item = line
        .trim()
        .strip_prefix("- ")
        .or_else(|| line.trim().strip_prefix("* "))
        .ok_or_else(not_an_item)?
        .trim();
    let (file, rest) = match item.strip_prefix('`') {
        Some(quoted) => quoted.split_once('`').ok_or_else(not_an_item)?,
        None => item
            .split_once(|c: char| c.is_whitespace() || c == ':')
            .map_or((item, ""), |(file, _)| (file, &item[file.len()..])),
    };
    let summary = rest
        .trim_start()
        .trim_start_matches(['—', '–', '-', ':'])
        .trim();
    if file.is_empty() || file.contains(['/', '\\']) || file.starts_with('.') || file == "SKILL.md"
    {
        return Err(format!(
            "the References section lists `{file}`, which is not a file name beside SKILL.md"
        ));
    }
    if summary.is_empty() {
        return Err(format!(
            "the References section lists `{file}` without saying what it holds"
        ));
    }
    Ok(IndexEntry {
        file: file.to_string(),
        summary: summary.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_5_the_index_is_the_references_section_and_leaves_the_body() {
        let parsed = parse(
            "---\ndescription: Write a brief.\ntools: [web::fetch]\n---\n# Steps\n\n1. Read.\n\n## References\n\n- `style.md` — house style\n- sources.md: which sources count\n\n## After\n\nDone.\n",
        )
        .expect("parses");
        assert_eq!(parsed.description, "Write a brief.");
        assert_eq!(parsed.tools, vec!["web::fetch".to_string()]);
        assert_eq!(parsed.body, "# Steps\n\n1. Read.\n\n## After\n\nDone.");
        assert_eq!(
            parsed.index,
            vec![
                IndexEntry {
                    file: "style.md".into(),
                    summary: "house style".into()
                },
                IndexEntry {
                    file: "sources.md".into(),
                    summary: "which sources count".into()
                },
            ]
        );
    }

    #[test]
    fn s3_5_a_malformed_index_is_refused_with_its_line() {
        for (text, says) in [
            (
                "---\ndescription: x\n---\nBody.\n## References\nsee style.md\n",
                "see style.md",
            ),
            (
                "---\ndescription: x\n---\nBody.\n## References\n- ../etc/passwd — x\n",
                "not a file name",
            ),
            (
                "---\ndescription: x\n---\nBody.\n## References\n- a.md\n",
                "without saying",
            ),
            (
                "---\ndescription: x\n---\nBody.\n## References\n- a.md — x\n- a.md — y\n",
                "twice",
            ),
            (
                "---\ndescription: x\n---\n## References\n- a.md — x\n",
                "body is empty",
            ),
            (
                "---\ndescription: \"two\\nlines\"\n---\nBody.\n",
                "several lines",
            ),
        ] {
            let error = parse(text).expect_err(text);
            assert!(error.contains(says), "{error}");
        }
    }
}
