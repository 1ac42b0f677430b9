//! Mattermost's API v4 as Collegium meets it: the JSON shapes of REST and
//! WebSocket (`model`), and the server's mention grammar (`mentions`), which
//! the daemon uses for detection and stripping and the simulator for the
//! `mentions` of a `posted` event, so the two never diverge (§4.5).
//!
//! Shapes follow the Mattermost contract the simulator implements
//! (`docs/mattermost-sim.md`); Mattermost's own API reference is the
//! authority where the two differ. Every field reads with a
//! default, so a server that omits one still parses.

mod autolinks;
pub mod mentions;
pub mod model;
pub mod untrusted;
