use serde::{Deserialize, Serialize};

use super::JsonMap;
use super::withheld::Withheld;

/// A user: a person or a bot (`is_bot`), sanitised as the API returns it.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct User {
    pub id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub username: String,
    pub email: String,
    pub nickname: String,
    pub first_name: String,
    pub last_name: String,
    pub roles: String,
    pub locale: String,
    pub is_bot: bool,
    pub bot_description: String,
    pub props: JsonMap,
    pub notify_props: JsonMap,
    pub timezone: JsonMap,
}

impl User {
    pub fn has_role(&self, role: &str) -> bool {
        self.roles.split_whitespace().any(|r| r == role)
    }
}

/// `POST /users` body. Its `Debug` withholds `password` (`withheld.rs`).
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NewUser {
    pub username: String,
    pub email: String,
    pub password: String,
    pub first_name: String,
    pub last_name: String,
    pub nickname: String,
}

impl std::fmt::Debug for NewUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NewUser")
            .field("username", &self.username)
            .field("email", &self.email)
            .field("password", &Withheld(&self.password))
            .field("first_name", &self.first_name)
            .field("last_name", &self.last_name)
            .field("nickname", &self.nickname)
            .finish()
    }
}

/// `POST /users/login` body. Its `Debug` withholds `password`.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LoginRequest {
    pub login_id: String,
    pub password: String,
}

impl std::fmt::Debug for LoginRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRequest")
            .field("login_id", &self.login_id)
            .field("password", &Withheld(&self.password))
            .finish()
    }
}

/// A bot account. Its key is `user_id`: a bot is also a user of that id.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Bot {
    pub user_id: String,
    pub username: String,
    pub display_name: String,
    pub description: String,
    pub owner_id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
}

/// `POST /bots` body.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct NewBot {
    pub username: String,
    pub display_name: String,
    pub description: String,
}

/// A personal access token. `token` is present only in the answer that
/// minted it, and its `Debug` withholds it.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct UserAccessToken {
    pub id: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub token: String,
    pub user_id: String,
    pub description: String,
    pub is_active: bool,
}

impl std::fmt::Debug for UserAccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserAccessToken")
            .field("id", &self.id)
            .field("token", &Withheld(&self.token))
            .field("user_id", &self.user_id)
            .field("description", &self.description)
            .field("is_active", &self.is_active)
            .finish()
    }
}
