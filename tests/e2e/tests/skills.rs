//! Skills (§3.5) through the real daemon: the manifest in the system prompt
//! (§3.8 item 2), a deployment skill and one of its references loaded with
//! `skills::load`, a load outside the manifest refused naming it, and the
//! load replayed as its line in the next turn's window.

use e2e::Harness;
use e2e::people::now_ms;
use e2e::scenario::{calls, reply, square_with, tool_results, turn_requests};
use serde_json::json;

const SKILL_MD: &str = "---\nname: briefing\ndescription: Write a sourced brief for a person.\ntools: [workspace::write]\n---\n# Writing a brief\n\n1. Restate the question.\n2. Write the findings into the workspace.\n\n## References\n\n- `style.md` — the house style for briefs\n";

#[tokio::test(flavor = "multi_thread")]
async fn s3_5_an_agent_loads_a_deployment_skill_and_its_reference_from_its_manifest() {
    let h = Harness::start().await;
    h.limits("debounce_window_ms = 0");
    let dir = h.state_dir().join("resources/skills/briefing");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("SKILL.md"), SKILL_MD).expect("write");
    std::fs::write(dir.join("style.md"), "Short sentences. Sources inline.\n").expect("write");
    let config = std::fs::read_to_string(&h.config).expect("config");
    let config = config.replacen(
        "grants = [\"workspace\"]",
        "grants = [\"workspace\"]\nskills = [\"briefing\"]",
        1,
    );
    std::fs::write(&h.config, config).expect("write config");
    h.provision().await.expect("provisioned");
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    let square = square_with(&h, &["ana"]).await;
    h.model.sim.script(
        "demo-model",
        vec![
            calls(&[("skills__load", json!({"name": "briefing"}))]),
            calls(&[(
                "skills__load",
                json!({"name": "briefing", "reference": "style.md"}),
            )]),
            calls(&[("skills__load", json!({"name": "sourced-brief"}))]),
            reply("The brief follows the house style."),
            reply("Still here."),
        ],
    );
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira write me a brief").await;
    h.wait_post(&square, "mira", "The brief follows the house style.", since)
        .await;

    let first = turn_requests(&h).pop().expect("completions");
    let system = first["messages"][0]["content"].as_str().expect("system");
    assert!(
        system.contains("# Your skills")
            && system.contains("- handing-work-to-a-peer: ")
            && system.contains("- understanding-collegium: ")
            && system.contains("- briefing: Write a sourced brief for a person."),
        "the manifest: {system}"
    );
    let results = tool_results(&first);
    assert!(
        results[0].starts_with("# Skill: briefing\n\n# Writing a brief")
            && results[0].contains("- style.md: the house style for briefs"),
        "the body with its index: {}",
        results[0]
    );
    assert_eq!(
        results[1],
        "# style.md, a reference of the skill briefing\n\nShort sentences. Sources inline."
    );
    assert!(
        results[2].contains("`sourced-brief` is not a skill in your manifest")
            && results[2].contains("handing-work-to-a-peer, understanding-collegium, briefing"),
        "a refusal naming the manifest: {}",
        results[2]
    );

    // The next turn's window carries the loads as their lines (§3.8).
    let since = now_ms() - 1;
    h.say("ana", &square, "@mira are you there?").await;
    h.wait_post(&square, "mira", "Still here.", since).await;
    let second = turn_requests(&h).pop().expect("completions").to_string();
    assert!(second.contains("[loaded skill briefing]"), "{second}");
    assert!(
        second.contains("[loaded reference style.md of skill briefing]"),
        "{second}"
    );
    assert!(!second.contains("Sources inline."), "{second}");
}
