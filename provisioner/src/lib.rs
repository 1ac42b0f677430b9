//! `collegium-provision`: a one-shot program run before the daemon starts
//! (ARCHITECTURE §1). Provisioning converges; boot only checks (§3.1).

pub mod host;
pub mod mattermost;
pub mod plugin_group;
