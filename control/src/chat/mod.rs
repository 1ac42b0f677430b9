//! Chat: Mattermost as the daemon meets it (§8.2): the REST client, the
//! credentials the provisioner leaves, one socket per bot, who is who, and
//! the catch-up that backfills the store at boot and after a socket blip.

pub mod credentials;
pub mod directory;
pub mod feed;
pub mod posted;
pub mod rest;
pub mod socket;
pub mod sync;

pub use rest::{Rest, RestError};
