//! Who may answer a prompt (§3.7, §3.7a): a person present in its channel,
//! as the store last observed membership. The decision route asks before it
//! records an answer, and `/collegium approvals` (§8.4) asks to choose what
//! it lists, so the list shows a person only what they could answer, and a
//! direct message only to those in it.

use crate::store::{AuthorKind, Store, StoreError};

/// A user's standing in a prompt's channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// A person in the channel, by username.
    Person(String),
    /// A member that is no person: an agent's bot or the system bot.
    NotAPerson,
    /// Not in the channel.
    Absent,
}

impl Presence {
    /// Whether this standing may answer a prompt in the channel.
    pub fn may_answer(&self) -> bool {
        matches!(self, Self::Person(_))
    }
}

/// `user_id`'s standing in `channel_id`.
pub fn presence(store: &Store, channel_id: &str, user_id: &str) -> Result<Presence, StoreError> {
    Ok(match store.member(channel_id, user_id)? {
        Some(m) if m.kind == AuthorKind::Person => Presence::Person(m.username),
        Some(_) => Presence::NotAPerson,
        None => Presence::Absent,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Member;

    #[test]
    fn s3_7_only_a_person_in_the_channel_may_answer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut store = Store::open(&dir.path().join("s.db")).expect("open");
        let member = |id: &str, name: &str, kind| Member {
            user_id: id.into(),
            username: name.into(),
            kind,
        };
        store
            .reconcile_members(
                "c1",
                &[
                    member("u1", "ana", AuthorKind::Person),
                    member("b1", "mira", AuthorKind::Agent),
                ],
                1,
            )
            .expect("reconcile");
        let ana = presence(&store, "c1", "u1").expect("ana");
        assert_eq!(ana, Presence::Person("ana".into()));
        assert!(ana.may_answer());
        assert_eq!(
            presence(&store, "c1", "b1").expect("mira"),
            Presence::NotAPerson
        );
        assert_eq!(
            presence(&store, "c2", "u1").expect("elsewhere"),
            Presence::Absent
        );
        assert!(!Presence::Absent.may_answer());
    }
}
