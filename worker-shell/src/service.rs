//! The shell worker's `Toolset` service (ARCHITECTURE §4): it describes
//! `shell::run`, checks each call's signed grant, maps the agent the daemon
//! names to the OS user its own configuration gives (the daemon never hands
//! it a uid or a path), runs the approved bytes through the launcher, and
//! answers with each stream's bounded prefix. A command past its deadline
//! is an unresolved outcome: whether it completed cannot be confirmed (§7.1).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use collegium_control::host::reach::Endpoint;
use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    AgentCommands, AgentReach, CancelRequest, CancelResponse, DescribeRequest, DescribeResponse,
    Failure, HealthRequest, HealthResponse, InvokeEvent, InvokeRequest, PayloadKind, Refusal,
    RenderRequest, RenderResponse, Success, ToolDeclaration, ToolResult, Unresolved, tool_result,
    toolset_server::Toolset,
};
use collegium_worker_kit::admission::{Admission, now_ms};
use collegium_worker_kit::audit::digest;
use collegium_worker_kit::deadline::STOP_MARGIN;
use collegium_worker_kit::sandbox;
use serde_json::{Value, json};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::bounds::{InForce, LaunchLimits, Mechanisms};
use crate::reach;
use crate::request::LaunchRequest;
use crate::run::{CommandCgroup, Ending, run};
use crate::settings::ShellSettings;
use crate::{home, output};

pub const NAMESPACE: &str = "shell";

/// An agent as this host knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentUser {
    pub uid: u32,
    pub gid: u32,
    pub home: PathBuf,
    pub workspace: Option<PathBuf>,
}

impl AgentUser {
    /// A launch of `command` as this agent.
    fn request(&self, command: String, cgroup: Option<PathBuf>, floor: u8) -> LaunchRequest {
        LaunchRequest {
            uid: self.uid,
            gid: self.gid,
            groups: vec![self.gid],
            home: self.home.clone(),
            workspace: self.workspace.clone(),
            command,
            cgroup,
            landlock_floor: floor,
            limits: LaunchLimits::default(),
            // The runner gives each launch its own.
            nonce: String::new(),
        }
    }

    /// A measure of this agent's home, taking at most `time`.
    fn measure(&self, time: Duration) -> home::MeasureRequest {
        home::MeasureRequest {
            uid: self.uid,
            gid: self.gid,
            groups: vec![self.gid],
            home: self.home.clone(),
            time_ms: u64::try_from(time.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

pub struct ShellWorker {
    pub admission: Arc<Admission>,
    pub agents: BTreeMap<String, AgentUser>,
    pub launcher: PathBuf,
    /// The namespaces each command gets, probed at start (§6.1).
    pub namespaces: Vec<String>,
    pub cgroup_root: Option<PathBuf>,
    /// How each command's processes and memory are bounded (§6.1).
    pub mechanisms: Mechanisms,
    /// Each agent's home, as last measured (§6.1).
    pub homes: home::Homes,
    pub landlock_floor: u8,
    pub landlock_abi: u8,
    /// The commands each agent's user found, probed at start (§3.4).
    pub commands: BTreeMap<String, Vec<String>>,
    /// What no agent's user may reach, tried as each at every handshake
    /// (§6.4; `reach`).
    pub reach: Vec<Endpoint>,
}

/// `shell::run` as the framework declares it (`collegium_control::tools`):
/// gated on every call, never retried.
pub fn declaration() -> ToolDeclaration {
    // The registry declares `shell::run`; its absence is a build defect the
    // handshake would name as a missing tool.
    collegium_control::workers::declarations::framework_wire(NAMESPACE, "run").unwrap_or_default()
}

type Events = Pin<Box<dyn Stream<Item = Result<InvokeEvent, Status>> + Send>>;

#[tonic::async_trait]
impl Toolset for ShellWorker {
    async fn describe(
        &self,
        request: Request<DescribeRequest>,
    ) -> Result<Response<DescribeResponse>, Status> {
        let request = request.into_inner();
        self.admission.handshake(&request)?;
        let mut sandbox = sandbox::observe(Some(u32::from(self.landlock_abi)))
            .map_err(|e| Status::internal(e.to_string()))?;
        sandbox.command_cgroups = self.cgroup_root.is_some();
        sandbox.namespaces = self.namespaces.clone();
        sandbox.bounds = self.mechanisms.report();
        let agent_reach = self.probe_reach().await;
        Ok(Response::new(DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            build_version: env!("CARGO_PKG_VERSION").into(),
            namespace: NAMESPACE.into(),
            sandbox: Some(sandbox),
            tools: vec![declaration()],
            settings_schema_json: json!({"type": "object"}).to_string(),
            agent_commands: self
                .commands
                .iter()
                .map(|(agent, available)| AgentCommands {
                    agent: agent.clone(),
                    available: available.clone(),
                })
                .collect(),
            agent_reach,
            ..DescribeResponse::default()
        }))
    }

    async fn render(
        &self,
        request: Request<RenderRequest>,
    ) -> Result<Response<RenderResponse>, Status> {
        let call = request
            .into_inner()
            .call
            .ok_or_else(|| Status::invalid_argument("the request carries no call"))?;
        let command = command_of(&call.arguments_json).map_err(Status::invalid_argument)?;
        Ok(Response::new(RenderResponse {
            kind: PayloadKind::Text as i32,
            summary: "a command".into(),
            payload: command,
        }))
    }

    type InvokeStream = Events;

    async fn invoke(
        &self,
        request: Request<InvokeRequest>,
    ) -> Result<Response<Self::InvokeStream>, Status> {
        let request = request.into_inner();
        let admitted = self.admission.admit(&request)?;
        let call = request.call.unwrap_or_default();
        let event = self.admission.answer(admitted, self.run_call(&call).await);
        Ok(Response::new(Box::pin(tokio_stream::once(event))))
    }

    async fn cancel(&self, _: Request<CancelRequest>) -> Result<Response<CancelResponse>, Status> {
        // A command is never interrupted by a stop: a kill abandons the
        // turn, and the command may still finish (§7.5).
        Ok(Response::new(CancelResponse { found: false }))
    }

    async fn end_turn(
        &self,
        _: tonic::Request<collegium_proto::toolset::v1::EndTurnRequest>,
    ) -> Result<tonic::Response<collegium_proto::toolset::v1::EndTurnResponse>, tonic::Status> {
        // Nothing outlives its command here: a turn holds nothing once its calls are answered.
        Ok(tonic::Response::new(
            collegium_proto::toolset::v1::EndTurnResponse { released: false },
        ))
    }

    async fn health(&self, _: Request<HealthRequest>) -> Result<Response<HealthResponse>, Status> {
        Ok(Response::new(HealthResponse {
            ready: true,
            detail: String::new(),
        }))
    }
}

fn command_of(arguments: &[u8]) -> Result<String, String> {
    let value: Value = serde_json::from_slice(arguments).map_err(|e| format!("arguments: {e}"))?;
    value
        .get("command")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "the arguments name no command".into())
}

fn outcome(outcome: tool_result::Outcome, summary: String) -> ToolResult {
    ToolResult {
        outcome: Some(outcome),
        summary,
        audit: None,
        captures: Vec::new(),
    }
}

fn refusal(message: String) -> ToolResult {
    outcome(
        tool_result::Outcome::Refusal(Refusal { message }),
        "refused".into(),
    )
}

/// The commands probed when the configuration names none (§3.4).
pub const DEFAULT_PROBES: &[&str] = &[
    "git", "python3", "curl", "jq", "make", "rg", "sqlite3", "node", "pandoc", "unzip",
];

impl ShellWorker {
    /// Probes, as each agent's user and confined as its commands are, which
    /// of its candidate commands this host has; a name that is not a plain
    /// command name is never put in a command.
    pub async fn probe(&mut self, candidates: &BTreeMap<String, Vec<String>>) {
        for (agent, user) in &self.agents {
            let names: Vec<&String> = candidates
                .get(agent)
                .into_iter()
                .flatten()
                .filter(|n| {
                    !n.is_empty()
                        && n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "._+-".contains(c))
                })
                .collect();
            if names.is_empty() {
                continue;
            }
            let words: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
            let request = user.request(
                format!(
                    "for c in {}; do command -v -- \"$c\" >/dev/null 2>&1 && printf '%s\\n' \"$c\"; done",
                    words.join(" ")
                ),
                None,
                self.landlock_floor,
            );
            let found = run(&self.launcher, &request, None, Duration::from_secs(20)).await;
            let available = match found {
                Ok(finished) => String::from_utf8_lossy(&finished.stdout.bytes)
                    .lines()
                    .map(str::to_string)
                    .collect(),
                Err(error) => {
                    tracing::warn!(%agent, %error, "the command probe did not run");
                    Vec::new()
                }
            };
            tracing::info!(%agent, ?available, "commands probed");
            self.commands.insert(agent.clone(), available);
        }
    }

    /// What each agent's user can reach of the framework's, tried now, as
    /// each, confined as its commands are (§6.4).
    pub async fn probe_reach(&self) -> Vec<AgentReach> {
        let controls = reach::controls(&self.reach).await;
        let mut found = Vec::new();
        for (agent, user) in &self.agents {
            let request = user.request(String::new(), None, self.landlock_floor);
            let endpoints = reach::probe(&self.launcher, &request, &self.reach, &controls).await;
            tracing::info!(%agent, ?endpoints, "reach probed");
            found.push(AgentReach {
                agent: agent.clone(),
                endpoints,
            });
        }
        found
    }

    async fn run_call(&self, call: &collegium_proto::toolset::v1::Call) -> ToolResult {
        let command = match command_of(&call.arguments_json) {
            Ok(command) => command,
            Err(reason) => return refusal(reason),
        };
        let settings = ShellSettings::parse(&call.settings_json);
        let left = Duration::from_millis(call.deadline_unix_ms.saturating_sub(now_ms()));
        self.run_command(
            &call.agent,
            &call.call_id,
            command,
            &settings,
            Instant::now() + left,
        )
        .await
    }

    /// Runs `command` as `agent` under its settings; the daemon gives up on
    /// the call at `gives_up`. Before the command, the agent's home is
    /// measured where no measure of it stands; while it is over its cap the
    /// command runs shrink-only. After the command the home is measured
    /// again (§6.1).
    pub async fn run_command(
        &self,
        agent_name: &str,
        call_id: &str,
        command: String,
        settings: &ShellSettings,
        gives_up: Instant,
    ) -> ToolResult {
        if command.contains('\0') {
            return refusal("The command contains a NUL byte, which no command can carry.".into());
        }
        let Some(agent) = self.agents.get(agent_name) else {
            return refusal(format!(
                "{agent_name} holds no shell on this host: it has no OS user here."
            ));
        };
        let cap = settings.bounds.home_cap_bytes();
        let home_slot = self.homes.slot(agent_name);
        let (standing, unmeasured) = {
            let mut last = home_slot.lock().await;
            let mut unmeasured = None;
            if last.is_none() {
                // What is left once the command has had its stop margin.
                let room = gives_up
                    .saturating_duration_since(Instant::now())
                    .saturating_sub(STOP_MARGIN + Duration::from_secs(1));
                match self.measure_home(agent, room, cap).await {
                    Ok(measure) => *last = measure,
                    Err(error) => unmeasured = Some(error),
                }
            }
            (*last, unmeasured)
        };
        let shrink_only = standing.is_some_and(|m| m.over(cap));
        let in_force = InForce {
            bounds: settings.bounds,
            mechanisms: self.mechanisms,
            shrink_only,
        };
        let cgroup = match &self.cgroup_root {
            Some(root) => match CommandCgroup::create(
                root,
                &crate::cgroups::command_name(std::process::id(), &digest(call_id.as_bytes())),
            )
            .and_then(|cgroup| {
                crate::cgroups::limit(cgroup.path(), &settings.bounds, &self.mechanisms)
                    .map_err(crate::run::RunError::Cgroup)?;
                Ok(cgroup)
            }) {
                Ok(cgroup) => Some(cgroup),
                Err(error) => {
                    return outcome(
                        tool_result::Outcome::Failure(Failure {
                            message: error.to_string(),
                        }),
                        "not run".into(),
                    );
                }
            },
            None => None,
        };
        let mut request = agent.request(
            command.clone(),
            cgroup.as_ref().map(|c| c.path().to_path_buf()),
            self.landlock_floor,
        );
        request.limits = in_force.launch_limits();
        // The daemon gives up on the call at its deadline: the command is
        // stopped early enough that its signals, the drain and the answer
        // all land before then.
        let left = gives_up.saturating_duration_since(Instant::now());
        let deadline =
            settings.deadline(left.saturating_sub(STOP_MARGIN).max(Duration::from_secs(1)));
        let finished = match run(&self.launcher, &request, cgroup.as_ref(), deadline).await {
            Ok(finished) => finished,
            Err(error) => {
                return outcome(
                    tool_result::Outcome::Failure(Failure {
                        message: error.to_string(),
                    }),
                    "not run".into(),
                );
            }
        };
        drop(cgroup);
        let lead = match &finished.ending {
            Ending::Refused(_) => String::new(),
            _ => {
                self.after_command(agent, &home_slot, cap, shrink_only, gives_up, unmeasured)
                    .await
            }
        };
        let summary = output::summary(&command);
        let mut result = match &finished.ending {
            Ending::Refused(reason) => outcome(
                tool_result::Outcome::Failure(Failure {
                    message: format!(
                        "the command could not be confined, so it did not run: {reason}"
                    ),
                }),
                summary,
            ),
            Ending::Killed => outcome(
                tool_result::Outcome::Unresolved(Unresolved {
                    message: format!(
                        "{lead}the command passed its deadline of {} s and was killed; whether it completed cannot be confirmed.\n{}",
                        deadline.as_secs(),
                        output::text(&finished, settings.shown, &in_force)
                    ),
                }),
                summary,
            ),
            Ending::Exited(_) => outcome(
                tool_result::Outcome::Success(Success {
                    text: format!(
                        "{lead}{}",
                        output::text(&finished, settings.shown, &in_force)
                    ),
                    replay_line: Some(format!("[ran `{}`]", output::summary(&command))),
                    ..Success::default()
                }),
                summary,
            ),
        };
        result.captures = output::captures(&finished, settings.shown);
        result
    }

    /// Measures `agent`'s home in at most `room` (and [`home::MEASURE_TIME`]);
    /// `None` where the measure cannot stand as the home's (§6.1).
    async fn measure_home(
        &self,
        agent: &AgentUser,
        room: Duration,
        cap: u64,
    ) -> Result<Option<home::Measure>, home::MeasureError> {
        let time = room.min(home::MEASURE_TIME);
        if time < Duration::from_millis(500) {
            return Ok(None);
        }
        let measure = home::measure(&self.launcher, &agent.measure(time)).await?;
        Ok(home::stands(&measure, time, cap).then_some(measure))
    }

    /// Measures the home after a command and says what the result leads
    /// with: the home over its cap (its size, the cap, what to remove), or
    /// back under it after a shrink-only command, or that it could not be
    /// measured.
    async fn after_command(
        &self,
        agent: &AgentUser,
        slot: &tokio::sync::Mutex<Option<home::Measure>>,
        cap: u64,
        ran_shrink_only: bool,
        gives_up: Instant,
        unmeasured_before: Option<home::MeasureError>,
    ) -> String {
        let mut last = slot.lock().await;
        // The answer must still reach the daemon: a second for it.
        let room = gives_up
            .saturating_duration_since(Instant::now())
            .saturating_sub(Duration::from_secs(1));
        let failed = match self.measure_home(agent, room, cap).await {
            Ok(measure) => {
                *last = measure;
                None
            }
            Err(error) => {
                tracing::warn!(home = %agent.home.display(), %error, "the home could not be measured");
                *last = None;
                Some(error)
            }
        };
        match (*last, failed.or(unmeasured_before)) {
            (Some(measure), _) if measure.over(cap) => {
                home::over_text(&agent.home, &measure, cap, ran_shrink_only)
            }
            (Some(measure), _) if ran_shrink_only => {
                home::under_again_text(&agent.home, &measure, cap)
            }
            (None, Some(error)) => format!(
                "[home not measured: your home's size could not be measured ({error}), so its cap of {} MiB (home_cap_mib) is not checked; it is measured again before your next command]\n",
                cap / collegium_control::tools::shell_bounds::MIB
            ),
            _ => String::new(),
        }
    }
}
