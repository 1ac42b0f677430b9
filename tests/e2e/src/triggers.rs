//! What the trigger scenarios share (§4.2, §6.4): the trigger route's
//! secret and a schedule in the configuration, a webhook sender, and the
//! system bot's announcements as a channel shows them.

use std::time::Duration;

use serde_json::Value;

use crate::Harness;

/// The system bot's username in every harness deployment.
pub const SYSTEM_BOT: &str = "collegium";

impl Harness {
    /// Opens the trigger route with `secret` (§6.4).
    pub fn trigger_secret(&self, secret: &str) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        let text = text.replacen(
            "[callbacks]\n",
            &format!("[callbacks]\ntrigger_secret = {{ value = \"{secret}\" }}\n"),
            1,
        );
        std::fs::write(&self.config, text).expect("write config");
    }

    /// A provisioned deployment under `limits` with the trigger route open
    /// with `secret`, the daemon not yet started.
    pub async fn with_trigger_route(secret: &str, limits: &str) -> Self {
        let h = Self::start().await;
        h.limits(limits);
        h.trigger_secret(secret);
        h.provision().await.expect("provisioned");
        h
    }

    /// Declares a schedule of @mira's (§4.2).
    pub fn schedule_for_mira(&self, name: &str, recurrence: &str, channel: &str, text: &str) {
        let config = std::fs::read_to_string(&self.config).expect("config");
        let theo = "\n[[agents]]\nusername = \"theo\"";
        let config = config.replacen(
            theo,
            &format!(
                "\n[[agents.schedules]]\nname = \"{name}\"\nrecurrence = \"{recurrence}\"\nchannel = \"{channel}\"\ntext = \"{text}\"\n{theo}"
            ),
            1,
        );
        std::fs::write(&self.config, config).expect("write config");
    }

    /// Posts `body` to the trigger route as a webhook sender would, with
    /// `authorization` as its header where one is given: the status and the
    /// JSON answer.
    pub async fn webhook(&self, authorization: Option<&str>, body: Vec<u8>) -> (u16, Value) {
        let url = format!(
            "{}/triggers",
            self.loaded()
                .config
                .callbacks
                .public_url
                .trim_end_matches('/')
        );
        let mut request = reqwest::Client::new()
            .post(url)
            .header("content-type", "application/json")
            .body(body);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let response = request.send().await.expect("the trigger route answers");
        let status = response.status().as_u16();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// The system bot's trigger announcements in a channel, oldest first.
    pub async fn announcements(&self, channel_id: &str) -> Vec<mattermost_wire::model::Post> {
        let bot = self.user(SYSTEM_BOT).await;
        let mut posts: Vec<_> = self
            .posts(channel_id)
            .await
            .into_iter()
            .filter(|p| p.user_id == bot.id && p.message.contains("[T-"))
            .collect();
        posts.sort_by_key(|p| p.create_at);
        posts
    }

    /// Waits until a channel holds `n` trigger announcements.
    pub async fn wait_announcements(
        &self,
        channel_id: &str,
        n: usize,
    ) -> Vec<mattermost_wire::model::Post> {
        for _ in 0..400 {
            let found = self.announcements(channel_id).await;
            if found.len() >= n {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "{n} announcements never came; found {:#?}",
            self.announcements(channel_id).await
        );
    }
}

impl Harness {
    /// Waits for the announcement whose text contains `needle`.
    pub async fn wait_announcement(
        &self,
        channel_id: &str,
        needle: &str,
    ) -> mattermost_wire::model::Post {
        for _ in 0..400 {
            if let Some(found) = self
                .announcements(channel_id)
                .await
                .into_iter()
                .find(|p| p.message.contains(needle))
            {
                return found;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no announcement containing {needle:?}");
    }
}

/// A webhook item as JSON bytes.
pub fn item(agent: &str, channel: &str, subject: &str, reference: &str, body: &str) -> Vec<u8> {
    serde_json::json!({
        "agent": agent,
        "channel": channel,
        "sender": "ci",
        "subject": subject,
        "reference": reference,
        "body": body,
    })
    .to_string()
    .into_bytes()
}
