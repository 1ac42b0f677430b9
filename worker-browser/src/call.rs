//! One web call as the worker reads it: its arguments, checked against what
//! the tool takes, the tools the agent holds (a text names another tool only
//! where the agent holds it, §3.4), its settings and its deadline.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use collegium_proto::toolset::v1::Call;
use collegium_worker_kit::admission::now_ms;
use serde::Deserialize;

/// What the daemon's schema already holds a call to; the worker reads the
/// same keys and refuses anything else rather than guess.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arguments {
    pub url: Option<String>,
    pub offset: Option<usize>,
    pub find: Option<Vec<String>>,
    #[serde(rename = "wholePage")]
    pub whole_page: Option<bool>,
    pub query: Option<String>,
    pub count: Option<u32>,
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    pub text: Option<String>,
    pub option: Option<String>,
}

#[derive(Debug, Clone)]
pub struct WebCall {
    pub arguments: Arguments,
    pub settings: serde_json::Value,
    held: BTreeSet<String>,
    /// The turn the call belongs to: a browser session is the turn's.
    pub turn: String,
    /// When the daemon gives up on the call.
    pub gives_up: Instant,
}

#[derive(Debug, thiserror::Error)]
pub enum CallRefused {
    #[error("the arguments are not what this tool takes: {0}")]
    Arguments(String),
    #[error("the call's settings are not JSON: {0}")]
    Settings(String),
}

impl WebCall {
    pub fn read(call: &Call) -> Result<Self, CallRefused> {
        let arguments = serde_json::from_slice(&call.arguments_json)
            .map_err(|e| CallRefused::Arguments(e.to_string()))?;
        let settings = if call.settings_json.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(&call.settings_json)
                .map_err(|e| CallRefused::Settings(e.to_string()))?
        };
        let left = Duration::from_millis(call.deadline_unix_ms.saturating_sub(now_ms()));
        Ok(Self {
            arguments,
            settings,
            held: call.held_tools.iter().cloned().collect(),
            turn: call.turn_id.clone(),
            gives_up: Instant::now() + left,
        })
    }

    /// Whether the agent holds `tool` (`web::navigate`).
    pub fn holds(&self, tool: &str) -> bool {
        self.held.contains(tool)
    }

    /// The time left before the daemon gives up, less what the answer needs
    /// to travel back.
    pub fn time_left(&self) -> Duration {
        self.gives_up
            .saturating_duration_since(Instant::now())
            .saturating_sub(ANSWER_MARGIN)
    }
}

/// What a result needs to reach the daemon before its deadline.
const ANSWER_MARGIN: Duration = Duration::from_secs(1);
