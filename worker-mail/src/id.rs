//! How the tools name a message: `<uidvalidity>.<uid>` of the INBOX. A UID
//! means a message only under the UIDVALIDITY it was read with; a name from
//! before the mailbox was renumbered is refused rather than read as
//! whichever message now holds that number (§3.13).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageRef {
    pub uidvalidity: u32,
    pub uid: u32,
}

impl fmt::Display for MessageRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.uidvalidity, self.uid)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    #[error(
        "`{0}` is not a message id: use one as mail::list, mail::search or mail::conversation gives it, such as 1700000000.42"
    )]
    Malformed(String),
    #[error(
        "the message id {given} is from before the mailbox was renumbered (its numbering is now {now}); list or search again for the message's new id"
    )]
    Stale { given: MessageRef, now: u32 },
}

impl MessageRef {
    pub fn parse(text: &str) -> Result<Self, RefError> {
        let malformed = || RefError::Malformed(text.chars().take(80).collect());
        let (validity, uid) = text.trim().split_once('.').ok_or_else(malformed)?;
        let uidvalidity = validity.parse().map_err(|_| malformed())?;
        let uid: u32 = uid.parse().map_err(|_| malformed())?;
        if uid == 0 {
            return Err(malformed());
        }
        Ok(Self { uidvalidity, uid })
    }

    /// Refused where the INBOX now has another UIDVALIDITY.
    pub fn current(self, uidvalidity: u32) -> Result<Self, RefError> {
        if self.uidvalidity == uidvalidity {
            Ok(self)
        } else {
            Err(RefError::Stale {
                given: self,
                now: uidvalidity,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_13_ids_read_back_and_stale_ones_are_refused() {
        let id = MessageRef::parse("1700.42").expect("parses");
        assert_eq!(id.to_string(), "1700.42");
        assert!(id.current(1700).is_ok());
        assert!(matches!(id.current(1701), Err(RefError::Stale { .. })));
        for bad in ["", "42", "a.b", "1.0", "1.2.3", "-1.2"] {
            assert!(MessageRef::parse(bad).is_err(), "{bad}");
        }
    }
}
