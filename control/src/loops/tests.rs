use super::*;
use crate::store::{NewTurn, ObservedChannel, ObservedVia, PostRole, TurnCause};

fn post(id: &str, author: &str, kind: AuthorKind, turn: Option<&str>) -> ObservedPost {
    ObservedPost {
        id: id.into(),
        channel_id: "c1".into(),
        author_id: format!("u-{author}"),
        author_name: author.into(),
        author_kind: kind,
        created_at: 1,
        message: "x".into(),
        props: None,
        role: PostRole::Post,
        turn_id: turn.map(str::to_string),
        pinned: false,
        observed_at: 1,
        observed_via: ObservedVia::Live,
        files: Vec::new(),
    }
}

fn turn(store: &Store, id: &str, agent: &str, answers: &str, placement: &Placement) {
    store
        .open_turn(&NewTurn {
            id: id.into(),
            agent: agent.into(),
            channel_id: "c1".into(),
            boot_id: "b".into(),
            started_at: 1,
            cause: TurnCause::Post,
            answers_post_id: Some(answers.into()),
            depth: placement.depth,
            chain_root: placement.chain_root.clone().unwrap_or_else(|| id.into()),
            chain_length: placement.chain_length,
            model: "m".into(),
        })
        .expect("turn");
}

#[test]
fn s7_4_a_return_goes_back_to_the_asking_turns_depth_and_a_hand_off_goes_deeper() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut store = Store::open(&dir.path().join("s.db")).expect("open");
    store
        .record_channel(&ObservedChannel {
            id: "c1".into(),
            name: "c".into(),
            display_name: "C".into(),
            kind: crate::store::ChannelKind::Open,
        })
        .expect("channel");
    // Ana asks Sam: Sam at depth 0, the root.
    let ask = post("p1", "ana", AuthorKind::Person, None);
    store.record_post(&ask).expect("post");
    let sam = place(&store, "sam", Some(&ask)).expect("place");
    assert_eq!(
        (sam.depth, sam.chain_length, sam.chain_root.clone()),
        (0, 1, None)
    );
    turn(&store, "t-sam", "sam", "p1", &sam);
    // Sam asks Naomi: a hand-off, depth 1.
    let to_naomi = post("p2", "sam", AuthorKind::Agent, Some("t-sam"));
    store.record_post(&to_naomi).expect("post");
    let naomi = place(&store, "naomi", Some(&to_naomi)).expect("place");
    assert_eq!((naomi.depth, naomi.chain_length), (1, 2));
    assert_eq!(naomi.chain_root.as_deref(), Some("t-sam"));
    turn(&store, "t-naomi", "naomi", "p2", &naomi);
    // Naomi answers Sam: a return, back at depth 0, the chain still grows.
    let to_sam = post("p3", "naomi", AuthorKind::Agent, Some("t-naomi"));
    store.record_post(&to_sam).expect("post");
    let back = place(&store, "sam", Some(&to_sam)).expect("place");
    assert_eq!((back.depth, back.chain_length), (0, 3));
    // Had Naomi handed to Omar instead: depth 2.
    let omar = place(&store, "omar", Some(&to_sam)).expect("place");
    assert_eq!((omar.depth, omar.chain_length), (2, 3));
    // A trigger starts a root at depth 1.
    let trigger = post("p4", "collegium", AuthorKind::SystemBot, None);
    assert_eq!(
        place(&store, "sam", Some(&trigger)).expect("place").depth,
        1
    );
}
