//! A phrase in an IMAP command, always as one string argument: quoted where
//! it is printable ASCII, else a non-synchronising literal in UTF-8. IMAP
//! syntax inside the phrase (parentheses, `OR`, `ALL`, quotes) is then
//! searched for as text and never read as part of the command (§3.13).

/// The phrase as one IMAP astring. Line breaks and other controls become
/// spaces: a phrase is one line of text, and a bare CR or LF would end the
/// command.
pub fn string(phrase: &str) -> Argument {
    let clean: String = phrase
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if clean.is_ascii() {
        let mut quoted = String::with_capacity(clean.len() + 2);
        quoted.push('"');
        for c in clean.chars() {
            if c == '"' || c == '\\' {
                quoted.push('\\');
            }
            quoted.push(c);
        }
        quoted.push('"');
        Argument {
            text: quoted,
            utf8: false,
        }
    } else {
        Argument {
            text: format!("{{{}+}}\r\n{clean}", clean.len()),
            utf8: true,
        }
    }
}

/// One argument, and whether the command must say `CHARSET UTF-8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub text: String,
    pub utf8: bool,
}

/// `UID SEARCH` criteria matching `phrase` in the sender, the subject or the
/// body.
pub fn anywhere(phrase: &str) -> String {
    let argument = string(phrase);
    let charset = if argument.utf8 { "CHARSET UTF-8 " } else { "" };
    let a = &argument.text;
    format!("{charset}OR OR FROM {a} SUBJECT {a} BODY {a}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_imap_syntax_in_a_phrase_stays_inside_its_string() {
        assert_eq!(string(r#"") OR ALL ("#).text, r#""\") OR ALL (""#);
        assert_eq!(string("a\\b").text, r#""a\\b""#);
        assert_eq!(string("x\r\ny").text, "\"x  y\"");
        let literal = string("café");
        assert!(literal.utf8);
        assert_eq!(literal.text, "{5+}\r\ncafé");
    }
}
