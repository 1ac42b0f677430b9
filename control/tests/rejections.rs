//! Rejected posts (§4.5): what a turn may not post, what the model reads
//! instead, and when the turn ends.

use std::collections::BTreeSet;

use collegium_control::turns::rejections::{
    AfterRejection, Rejection, RejectionCount, check_reply,
};

const LIMIT: usize = 16383;

fn none() -> BTreeSet<String> {
    BTreeSet::new()
}

fn agents(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|n| n.to_string()).collect()
}

#[test]
fn s4_5_an_ordinary_reply_passes() {
    assert_eq!(
        check_reply("The report is attached.", &none(), None, LIMIT),
        None
    );
    assert_eq!(
        check_reply("Готово. 完成了。", &none(), None, LIMIT),
        None,
        "any script"
    );
}

#[test]
fn s4_5_a_reply_addressing_two_agents_is_rejected() {
    let rejected = check_reply("@mira and @theo", &agents(&["mira", "theo"]), None, LIMIT);
    assert_eq!(
        rejected,
        Some(Rejection::SeveralAgents {
            agents: vec!["mira".into(), "theo".into()]
        })
    );
}

#[test]
fn s4_5_a_second_peer_in_one_turn_is_rejected_and_the_same_peer_is_not() {
    assert_eq!(
        check_reply("@theo also this", &agents(&["theo"]), Some("mira"), LIMIT),
        Some(Rejection::SecondPeer {
            first: "mira".into(),
            second: "theo".into()
        })
    );
    assert_eq!(
        check_reply(
            "@mira one more thing",
            &agents(&["mira"]),
            Some("mira"),
            LIMIT
        ),
        None
    );
}

#[test]
fn s4_5_a_reply_over_the_post_limit_states_the_limit_and_its_length() {
    let text = "é".repeat(101);
    let rejected = check_reply(&text, &none(), None, 100).expect("rejected");
    assert_eq!(
        rejected,
        Rejection::TooLong {
            limit: 100,
            length: 101
        },
        "length counts characters, not bytes"
    );
    let feedback = rejected.feedback();
    assert!(feedback.contains("101 characters") && feedback.contains("at most 100"));
}

#[test]
fn s4_5_a_reply_with_no_prose_is_rejected() {
    for text in ["", "   ", "<br/><hr>", "--- *** ---", "<note>\n</note> …"] {
        assert_eq!(
            check_reply(text, &none(), None, LIMIT),
            Some(Rejection::NoProse),
            "{text:?}"
        );
    }
    assert_eq!(check_reply("<b>ok</b>", &none(), None, LIMIT), None);
}

#[test]
fn s4_5_one_line_repeated_five_times_making_up_most_of_the_reply_is_rejected() {
    let text = "I will check.\n".repeat(5);
    assert_eq!(
        check_reply(&text, &none(), None, LIMIT),
        Some(Rejection::RepeatedLine { times: 5 })
    );
    // Four times is not yet; five short repeats in a long reply are not most of it.
    assert_eq!(
        check_reply(&"I will check.\n".repeat(4), &none(), None, LIMIT),
        None
    );
    let long = format!(
        "{}\n{}",
        "A long paragraph of real content that says a great deal. ".repeat(10),
        "- ok\n".repeat(5)
    );
    assert_eq!(check_reply(&long, &none(), None, LIMIT), None);
}

#[test]
fn s4_5_two_rejections_in_a_row_end_the_turn_and_a_tool_call_between_resets() {
    let mut count = RejectionCount::default();
    assert_eq!(count.rejected(), AfterRejection::FeedBack);
    count.tool_ran();
    assert_eq!(count.rejected(), AfterRejection::FeedBack);
    assert_eq!(count.rejected(), AfterRejection::EndTurn);
}

#[test]
fn s4_5_every_rejection_says_the_reply_was_not_posted() {
    for rejection in [
        Rejection::SeveralAgents {
            agents: vec!["mira".into(), "theo".into()],
        },
        Rejection::SecondPeer {
            first: "mira".into(),
            second: "theo".into(),
        },
        Rejection::TooLong {
            limit: 10,
            length: 11,
        },
        Rejection::NoProse,
        Rejection::RepeatedLine { times: 6 },
        Rejection::CallAsProse,
    ] {
        assert!(
            rejection
                .feedback()
                .starts_with("Your reply was not posted: "),
            "{rejection:?}"
        );
    }
}

#[test]
fn s7_1_a_time_limit_cut_is_reported_as_a_time_limit_cut_not_an_output_cut() {
    use collegium_control::inference::FinishReason;
    let timed = Rejection::of_cut(&FinishReason::TimeLimit, "Half an answ", 600)
        .expect("a cut")
        .feedback();
    assert!(timed.contains("time limit of 600 seconds"), "{timed}");
    assert!(!timed.contains("output limit"), "{timed}");
    let output = Rejection::of_cut(&FinishReason::Length, "Half an answ", 600)
        .expect("a cut")
        .feedback();
    assert!(
        output.contains("output limit after 12 characters"),
        "{output}"
    );
    let empty = Rejection::of_cut(&FinishReason::TimeLimit, "", 600)
        .expect("a cut")
        .feedback();
    assert!(
        empty.contains("cut it off before it held anything"),
        "a cut that kept nothing says so: {empty}"
    );
    assert_eq!(Rejection::of_cut(&FinishReason::Stop, "Done.", 600), None);
}
