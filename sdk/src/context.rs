//! What a render or a body is handed about its call (§3.14): who calls, in
//! which turn and channel, which tools the agent holds, the agent's
//! effective settings for this plugin, and the plugin's own storage.

use std::sync::Arc;

use collegium_proto::toolset::v1::{Call, InvokeEvent, Progress, invoke_event};
use tokio::sync::mpsc;

use crate::storage::Storage;

pub(crate) type Events = mpsc::Sender<Result<InvokeEvent, tonic::Status>>;

/// One call's context. `S` is the plugin's settings type.
pub struct Context<S> {
    call: Call,
    settings: Arc<S>,
    storage: Storage,
    progress: Option<Events>,
}

impl<S> Context<S> {
    pub(crate) fn new(call: Call, settings: S, storage: Storage, progress: Option<Events>) -> Self {
        Self {
            call,
            settings: Arc::new(settings),
            storage,
            progress,
        }
    }

    /// The calling agent's username.
    pub fn agent(&self) -> &str {
        &self.call.agent
    }

    pub fn turn_id(&self) -> &str {
        &self.call.turn_id
    }

    pub fn call_id(&self) -> &str {
        &self.call.call_id
    }

    /// The handle of the channel the turn runs in; none in a direct or group
    /// message (§3.14), so a record can name the lane that wrote it.
    pub fn channel(&self) -> Option<&str> {
        Some(self.call.channel.as_str()).filter(|c| !c.is_empty())
    }

    /// The work unit the turn serves as assignee (`U-12`): the one whose
    /// assignment post started the turn, fixed for the turn; none for any
    /// other turn (§3.14). A record a body writes can name it.
    pub fn assigned_unit(&self) -> Option<&str> {
        Some(self.call.unit.as_str()).filter(|u| !u.is_empty())
    }

    /// Whether the agent holds `tool` (`namespace::tool`): a text rendered
    /// for this call offers another tool as the way on only where the agent
    /// can call it (§3.4).
    pub fn holds(&self, tool: &str) -> bool {
        self.call.held_tools.iter().any(|t| t == tool)
    }

    /// Every tool the agent holds, as `namespace::tool`.
    pub fn held_tools(&self) -> &[String] {
        &self.call.held_tools
    }

    /// The agent's effective settings for this plugin (§3.4).
    pub fn settings(&self) -> &S {
        &self.settings
    }

    /// The plugin's own records (§3.14).
    pub fn storage(&self) -> &Storage {
        &self.storage
    }

    /// The work unit `reference` (`U-3`) as this call's agent may read it
    /// (§3.14): among the units it created or was assigned in this channel;
    /// none where that is not one of them. In a body only: the daemon
    /// answers for a call in flight, and a render is not one (it refuses).
    pub async fn unit(
        &self,
        reference: &str,
    ) -> Result<Option<collegium_proto::storage::v1::UnitView>, crate::StorageError> {
        self.storage
            .unit(&self.call.turn_id, &self.call.call_id, reference)
            .await
    }

    /// Reports one progress line for the status post while the body runs.
    /// In a render there is no status line to write to, and it does
    /// nothing.
    pub async fn progress(&self, line: impl Into<String>) {
        if let Some(events) = &self.progress {
            let event = InvokeEvent {
                event: Some(invoke_event::Event::Progress(Progress {
                    line: line.into(),
                })),
            };
            // A daemon that stopped listening gets no result either; the
            // body's own end is what closes the call.
            let _ = events.send(Ok(event)).await;
        }
    }
}
