//! The deployment under load: the agents, each holding the fixture
//! toolset as a plugin, in every one of the load's mention-required
//! channels, with the people who post there, and the real daemon.

use std::collections::HashMap;

use e2e::{Daemon, Harness};

use crate::model;
use crate::profile::Profile;

pub struct Deployment {
    pub h: Harness,
    pub daemon: Daemon,
    /// Usernames, the harness's two first.
    pub agents: Vec<String>,
    pub people: Vec<String>,
    /// The load's channels' ids.
    pub channels: Vec<String>,
    /// Each person's direct message with each agent, by (person, agent).
    pub dms: HashMap<(usize, usize), String>,
}

impl Deployment {
    pub fn daemon_pid(&self) -> u32 {
        self.daemon.child.id()
    }
}

pub fn channel_name(index: usize) -> String {
    format!("load-{:02}", index + 1)
}

fn agent_names(profile: &Profile) -> Vec<String> {
    let mut agents = vec!["mira".to_string(), "theo".to_string()];
    agents.extend((3..=profile.agents).map(|i| format!("agent{i:02}")));
    agents
}

/// Every agent holds the fixture toolset and nothing else; the third and
/// later agents are declared as the harness declares its two.
fn configure(h: &Harness, profile: &Profile, agents: &[String]) {
    let names: Vec<String> = (0..profile.channels).map(channel_name).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    h.write_config(&names);
    h.limits(&profile.limits());
    let record = h.dir.path().join("fixture-asked.jsonl");
    h.install_fixture_plugin(&record);
    h.grant_mira(&["fixture"]);
    let mut text = std::fs::read_to_string(&h.config).expect("config");
    text = text.replacen("grants = [\"ask\"]", "grants = [\"fixture\"]", 1);
    for agent in &agents[2..] {
        text.push_str(&format!(
            "\n[[agents]]\nusername = \"{agent}\"\nprompt = \"You help.\"\nmodel = \"demo\"\ngrants = [\"fixture\"]\n"
        ));
    }
    std::fs::write(&h.config, text).expect("write the configuration");
}

pub async fn start(profile: &Profile) -> Deployment {
    let h = Harness::start().await;
    let agents = agent_names(profile);
    configure(&h, profile, &agents);
    h.provision().await.expect("provisioned");
    let names: Vec<String> = (0..profile.channels).map(channel_name).collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let people: Vec<String> = (1..=profile.people)
        .map(|i| format!("person{i:02}"))
        .collect();
    for person in &people {
        h.person(person, &name_refs).await;
    }
    let mut channels = Vec::new();
    for name in &names {
        channels.push(h.channel(name).await.id);
        for agent in &agents {
            h.join(agent, name).await;
        }
    }
    let mut dms = HashMap::new();
    for (p, person) in people.iter().enumerate() {
        for (a, agent) in agents.iter().enumerate() {
            dms.insert((p, a), h.dm(person, agent).await);
        }
    }
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    // The boot check is answered; from here the load's model answers
    // every turn, and the simulator keeps no request bodies.
    h.model.sim.stop_recording();
    h.model.sim.respond_with(model::responder());
    Deployment {
        h,
        daemon,
        agents,
        people,
        channels,
        dms,
    }
}
