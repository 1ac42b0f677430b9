//! Acting as the people in a scenario: creating them, posting as them
//! through the simulator's test API, and waiting for what the channel shows.

use collegium_control::chat::Rest;
use mattermost_wire::model::{Channel, Post};
use serde_json::{Value, json};

use crate::Harness;

impl Harness {
    fn sim(&self, path: &str) -> String {
        format!("{}/_sim/{path}", self.mattermost.url)
    }

    async fn sim_post(&self, path: &str, body: Value) -> Value {
        let response = reqwest::Client::new()
            .post(self.sim(path))
            .json(&body)
            .send()
            .await
            .expect("simulator");
        let status = response.status();
        let value: Value = response.json().await.unwrap_or(Value::Null);
        assert!(status.is_success(), "{path}: {status} {value}");
        value
    }

    /// A person on the server who is on no team and in no channel.
    pub async fn stranger(&self, username: &str) -> String {
        let user = self.sim_post("users", json!({"username": username})).await;
        user["id"].as_str().expect("id").to_string()
    }

    /// A person on the team, a member of `channels` (by name).
    pub async fn person(&self, username: &str, channels: &[&str]) -> String {
        let user = self.sim_post("users", json!({"username": username})).await;
        let user_id = user["id"].as_str().expect("id").to_string();
        let team = self.team().await;
        let _: Value = self
            .admin
            .post(
                &format!("teams/{}/members", team.id),
                &json!({"team_id": team.id, "user_id": user_id}),
            )
            .await
            .expect("team member");
        for name in channels {
            let channel = self.channel(name).await;
            let _: Value = self
                .admin
                .post(
                    &format!("channels/{}/members", channel.id),
                    &json!({"user_id": user_id}),
                )
                .await
                .expect("channel member");
        }
        user_id
    }

    /// Adds a user (a person or an agent's bot) to a channel, as a person
    /// does in the client.
    pub async fn join(&self, username: &str, channel: &str) {
        let (user, channel) = (self.user(username).await, self.channel(channel).await);
        let _: Value = self
            .admin
            .post(
                &format!("channels/{}/members", channel.id),
                &json!({"user_id": user.id}),
            )
            .await
            .expect("channel member");
    }

    /// A configured channel, by name.
    pub async fn channel(&self, name: &str) -> Channel {
        let team = self.team().await;
        self.admin
            .channel_by_name(&team.id, name)
            .await
            .expect("lookup")
            .unwrap_or_else(|| panic!("no channel ~{name}"))
    }

    /// A session as `username`.
    pub async fn session(&self, username: &str) -> Rest {
        let login = self.sim_post("login", json!({"as": username})).await;
        Rest::new(&self.mattermost.url)
            .expect("client")
            .with_token(login["token"].as_str().expect("token"))
    }

    /// A file's bytes as `user` downloads them (contract §A.8).
    pub async fn file_bytes(&self, user: &str, file_id: &str) -> Vec<u8> {
        let login = self.sim_post("login", json!({"as": user})).await;
        reqwest::Client::new()
            .get(format!("{}/api/v4/files/{file_id}", self.mattermost.url))
            .bearer_auth(login["token"].as_str().expect("token"))
            .send()
            .await
            .expect("download")
            .error_for_status()
            .expect("readable by its recipient")
            .bytes()
            .await
            .expect("bytes")
            .to_vec()
    }

    /// Merges `patch` into the simulator's server settings
    /// (`max_post_size`, …), as an administrator changing them would.
    pub async fn sim_settings(&self, patch: Value) {
        reqwest::Client::new()
            .put(format!("{}/_sim/settings", self.mattermost.url))
            .json(&patch)
            .send()
            .await
            .expect("settings")
            .error_for_status()
            .expect("settings accepted");
    }

    /// The direct message between a person and an agent.
    pub async fn dm(&self, person: &str, agent: &str) -> String {
        let (a, b) = (self.user(person).await, self.user(agent).await);
        let channel: Channel = self
            .session(person)
            .await
            .post("channels/direct", &json!([a.id, b.id]))
            .await
            .expect("direct channel");
        channel.id
    }

    /// Posts as `username`.
    pub async fn say(&self, username: &str, channel_id: &str, message: &str) -> Post {
        let post = self
            .sim_post(
                "post",
                json!({"as": username, "channel_id": channel_id, "message": message}),
            )
            .await;
        serde_json::from_value(post).expect("post")
    }

    /// Waits for a post by `username` in the channel containing `contains`,
    /// made after `since` (ms).
    pub async fn wait_post(
        &self,
        channel_id: &str,
        username: &str,
        contains: &str,
        since: i64,
    ) -> Post {
        let found = self
            .sim_post(
                "wait",
                json!({"kind": "post", "channel_id": channel_id, "user": username,
                       "contains": contains, "since": since, "timeout_ms": 30_000}),
            )
            .await;
        serde_json::from_value(found).expect("post")
    }

    /// Waits for a post's message to be edited to contain `contains`.
    pub async fn wait_edit(&self, post_id: &str, contains: &str) -> Post {
        let found = self
            .sim_post(
                "wait",
                json!({"kind": "edited", "post_id": post_id, "contains": contains, "timeout_ms": 30_000}),
            )
            .await;
        serde_json::from_value(found).expect("post")
    }

    /// Waits for `username`'s reaction on a post.
    pub async fn wait_reaction(&self, post_id: &str, username: &str, emoji: &str) {
        self.sim_post(
            "wait",
            json!({"kind": "reaction", "post_id": post_id, "user": username, "emoji": emoji,
                   "timeout_ms": 30_000}),
        )
        .await;
    }

    /// Every post in a channel, oldest first, as the admin reads it.
    pub async fn posts(&self, channel_id: &str) -> Vec<Post> {
        let list: mattermost_wire::model::PostList = self
            .admin
            .get(&format!("channels/{channel_id}/posts?per_page=200"))
            .await
            .expect("posts");
        let mut posts: Vec<Post> = list.ordered().cloned().collect();
        posts.reverse();
        posts
    }

    /// The REST requests the server has served, as `METHOD /api/v4/path`.
    pub async fn served(&self) -> Vec<String> {
        reqwest::get(self.sim("requests"))
            .await
            .expect("simulator")
            .json()
            .await
            .expect("requests")
    }

    /// Forgets the requests served so far.
    pub async fn forget_served(&self) {
        reqwest::Client::new()
            .delete(self.sim("requests"))
            .send()
            .await
            .expect("simulator");
    }

    /// Pins or unpins a post, as a person does in the client.
    pub async fn pin(&self, post_id: &str, pinned: bool) {
        self.sim_post("pin", json!({"post_id": post_id, "pinned": pinned}))
            .await;
    }

    /// Edits a post as its author.
    pub async fn edit(&self, username: &str, post_id: &str, message: &str) {
        let _: Post = self
            .session(username)
            .await
            .edit_post(post_id, message)
            .await
            .expect("edit");
    }

    /// Clicks a button on a post as `username`; the click API's answer.
    pub async fn click(&self, username: &str, post_id: &str, action_id: &str) -> Value {
        let response = reqwest::Client::new()
            .post(self.sim("click"))
            .json(&json!({"as": username, "post_id": post_id, "action_id": action_id}))
            .send()
            .await
            .expect("simulator");
        response.json().await.unwrap_or(Value::Null)
    }

    /// Submits the newest dialog opened for `username`.
    pub async fn submit_dialog(
        &self,
        username: &str,
        channel_id: &str,
        submission: Value,
    ) -> Value {
        self.sim_post(
            "dialog/submit",
            json!({"as": username, "channel_id": channel_id, "submission": submission}),
        )
        .await
    }

    /// Cancels the newest dialog opened for `username`, as closing it does.
    pub async fn cancel_dialog(&self, username: &str, channel_id: &str) -> Value {
        self.sim_post(
            "dialog/cancel",
            json!({"as": username, "channel_id": channel_id}),
        )
        .await
    }

    /// The live posts of a channel as `username` sees it, oldest first.
    pub async fn view(&self, username: &str, channel_id: &str) -> Vec<Post> {
        let seen: Value = reqwest::get(format!(
            "{}?as={username}",
            self.sim(&format!("channels/{channel_id}/view"))
        ))
        .await
        .expect("simulator")
        .json()
        .await
        .expect("a view");
        serde_json::from_value(seen["posts"].clone()).expect("posts")
    }

    /// Waits for an ephemeral post to `username` containing `contains`.
    pub async fn wait_ephemeral(&self, username: &str, contains: &str) -> Value {
        self.sim_post(
            "wait",
            json!({"kind": "ephemeral", "user": username, "contains": contains, "timeout_ms": 30_000}),
        )
        .await
    }

    /// Waits for a dialog to be opened for `username`.
    pub async fn wait_dialog(&self, username: &str) -> Value {
        self.sim_post(
            "wait",
            json!({"kind": "dialog", "user": username, "timeout_ms": 30_000}),
        )
        .await
    }

    /// Types a slash command as `username` in a channel; the server's answer.
    pub async fn command(&self, username: &str, channel_id: &str, command: &str) -> Value {
        let response = reqwest::Client::new()
            .post(self.sim("command"))
            .json(&json!({"as": username, "channel_id": channel_id, "command": command}))
            .send()
            .await
            .expect("simulator");
        response.json().await.unwrap_or(Value::Null)
    }

    /// Makes Mattermost answer the next `times` requests matching `method`
    /// and `path_prefix` with `status` (docs/mattermost-sim.md).
    pub async fn fault(&self, method: &str, path_prefix: &str, status: u16, times: u32) {
        self.sim_post(
            "faults",
            json!([{"method": method, "path_prefix": path_prefix, "status": status, "times": times}]),
        )
        .await;
    }

    /// Makes Mattermost take `delay_ms` over the next `times` requests
    /// matching `method` and `path_prefix`, then answer them as usual.
    pub async fn fault_delay(&self, method: &str, path_prefix: &str, delay_ms: u64, times: u32) {
        self.sim_post(
            "faults",
            json!([{"method": method, "path_prefix": path_prefix, "delay_ms": delay_ms, "times": times}]),
        )
        .await;
    }

    /// Makes Mattermost take `delay_ms` over the next `times` requests
    /// matching `method` and `path_prefix`, then answer them with `status`.
    pub async fn fault_slowly(
        &self,
        method: &str,
        path_prefix: &str,
        status: u16,
        delay_ms: u64,
        times: u32,
    ) {
        self.sim_post(
            "faults",
            json!([{"method": method, "path_prefix": path_prefix, "status": status, "delay_ms": delay_ms, "times": times}]),
        )
        .await;
    }

    /// Drops every socket, as a network blip would.
    pub async fn blip(&self) {
        self.sim_post("ws/drop", json!({})).await;
    }

    /// Holds the next `events` events to `username`'s open sockets for
    /// `delay_ms` each: a process that dies meanwhile never sees them.
    pub async fn hold_events(&self, username: &str, delay_ms: u64, events: u32) {
        self.sim_post(
            "ws/delay",
            json!({"as": username, "delay_ms": delay_ms, "events": events}),
        )
        .await;
    }

    /// Makes the next event to `username`'s sockets skip a sequence number.
    pub async fn skip_seq(&self, username: &str) {
        self.sim_post("ws/skip-seq", json!({"as": username})).await;
    }
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
