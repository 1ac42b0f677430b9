//! The Collegium control daemon: one module per concept of the spec
//! (ARCHITECTURE §2). Data flows one way: a Mattermost event (`chat`) is
//! recorded (`store`), decided (`activation`), given to its agent's lane
//! (`lanes`, `queue`), run as a turn (`turns`, `context`, `inference`),
//! whose calls go to tools (`tools`, `workers`) and whose output is posted.
//! The runtime context those stages share (`services`) is built at boot
//! (`daemon`) and sits above them: it imports none of its users.

pub mod activation;
pub mod approvals;
pub mod callbacks;
pub mod chat;
pub mod clearing;
pub mod commands;
pub mod config;
pub mod context;
pub mod conversations;
pub mod daemon;
pub mod host;
pub mod inference;
pub mod lanes;
pub mod loops;
pub mod memory;
pub mod ownership;
pub mod plugin_storage;
pub mod queue;
pub mod restart;
pub mod services;
pub mod skills;
pub mod stalls;
pub mod status;
pub mod store;
pub mod tools;
pub mod trace;
pub mod triggers;
pub mod turns;
pub mod units;
pub mod workers;
pub mod workspace;
