//! The load test (issue 21): twenty agents, fifty mention-required channels
//! holding every agent, a thousand posts a minute on loopback against the
//! simulators, the real daemon and the fixture toolset. Afterwards the store
//! must show every post recorded, every addressed post answered once or
//! refused by §4.5, nothing left queued or running, and no reply twice; the
//! daemon's resident memory must level off. `docs/load.md` holds the
//! figures and how to run the ten-minute version.

pub mod audit;
pub mod deployment;
pub mod model;
pub mod profile;
pub mod report;
pub mod rng;
pub mod traffic;

pub use profile::Profile;
pub use report::Report;

/// Runs the whole load: the deployment, the traffic, the wait for every
/// lane to settle, and the audit of what the store holds.
pub async fn run(profile: &Profile) -> Report {
    let mut deployment = deployment::start(profile).await;
    let driven = traffic::drive(&deployment, profile).await;
    let settled = audit::settle(&deployment, &driven, profile).await;
    audit::audit(&mut deployment, &driven, settled, profile)
}
