//! One page's text layer, as the child reads it: the strings its content
//! stream shows, decoded by each font's encoding, a line break where the
//! text moves to a new line. Runs only in the child (§3.4).

use std::collections::BTreeMap;

use lopdf::content::Content;
use lopdf::{Document, Encoding, Object, ObjectId};

/// Why a page could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// A stream would inflate past what the child may hold.
    #[error("a stream inflates past the memory cap")]
    OverLimit,
    #[error("{0}")]
    Parse(lopdf::Error),
}

impl From<lopdf::Error> for PageError {
    fn from(error: lopdf::Error) -> Self {
        match error {
            lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. }) => {
                Self::OverLimit
            }
            other => Self::Parse(other),
        }
    }
}

/// The text of the page `page`, inflating no stream past `max_inflated`
/// bytes.
pub fn page_text(doc: &Document, page: ObjectId, max_inflated: usize) -> Result<String, PageError> {
    let fonts = doc.get_page_fonts(page)?;
    let mut encodings: BTreeMap<Vec<u8>, Encoding> = BTreeMap::new();
    for (name, font) in fonts {
        // A font whose encoding cannot be read shows its strings as bytes
        // (below) rather than losing the page.
        match font.get_font_encoding_with_limit(doc, max_inflated) {
            Ok(encoding) => {
                encodings.insert(name, encoding);
            }
            Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded {
                ..
            })) => return Err(PageError::OverLimit),
            Err(_) => {}
        }
    }
    let content = doc.get_page_content_with_limit(page, max_inflated)?;
    let content = Content::decode(&content)?;
    let mut text = String::new();
    let mut encoding: Option<&Encoding> = None;
    for operation in &content.operations {
        match operation.operator.as_str() {
            "Tf" => {
                encoding = operation
                    .operands
                    .first()
                    .and_then(|font| font.as_name().ok())
                    .and_then(|font| encodings.get(font));
            }
            "Tj" | "TJ" => shown(&mut text, encoding, &operation.operands),
            "'" => {
                new_line(&mut text);
                shown(&mut text, encoding, &operation.operands);
            }
            "\"" => {
                new_line(&mut text);
                shown(
                    &mut text,
                    encoding,
                    operation.operands.get(2..).unwrap_or(&[]),
                );
            }
            "T*" | "Td" | "TD" | "ET" => new_line(&mut text),
            _ => {}
        }
    }
    Ok(text.trim_end().to_string())
}

fn new_line(text: &mut String) {
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
}

/// The strings of a show operator's operands; a large negative adjustment
/// inside a TJ array is a space between words.
fn shown(text: &mut String, encoding: Option<&Encoding>, operands: &[Object]) {
    for operand in operands {
        match operand {
            Object::String(bytes, _) => match encoding {
                Some(encoding) if encoding.write_to_string(bytes, text).is_ok() => {}
                // No font, or one whose encoding failed: the bytes as
                // Latin-1, so a page is not lost to a missing font.
                _ => text.extend(bytes.iter().map(|b| char::from(*b))),
            },
            Object::Array(items) => shown(text, encoding, items),
            Object::Integer(i) if *i < -100 => text.push(' '),
            Object::Real(r) if *r < -100.0 => text.push(' '),
            _ => {}
        }
    }
}
