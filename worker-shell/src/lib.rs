//! The shell worker (ARCHITECTURE §4, spec §A2, §3.4, §6.1): `shell::run`
//! executes each approved command as the agent's own OS user, confined by
//! the kernel rather than by this code.

pub mod bounds;
pub mod cgroups;
pub mod confine;
pub mod home;
pub mod launch;
pub mod namespaces;
pub mod output;
pub mod reach;
pub mod request;
pub mod run;
pub mod service;
pub mod settings;
