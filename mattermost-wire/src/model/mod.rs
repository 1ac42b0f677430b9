//! The JSON shapes of Mattermost API v4.

mod actions;
mod commands;
mod errors;
mod files;
mod posts;
mod teams;
mod users;
mod websocket;
mod withheld;

pub use actions::*;
pub use commands::*;
pub use errors::*;
pub use files::*;
pub use posts::*;
pub use teams::*;
pub use users::*;
pub use websocket::*;
pub use withheld::WITHHELD;

/// A JSON object, as Mattermost's free-form maps (`props`, `context`) are.
pub type JsonMap = serde_json::Map<String, serde_json::Value>;

/// The body of every "status OK" answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatusOk {
    pub status: String,
}

impl StatusOk {
    pub fn ok() -> Self {
        Self {
            status: "OK".to_string(),
        }
    }
}
