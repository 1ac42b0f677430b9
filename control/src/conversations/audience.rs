//! Whom a search may quote from where (§3.8): a match surfaces in the
//! current channel only if everyone who can read the current channel could
//! already read its source. A structural rule rather than an instruction,
//! since a model quoting a raw result would cross a private conversation
//! into a public room by accident; what is wanted elsewhere crosses by
//! memory, where a person saw the disclosure.

use std::collections::BTreeSet;

use crate::store::{ChannelKind, ReachChannel};

/// The channel a turn runs in, with who can read it now.
#[derive(Debug, Clone)]
pub struct Here<'a> {
    pub channel_id: &'a str,
    pub kind: ChannelKind,
    /// Members by user id, as last observed.
    pub members: BTreeSet<&'a str>,
}

impl Here<'_> {
    pub fn is_public(&self) -> bool {
        self.kind == ChannelKind::Open
    }
}

/// Whether a post in `source` may surface `here`. The current channel is
/// always its own audience. A public source is readable by anyone who can
/// read any channel here. From a public channel nothing else reaches, since
/// anyone may join it; from a private channel, a DM or a group message, a
/// source whose current members include everyone present here.
pub fn may_surface(here: &Here<'_>, source: &ReachChannel) -> bool {
    if source.channel.id == here.channel_id || source.channel.kind == ChannelKind::Open {
        return true;
    }
    if here.is_public() {
        return false;
    }
    let theirs: BTreeSet<&str> = source.members.iter().map(String::as_str).collect();
    here.members.is_subset(&theirs)
}

/// The channels of `reach` that may surface `here`.
pub fn within(here: &Here<'_>, reach: Vec<ReachChannel>) -> Vec<ReachChannel> {
    reach.into_iter().filter(|c| may_surface(here, c)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::ObservedChannel;

    fn channel(id: &str, kind: ChannelKind, members: &[&str]) -> ReachChannel {
        ReachChannel {
            channel: ObservedChannel {
                id: id.into(),
                name: id.into(),
                display_name: id.into(),
                kind,
            },
            members: members.iter().map(|m| m.to_string()).collect(),
            floor: 0,
        }
    }

    fn here<'a>(source: &'a ReachChannel) -> Here<'a> {
        Here {
            channel_id: &source.channel.id,
            kind: source.channel.kind,
            members: source.members.iter().map(String::as_str).collect(),
        }
    }

    #[test]
    fn s3_8_from_a_public_channel_search_reaches_public_channels_alone() {
        let town = channel("town", ChannelKind::Open, &["agent", "a", "b"]);
        let other = channel("other", ChannelKind::Open, &["agent", "c"]);
        let private = channel("secret", ChannelKind::Private, &["agent", "a", "b", "c"]);
        let dm = channel("dm", ChannelKind::Direct, &["agent", "a"]);
        let from = here(&town);
        assert!(may_surface(&from, &town));
        assert!(may_surface(&from, &other));
        assert!(
            !may_surface(&from, &private),
            "public to private is refused"
        );
        assert!(!may_surface(&from, &dm));
    }

    #[test]
    fn s3_8_a_private_source_surfaces_only_where_its_members_include_everyone_present() {
        let ab = channel("ab", ChannelKind::Private, &["agent", "a", "b"]);
        let abc = channel("abc", ChannelKind::Private, &["agent", "a", "b", "c"]);
        assert!(may_surface(&here(&ab), &abc), "{{A,B}} reads {{A,B,C}}");
        assert!(
            !may_surface(&here(&abc), &ab),
            "{{A,B,C}} may not read {{A,B}}"
        );
        let town = channel("town", ChannelKind::Open, &["agent"]);
        assert!(
            may_surface(&here(&ab), &town),
            "public reaches every channel"
        );
    }

    #[test]
    fn s3_8_a_dm_reaches_a_group_that_holds_the_same_person() {
        let dm = channel("dm", ChannelKind::Direct, &["agent", "a"]);
        let group = channel("group", ChannelKind::Group, &["agent", "a", "b"]);
        assert!(may_surface(&here(&dm), &group));
        assert!(!may_surface(&here(&group), &dm), "b cannot read the DM");
    }

    #[test]
    fn s3_8_a_member_added_since_changes_the_answer() {
        let ab = channel("ab", ChannelKind::Private, &["agent", "a", "b"]);
        let mut source = channel("ab2", ChannelKind::Private, &["agent", "a", "b"]);
        assert!(may_surface(&here(&ab), &source));
        // c joins here: c cannot read the source, so it no longer surfaces.
        let mut grown = ab.clone();
        grown.members.push("c".into());
        assert!(!may_surface(&here(&grown), &source));
        // and once c joins the source too, it does again.
        source.members.push("c".into());
        assert!(may_surface(&here(&grown), &source));
    }
}
