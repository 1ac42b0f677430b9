//! Chat: Mattermost as the daemon meets it (§8.2). So far the REST client and
//! the credentials the provisioner leaves for the daemon; the WebSocket,
//! backfill and the post store's feed land with the turns work.

pub mod credentials;
pub mod rest;

pub use rest::{Rest, RestError};
