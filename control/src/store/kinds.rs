//! The small closed vocabularies the store records, each stored as the text
//! its table's CHECK constraint admits.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

macro_rules! stored_enum {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum $name { $($variant),+ }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),+ }
            }
        }

        impl ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
                Ok(ToSqlOutput::from(self.as_str()))
            }
        }

        impl FromSql for $name {
            fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
                match value.as_str()? {
                    $($text => Ok(Self::$variant),)+
                    other => Err(FromSqlError::Other(
                        format!("`{other}` is not a {}", stringify!($name)).into(),
                    )),
                }
            }
        }
    };
}

stored_enum!(
    /// What a post's author was when the post was observed (§3.8).
    AuthorKind { Person => "person", Agent => "agent", SystemBot => "system_bot", OtherBot => "other_bot" }
);

stored_enum!(
    /// What a post is to the turn that wrote it (§8.2); `Post` for any other.
    PostRole { Post => "post", Reply => "reply", UnitPost => "unit_post", Notice => "notice", Prompt => "prompt", Status => "status" }
);

stored_enum!(
    /// How the daemon came to record a post (§8.2): backfilled posts never
    /// start a turn, posts a reconnect recovered may.
    ObservedVia { Live => "live", Backfill => "backfill", Reconnect => "reconnect", PinRead => "pin_read" }
);

stored_enum!(
    /// Mattermost's channel types.
    ChannelKind { Open => "open", Private => "private", Direct => "direct", Group => "group" }
);

stored_enum!(
    /// What started a turn (§8.3).
    TurnCause { Post => "post", Drain => "drain", Handoff => "handoff", Trigger => "trigger", Reconnect => "reconnect", Sweep => "sweep" }
);

stored_enum!(
    /// What an entry of a turn's trace is (§8.3).
    TraceKind { Completion => "completion", Call => "call", Result => "result", RejectedPost => "rejected_post", Steer => "steer", Fold => "fold", Note => "note" }
);
