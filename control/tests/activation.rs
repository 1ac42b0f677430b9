//! Which post starts which turn (§3.10, §4.5), with mentions decided by the
//! shared grammar against the channel's members.

use std::collections::BTreeSet;

use collegium_control::activation::{Activation, Author, Named, Triggering, correction, decide};
use mattermost_wire::mentions::{MentionScan, scan};

/// Members of the channel: two agents and a person. `omar` is an agent of
/// the deployment who is not in this channel.
const MEMBERS: [&str; 4] = ["mira", "theo", "ana", "collegium"];

fn mentions(text: &str) -> MentionScan {
    scan(text, &|u| MEMBERS.contains(&u))
}

fn present(agents: &[&str]) -> BTreeSet<String> {
    agents.iter().map(|a| a.to_string()).collect()
}

fn person() -> Author {
    Author::Person("ana".into())
}

fn both() -> BTreeSet<String> {
    present(&["mira", "theo"])
}

#[test]
fn s3_10_a_persons_post_without_a_mention_starts_nothing_where_mentions_are_required() {
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &both(),
        &mentions("hello all"),
    );
    assert_eq!(decided, Activation::Nothing);
}

#[test]
fn s3_10_a_mention_of_an_agent_present_addresses_it() {
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &both(),
        &mentions("@mira could you look at this?"),
    );
    assert_eq!(decided, Activation::Addressed("mira".into()));
}

#[test]
fn s4_5_two_agents_present_addressed_start_nothing_and_a_person_is_corrected() {
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &both(),
        &mentions("@mira and @theo, please both check"),
    );
    assert_eq!(
        decided,
        Activation::Refused {
            agents: both(),
            correct: true
        }
    );
}

#[test]
fn s4_5_a_mention_of_an_absent_agent_is_inert() {
    // omar is not a member: the grammar does not even see a mention.
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &present(&["mira"]),
        &mentions("@mira ask @omar later"),
    );
    assert_eq!(decided, Activation::Addressed("mira".into()));
    // theo is a member but not an agent present here (say, removed from the
    // agents' list of this channel): inert as well.
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &present(&["mira"]),
        &mentions("@mira and @theo"),
    );
    assert_eq!(decided, Activation::Addressed("mira".into()));
}

#[test]
fn s4_5_a_handle_in_code_is_no_mention() {
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &both(),
        &mentions("the bot is called `@mira`"),
    );
    assert_eq!(decided, Activation::Nothing);
}

#[test]
fn s3_10_respond_to_all_and_direct_messages_start_a_turn_for_a_persons_post() {
    let one = present(&["mira"]);
    for triggering in [Triggering::RespondToAll, Triggering::Direct] {
        let decided = decide(&person(), triggering, &one, &mentions("what's new?"));
        assert_eq!(
            decided,
            Activation::Addressed("mira".into()),
            "{triggering:?}"
        );
    }
}

#[test]
fn s3_10_agent_and_system_bot_posts_never_trigger_without_a_mention() {
    let one = present(&["mira"]);
    for author in [
        Author::Agent("theo".into()),
        Author::SystemBot("collegium".into()),
    ] {
        for triggering in [Triggering::RespondToAll, Triggering::Direct] {
            let decided = decide(&author, triggering, &one, &mentions("done, see above"));
            assert_eq!(decided, Activation::Nothing, "{author:?} {triggering:?}");
        }
    }
    // Not even its own output: mira's post in its own respond-to-all channel.
    let decided = decide(
        &Author::Agent("mira".into()),
        Triggering::RespondToAll,
        &one,
        &mentions("here is the summary"),
    );
    assert_eq!(decided, Activation::Nothing);
}

#[test]
fn s3_10_an_agent_or_the_system_bot_activates_an_agent_by_mention() {
    let decided = decide(
        &Author::Agent("theo".into()),
        Triggering::MentionRequired,
        &both(),
        &mentions("@mira the numbers are in"),
    );
    assert_eq!(decided, Activation::Addressed("mira".into()));
    let decided = decide(
        &Author::SystemBot("collegium".into()),
        Triggering::MentionRequired,
        &both(),
        &mentions("@theo a reminder fired"),
    );
    assert_eq!(decided, Activation::Addressed("theo".into()));
}

#[test]
fn s4_5_an_author_never_addresses_itself() {
    let decided = decide(
        &Author::Agent("mira".into()),
        Triggering::MentionRequired,
        &both(),
        &mentions("as @mira I will"),
    );
    assert_eq!(decided, Activation::Nothing);
}

#[test]
fn s4_5_an_agents_post_addressing_two_is_refused_without_a_correction() {
    let decided = decide(
        &Author::Agent("theo".into()),
        Triggering::MentionRequired,
        &present(&["mira", "theo", "omar"]),
        &scan("@mira and @omar", &|u| {
            ["mira", "omar", "theo"].contains(&u)
        }),
    );
    assert_eq!(
        decided,
        Activation::Refused {
            agents: present(&["mira", "omar"]),
            correct: false
        }
    );
}

#[test]
fn s4_5_a_channel_wide_mention_addresses_no_agent() {
    let decided = decide(
        &person(),
        Triggering::MentionRequired,
        &both(),
        &mentions("@channel the office is closed on Friday"),
    );
    assert_eq!(decided, Activation::Nothing);
}

#[test]
fn s4_5_the_correction_names_agents_by_display_name_and_addresses_no_one() {
    let text = correction(&[
        Named {
            display_name: "Mira",
            username: "mira",
        },
        Named {
            display_name: "Theo the Operator",
            username: "theo",
        },
    ]);
    assert_eq!(
        text,
        "This message addressed Mira and Theo the Operator, so none of them will act on it. \
         Address one agent per message. To name an agent without addressing it, write its \
         name without the @, as Mira rather than `@mira`."
    );
    assert!(
        mentions(&text).usernames().is_empty(),
        "the correction itself mentions nobody"
    );
}
