//! Driving a plugin in process, for its own tests and benchmarks (feature
//! `testing`): the plugin's `Toolset` service handshaken with a boot key,
//! its storage an in-memory store on a socketpair, each call signed as the
//! daemon signs it — the path a call takes, without the daemon.

mod memory;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    Call, DescribeRequest, DescribeResponse, InvokeRequest, RenderRequest, RenderResponse,
    ToolResult, invoke_event, toolset_server::Toolset,
};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::grant::GrantSigner;
use serde_json::Value;
use tokio_stream::StreamExt;
use tonic::{Request, Status};

pub use memory::Memory;

use crate::plugin::{Plugin, Settings};
use crate::service::PluginService;
use crate::storage::{Storage, from_fd};

#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error("{0}")]
    Setup(String),
    #[error("the plugin answered {0}")]
    Status(#[from] Status),
    #[error("the call's stream ended without a result")]
    NoResult,
}

/// A plugin served in process.
pub struct Driver<S> {
    pub service: PluginService<S>,
    pub signer: GrantSigner,
    pub memory: Memory,
    pub described: DescribeResponse,
    namespace: String,
    calls: std::sync::atomic::AtomicU64,
    _audit: tempfile::TempDir,
}

impl<S: Settings> Driver<S> {
    /// Serves `plugin` with an empty in-memory store and handshakes it.
    /// Call inside a tokio runtime.
    pub async fn start(plugin: Plugin<S>) -> Result<Self, DriveError> {
        let setup = |e: &dyn std::fmt::Display| DriveError::Setup(e.to_string());
        let audit = tempfile::tempdir().map_err(|e| setup(&e))?;
        let memory = Memory::default();
        let fd = memory.serve_on_pair().map_err(|e| setup(&e))?;
        let storage = Storage::new(from_fd(fd).await.map_err(|e| setup(&e))?);
        let namespace = plugin.description().map_err(|e| setup(&e))?.namespace;
        let service = plugin
            .service(&audit.path().join("audit.jsonl"), storage)
            .map_err(|e| setup(&e))?;
        let signer = GrantSigner::generate("test-boot");
        let described = service
            .describe(Request::new(DescribeRequest {
                protocol_version: PROTOCOL_VERSION,
                boot_id: signer.boot_id().into(),
                grant_public_key: signer.public_key().to_vec(),
            }))
            .await?
            .into_inner();
        Ok(Self {
            service,
            signer,
            memory,
            described,
            namespace,
            calls: std::sync::atomic::AtomicU64::new(0),
            _audit: audit,
        })
    }

    /// A call of `tool` by @mira in `~research` with `arguments`.
    pub fn call(&self, tool: &str, arguments: &Value) -> Call {
        let n = self
            .calls
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Call {
            agent: "mira".into(),
            turn_id: "turn-1".into(),
            call_id: format!("call-{n}"),
            tool: tool.into(),
            arguments_json: arguments.to_string().into_bytes(),
            settings_json: "{}".into(),
            channel: "research".into(),
            held_tools: self
                .described
                .tools
                .iter()
                .map(|t| format!("{}::{}", self.namespace, t.name))
                .collect(),
            ..Call::default()
        }
    }

    /// The approval payload of `call`.
    pub async fn render(&self, call: Call) -> Result<RenderResponse, DriveError> {
        Ok(self
            .service
            .render(Request::new(RenderRequest { call: Some(call) }))
            .await?
            .into_inner())
    }

    /// Runs `call` with a grant naming `decision` (empty for an ungated
    /// tool), and returns its result.
    pub async fn invoke(&self, call: Call, decision: &str) -> Result<ToolResult, DriveError> {
        let grant = self.signer.sign(&self.namespace, &call, decision, now_ms());
        let mut events = self
            .service
            .invoke(Request::new(InvokeRequest {
                call: Some(call),
                grant: Some(grant),
            }))
            .await?
            .into_inner();
        while let Some(event) = events.next().await {
            if let Some(invoke_event::Event::Result(result)) = event?.event {
                return Ok(result);
            }
        }
        Err(DriveError::NoResult)
    }
}
