//! Declaring a tool (§3.14): its name, what it does, its argument type, and
//! its gate — a render function, or an explicit statement that it does not
//! gate. The gate is a required step of the builder: [`ToolBuilder::run`]
//! exists only once one of [`ToolBuilder::render`] or
//! [`ToolBuilder::does_not_gate`] has been called, so a tool that declares
//! neither does not compile.
//!
//! ```compile_fail
//! use collegium_sdk::{NoSettings, Reply, ToolBuilder, ToolError, Context};
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args { text: String }
//! async fn shout(_: Context<NoSettings>, args: Args) -> Result<Reply, ToolError> {
//!     Ok(Reply::text(args.text.to_uppercase()))
//! }
//! // No gate stated: `run` is not there to call.
//! let tool = ToolBuilder::new("shout", "Shouts.").run(shout);
//! ```
//!
//! The same tool with its gate stated compiles:
//!
//! ```
//! use collegium_sdk::{NoSettings, Reply, ToolBuilder, ToolError, Context};
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args { text: String }
//! async fn shout(_: Context<NoSettings>, args: Args) -> Result<Reply, ToolError> {
//!     Ok(Reply::text(args.text.to_uppercase()))
//! }
//! let tool = ToolBuilder::new("shout", "Shouts.").does_not_gate().run(shout);
//! assert!(!tool.gates());
//! ```

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::context::Context;
use crate::reply::{Prompt, Reply, ToolError};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;
pub(crate) type Body<S> =
    Arc<dyn Fn(Context<S>, Value) -> BoxFuture<Result<Reply, ToolError>> + Send + Sync>;
pub(crate) type Renderer<S> =
    Arc<dyn Fn(Context<S>, Value) -> BoxFuture<Result<Prompt, ToolError>> + Send + Sync>;

/// The gate not yet stated: [`ToolBuilder::run`] is not available.
pub struct GateUnstated;

/// The tool stops for a person's approval on every call; the approver reads
/// what its render function builds (§3.7).
pub struct Renders<S>(Renderer<S>);

/// The tool does not stop for a person, stated explicitly (§3.14).
pub struct DoesNotGate;

mod sealed {
    pub trait Sealed {}
}

/// A stated gate: what [`ToolBuilder::run`] requires.
pub trait GateStated<S>: sealed::Sealed {
    #[doc(hidden)]
    fn renderer(self) -> Option<Renderer<S>>;
}

impl<S> sealed::Sealed for Renders<S> {}
impl sealed::Sealed for DoesNotGate {}

impl<S> GateStated<S> for Renders<S> {
    fn renderer(self) -> Option<Renderer<S>> {
        Some(self.0)
    }
}

impl<S> GateStated<S> for DoesNotGate {
    fn renderer(self) -> Option<Renderer<S>> {
        None
    }
}

/// The flags a tool declares beside its gate (§3.4).
#[derive(Debug, Clone, Default)]
pub(crate) struct Flags {
    pub retryable: bool,
    pub concurrent: bool,
    pub supersedable: bool,
    pub requires_settings: Vec<String>,
}

/// A tool being declared. `S` is the plugin's settings type, `A` the
/// argument type (its JSON Schema is generated and sent in `Describe`), `G`
/// the gate as stated so far.
#[must_use = "a tool is declared by handing it to Plugin::tool"]
pub struct ToolBuilder<S, A, G = GateUnstated> {
    name: String,
    description: String,
    flags: Flags,
    gate: G,
    args: PhantomData<fn(A) -> S>,
}

impl<S, A> ToolBuilder<S, A, GateUnstated>
where
    S: Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
{
    /// A tool `namespace::name`, described to the model as `description`.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            flags: Flags::default(),
            gate: GateUnstated,
            args: PhantomData,
        }
    }

    /// Gates the tool on a person's approval: `render` builds the payload
    /// the approver reads from the arguments, the settings and the plugin's
    /// own records only (§3.4).
    pub fn render<F, Fut>(self, render: F) -> ToolBuilder<S, A, Renders<S>>
    where
        F: Fn(Context<S>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Prompt, ToolError>> + Send + 'static,
    {
        let render = Arc::new(render);
        let erased: Renderer<S> = Arc::new(move |cx, value| {
            let render = render.clone();
            Box::pin(async move { render(cx, parse::<A>(value)?).await })
        });
        self.gate_with(Renders(erased))
    }

    /// States that the tool does not stop for a person.
    pub fn does_not_gate(self) -> ToolBuilder<S, A, DoesNotGate> {
        self.gate_with(DoesNotGate)
    }

    fn gate_with<G>(self, gate: G) -> ToolBuilder<S, A, G> {
        ToolBuilder {
            name: self.name,
            description: self.description,
            flags: self.flags,
            gate,
            args: PhantomData,
        }
    }
}

impl<S, A, G> ToolBuilder<S, A, G>
where
    S: Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
{
    /// Safe to run again after a transient failure (§7.2).
    pub fn retryable(mut self) -> Self {
        self.flags.retryable = true;
        self
    }

    /// May run beside other concurrent calls of the turn (§3.4).
    pub fn concurrent(mut self) -> Self {
        self.flags.concurrent = true;
        self
    }

    /// An identical later call replaces this one's result in the window
    /// (§3.8).
    pub fn supersedable(mut self) -> Self {
        self.flags.supersedable = true;
        self
    }

    /// Offered only where the agent's settings hold `keys` (§3.4).
    pub fn requires_settings(mut self, keys: &[&str]) -> Self {
        self.flags.requires_settings = keys.iter().map(ToString::to_string).collect();
        self
    }
}

impl<S, A, G> ToolBuilder<S, A, G>
where
    S: Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    G: GateStated<S>,
{
    /// The tool's body, which completes its declaration.
    pub fn run<F, Fut>(self, body: F) -> Tool<S>
    where
        F: Fn(Context<S>, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Reply, ToolError>> + Send + 'static,
    {
        let body = Arc::new(body);
        let erased: Body<S> = Arc::new(move |cx, value| {
            let body = body.clone();
            Box::pin(async move { body(cx, parse::<A>(value)?).await })
        });
        Tool {
            name: self.name,
            description: self.description,
            parameters: crate::schema::of::<A>(),
            flags: self.flags,
            render: self.gate.renderer(),
            body: erased,
        }
    }
}

/// Arguments that do not parse as the tool's type are the model's to fix
/// (§7.2): the daemon validated them against the same schema, so this is a
/// backstop, never a silent default.
fn parse<A: DeserializeOwned>(value: Value) -> Result<A, ToolError> {
    serde_json::from_value(value)
        .map_err(|e| ToolError::InvalidArguments(format!("the arguments do not fit the tool: {e}")))
}

/// A declared tool, ready for [`Plugin::tool`](crate::Plugin::tool).
pub struct Tool<S> {
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) parameters: Value,
    pub(crate) flags: Flags,
    pub(crate) render: Option<Renderer<S>>,
    pub(crate) body: Body<S>,
}

impl<S> Tool<S> {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the tool stops for a person.
    pub fn gates(&self) -> bool {
        self.render.is_some()
    }

    /// The JSON Schema of its arguments, as sent in `Describe`.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }
}
