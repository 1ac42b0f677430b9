//! Loop control (§7.4): depth and chain length ride on the turn record,
//! read off the post each turn answers; at the chain limit an agent's
//! mention is refused and the turn says a person needs to pick it up.

use e2e::people::now_ms;
use e2e::scenario::{after_framework, reply, running, store, turn_requests};

#[tokio::test(flavor = "multi_thread")]
async fn s7_4_at_the_chain_limit_a_hand_off_is_refused_and_a_person_is_asked_to_pick_it_up() {
    let (h, _daemon) = running("debounce_window_ms = 0\nchain_limit = 2").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("@theo please check whether the invoice arrived."),
            reply("@mira it arrived this morning."),
            reply("It arrived this morning; a person needs to pick this up from here."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira did the invoice arrive?").await;
    h.wait_post(&square, "theo", "a person needs to pick this up", since)
        .await;
    let posts = h.posts(&square).await;
    assert!(
        !posts.iter().any(|p| p.message.contains("@mira it arrived")),
        "the hand-off past the chain is never posted"
    );
    let fed_back = after_framework(&turn_requests(&h).pop().expect("theo's completions"));
    assert!(
        fed_back[1].contains("reached its chain limit (2 turns"),
        "{fed_back:?}"
    );
    let store = store(&h);
    let mira = store.turns_of("mira", &square).expect("turns");
    let theo = store.turns_of("theo", &square).expect("turns");
    assert_eq!(mira.len(), 1, "mira is not activated again");
    let lineage = |id: &str| store.lineage_of(id).expect("query").expect("turn");
    let (mira, theo) = (lineage(&mira[0].id), lineage(&theo[0].id));
    assert_eq!((mira.depth, mira.chain_length), (0, 1));
    assert_eq!((theo.depth, theo.chain_length), (1, 2));
    assert_eq!(
        theo.chain_root, mira.chain_root,
        "one chain, rooted at the person's turn"
    );
    assert!(
        !turn_requests(&h)
            .iter()
            .any(|r| r.to_string().contains("chain_length")),
        "the counters are never shown to the model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s7_4_the_hourly_ceiling_halts_every_agent_until_a_person_resumes() {
    let (h, _daemon) = running("debounce_window_ms = 0\nhourly_turn_ceiling = 2").await;
    let square = e2e::scenario::square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            reply("First answer."),
            reply("Second answer."),
            reply("Third answer, after the resume."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira first").await;
    h.wait_post(&square, "mira", "First answer.", since).await;
    h.say("ana", &square, "@mira second").await;
    h.wait_post(&square, "mira", "Second answer.", since).await;
    let third = h.say("ana", &square, "@mira third").await;
    let halt = h
        .wait_post(&square, "collegium", "Every agent is halted", since)
        .await;
    assert!(
        halt.message
            .contains("3 turns would have started within the hour; the ceiling is 2"),
        "{}",
        halt.message
    );
    assert_eq!(
        store(&h).queued("mira", &square).expect("queue"),
        std::slice::from_ref(&third.id),
        "the post waits in the queue, nothing lost"
    );
    assert_eq!(turn_requests(&h).len(), 2, "no turn opens while halted");
    h.command("ana", &square, "/collegium resume").await;
    h.wait_post(&square, "collegium", "@ana resumed every agent", since)
        .await;
    h.wait_post(&square, "mira", "Third answer, after the resume.", since)
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_10_a_second_agent_in_a_respond_to_all_channel_halts_everything_until_it_leaves() {
    // The halt notice names the agents by display name (§3.2).
    let h = e2e::Harness::start().await;
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "name = \"research\"\n",
        "name = \"research\"\ntriggering = \"respond-to-all\"\n",
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
    h.limits("debounce_window_ms = 0");
    h.provision().await.expect("provisioned");
    h.person("ana", &["town-square", "research"]).await;
    h.join("mira", "research").await;
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = h.channel("town-square").await.id;
    h.model
        .sim
        .script("demo-model", vec![reply("Answered after the resume.")]);
    let since = now_ms() - 1;

    // A person adds a second agent at runtime (§3.10): everything halts.
    h.join("theo", "research").await;
    let halt = h
        .wait_post(&square, "collegium", "Every agent is halted", since)
        .await;
    assert!(
        halt.message.contains(
            "the respond-to-all channel ~research has 2 agents (Mira, Theo the Operator)"
        ),
        "{}",
        halt.message
    );
    let waiting = h.say("ana", &square, "@mira are you there?").await;
    h.command("ana", &square, "/collegium resume").await;
    h.wait_ephemeral(
        "ana",
        "The halt stays: the respond-to-all channel ~research",
    )
    .await;
    assert_eq!(
        store(&h).queued("mira", &square).expect("queue"),
        std::slice::from_ref(&waiting.id),
        "the post waits, nothing lost"
    );
    assert!(turn_requests(&h).is_empty(), "no turn opens while halted");

    // Once the channel holds one agent, a person may resume.
    let (research, theo) = (h.channel("research").await, h.user("theo").await);
    let _: serde_json::Value = h
        .admin
        .delete(&format!("channels/{}/members/{}", research.id, theo.id))
        .await
        .expect("a person removes theo");
    let mut resumed = false;
    for _ in 0..100 {
        h.command("ana", &square, "/collegium resume").await;
        if h.posts(&square)
            .await
            .iter()
            .any(|p| p.message.contains("@ana resumed every agent"))
        {
            resumed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(resumed, "the resume is accepted once theo has left");
    h.wait_post(&square, "mira", "Answered after the resume.", since)
        .await;
}
