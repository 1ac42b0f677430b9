//! The traffic: posts at a steady rate, 80% mentioning one agent, 10%
//! mentioning nobody, 5% mentioning two (refused by §4.5), 5% direct
//! messages, from people chosen at random, into channels chosen at random;
//! and the daemon's resident memory sampled as it runs.

use std::time::{Duration, Instant};

use e2e::procs::resident_kib;

use crate::deployment::Deployment;
use crate::profile::Profile;
use crate::rng::Rng;

/// Whom a post addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Addressed {
    /// One agent, by index.
    One(usize),
    Nobody,
    /// Two agents: §4.5 refuses it.
    Two(usize, usize),
    /// A direct message with one agent.
    Direct(usize),
}

impl Addressed {
    /// The agent that must answer the post, if one must.
    pub fn answerer(&self) -> Option<usize> {
        match self {
            Self::One(a) | Self::Direct(a) => Some(*a),
            Self::Nobody | Self::Two(..) => None,
        }
    }
}

/// A post the driver made.
#[derive(Debug, Clone)]
pub struct Sent {
    pub id: String,
    pub channel_id: String,
    pub addressed: Addressed,
    pub created_at: i64,
}

/// What the driver saw while it posted.
#[derive(Debug, Default)]
pub struct Driven {
    pub sent: Vec<Sent>,
    /// The daemon's resident memory in KiB, each sample with its time
    /// since the traffic began.
    pub resident: Vec<(Duration, u64)>,
    /// How long the posting took: behind the schedule, it shows.
    pub elapsed: Duration,
}

fn choose(rng: &mut Rng, agents: usize) -> Addressed {
    let roll = rng.below(100);
    let one = rng.below(agents);
    match roll {
        0..80 => Addressed::One(one),
        80..90 => Addressed::Nobody,
        90..95 => {
            let other = (one + 1 + rng.below(agents - 1)) % agents;
            Addressed::Two(one, other)
        }
        _ => Addressed::Direct(one),
    }
}

fn message(addressed: &Addressed, agents: &[String], n: usize) -> String {
    match addressed {
        Addressed::One(a) => format!("@{} could you look at item {n}?", agents[*a]),
        Addressed::Nobody => format!("Item {n} is done, for the record."),
        Addressed::Two(a, b) => {
            format!(
                "@{} and @{} please compare item {n}.",
                agents[*a], agents[*b]
            )
        }
        Addressed::Direct(_) => format!("Item {n} needs you."),
    }
}

const SAMPLE_EVERY: Duration = Duration::from_secs(5);

pub async fn drive(deployment: &Deployment, profile: &Profile) -> Driven {
    let mut rng = Rng::new(profile.seed);
    let gap = Duration::from_secs(60) / profile.posts_per_minute;
    let mut ticks = tokio::time::interval(gap);
    // Behind schedule, the driver catches up: the run's rate is its rate.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let started = Instant::now();
    let mut driven = Driven::default();
    let mut next_sample = Duration::ZERO;
    let pid = deployment.daemon_pid();
    for n in 0..profile.total_posts() {
        ticks.tick().await;
        if started.elapsed() >= next_sample {
            if let Some(kib) = resident_kib(pid) {
                driven.resident.push((started.elapsed(), kib));
            }
            next_sample += SAMPLE_EVERY;
        }
        let addressed = choose(&mut rng, deployment.agents.len());
        let person = rng.below(deployment.people.len());
        let channel_id = match addressed {
            Addressed::Direct(agent) => deployment.dms[&(person, agent)].clone(),
            _ => deployment.channels[rng.below(deployment.channels.len())].clone(),
        };
        let text = message(&addressed, &deployment.agents, n);
        let post = deployment
            .h
            .say(&deployment.people[person], &channel_id, &text)
            .await;
        driven.sent.push(Sent {
            id: post.id,
            channel_id,
            addressed,
            created_at: post.create_at,
        });
    }
    driven.elapsed = started.elapsed();
    if let Some(kib) = resident_kib(pid) {
        driven.resident.push((driven.elapsed, kib));
    }
    driven
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_is_the_issues() {
        let mut rng = Rng::new(1);
        let (mut one, mut nobody, mut two, mut direct) = (0, 0, 0, 0);
        for _ in 0..20_000 {
            match choose(&mut rng, 20) {
                Addressed::One(_) => one += 1,
                Addressed::Nobody => nobody += 1,
                Addressed::Two(a, b) => {
                    assert_ne!(a, b, "a post addressing two agents names two");
                    two += 1;
                }
                Addressed::Direct(_) => direct += 1,
            }
        }
        assert!((15_600..16_400).contains(&one), "{one}");
        assert!((1_800..2_200).contains(&nobody), "{nobody}");
        assert!((850..1_150).contains(&two), "{two}");
        assert!((850..1_150).contains(&direct), "{direct}");
    }
}
