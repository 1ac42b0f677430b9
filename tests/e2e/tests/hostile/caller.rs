//! The daemon's side of each call (ARCHITECTURE §4, §3.7): an approving
//! decision recorded in the store first, then `Worker::invoke` with a signed
//! grant naming it, exactly as the daemon dispatches `shell::run`; and the
//! result read back the way the model reads it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use collegium_control::store::decisions::NewDecision;
use collegium_control::store::{NewTurn, StoreHandle, TurnCause};
use collegium_control::workers::dispatch::{CallOutcome, Dispatch, Worker};
use collegium_proto::toolset::v1::tool_result;
use collegium_worker_kit::grant::GrantSigner;
use serde_json::json;

/// The two agents: each holds the shell, so every cross-agent attempt is
/// between two real OS users.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Mira,
    Theo,
}

impl Agent {
    pub fn name(self) -> &'static str {
        match self {
            Agent::Mira => "mira",
            Agent::Theo => "theo",
        }
    }

    pub fn os_user(self) -> String {
        collegium_control::host::os_user_for(self.name())
    }
}

/// What one call came back as, read the way the model reads it.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The command ran and its result is the worker's own (success or an
    /// unresolved deadline); false for a call that never ran.
    pub ran: bool,
    /// The result's whole text: status line, then each stream.
    pub text: String,
    pub stdout: String,
    /// The exit status line's number, where it exited.
    pub status: Option<i32>,
}

impl Ran {
    fn from_outcome(outcome: &CallOutcome) -> Self {
        let (ran, text) = match outcome {
            CallOutcome::Finished(result) => match &result.outcome {
                Some(tool_result::Outcome::Success(s)) => (true, s.text.clone()),
                Some(tool_result::Outcome::Unresolved(u)) => (true, u.message.clone()),
                Some(tool_result::Outcome::Failure(f)) => {
                    (false, format!("FAILURE: {}", f.message))
                }
                other => (false, format!("{other:?}")),
            },
            other => (false, format!("{other:?}")),
        };
        let status = text
            .lines()
            .find_map(|l| l.strip_prefix("exit status "))
            .and_then(|n| n.trim().parse().ok());
        let stdout = section(
            &text,
            "[stdout]\n",
            &["[stderr]\n", "[stderr: empty]", "[stdout: the first"],
        );
        Self {
            ran,
            text,
            stdout,
            status,
        }
    }
}

/// The text after `start` up to the first of `ends`.
fn section(text: &str, start: &str, ends: &[&str]) -> String {
    let Some((_, rest)) = text.split_once(start) else {
        return String::new();
    };
    let end = ends
        .iter()
        .filter_map(|e| rest.find(e))
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_string()
}

/// The daemon's side of the socket: the worker as `framework::connect`
/// handed it over, the store its approvals are recorded in, the boot's key.
pub struct Caller {
    pub worker: Arc<Worker>,
    pub store: StoreHandle,
    pub signer: GrantSigner,
    pub calls: AtomicU32,
}

impl Caller {
    /// Sends `command` as `agent`'s approved `shell::run`, as the daemon
    /// does: an approving decision recorded first, then a signed grant
    /// naming it, over the worker's socket.
    pub async fn run(&self, agent: Agent, command: &str, deadline: Duration) -> Ran {
        self.run_with(agent, command, deadline, "{}").await
    }

    /// As [`Caller::run`], the call carrying `settings` as the agent's
    /// effective `[settings.shell]`, as the daemon sends them.
    pub async fn run_with(
        &self,
        agent: Agent,
        command: &str,
        deadline: Duration,
        settings: &str,
    ) -> Ran {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        let call_id = format!("{}-{n}", agent.name());
        approve(&self.store, agent, &call_id, command).await;
        let dispatch = Dispatch {
            call_id: call_id.clone(),
            turn_id: turn_of(agent),
            agent: agent.name().into(),
            tool: "run".into(),
            arguments_json: json!({ "command": command }).to_string().into_bytes(),
            settings_json: settings.into(),
            channel: "research".into(),
            held_tools: Vec::new(),
            unit: None,
            decision_id: Some(call_id),
            deadline,
        };
        let outcome = self
            .worker
            .invoke(&self.store, &self.signer, dispatch, |_| {})
            .await
            .expect("the store");
        Ran::from_outcome(&outcome)
    }
}

fn turn_of(agent: Agent) -> String {
    format!("turn-{}", agent.name())
}

/// One open turn per agent, which every approval below belongs to.
pub async fn open_turns(store: &StoreHandle) {
    store
        .call(|store| {
            for agent in [Agent::Mira, Agent::Theo] {
                store.open_turn(&NewTurn {
                    id: turn_of(agent),
                    agent: agent.name().into(),
                    channel_id: "research".into(),
                    boot_id: "boot-hostile".into(),
                    started_at: 1,
                    cause: TurnCause::Post,
                    answers_post_id: None,
                    depth: 0,
                    chain_root: turn_of(agent),
                    chain_length: 1,
                    model: "demo".into(),
                })?;
            }
            Ok(())
        })
        .await
        .expect("the turns");
}

/// A person's approval of `command` for this call, as the daemon records
/// it; its payload is what the person was shown, credentials and all.
async fn approve(store: &StoreHandle, agent: Agent, call_id: &str, command: &str) {
    let (id, command) = (call_id.to_string(), command.to_string());
    store
        .call(move |store| {
            store.open_decision(&NewDecision {
                id: id.clone(),
                turn_id: turn_of(agent),
                call_id: id.clone(),
                agent: agent.name().into(),
                channel_id: "research".into(),
                kind: "approval".into(),
                tool: Some("shell::run".into()),
                payload: json!({ "command": command }).to_string(),
                choices: Vec::new(),
                requested_at: 2,
            })?;
            store.decide(&id, "approved", "ana", None, 3)?;
            Ok(())
        })
        .await
        .expect("the approval");
}
