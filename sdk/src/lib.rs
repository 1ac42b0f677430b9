//! Write a Collegium plugin in Rust (§3.14). A plugin is a process serving
//! `collegium.toolset.v1.Toolset`; this crate serves it from the arguments
//! the daemon passes, generates every schema it declares from the plugin's
//! own serde + schemars types, makes each tool state its gate, and hands a
//! body a typed client of its namespaced storage. A tool body returns text,
//! or text beside a disclosure, and fails only as [`ToolError`].
//!
//! A complete plugin — its binary is the plugin directory's `serve`:
//!
//! ```no_run
//! use collegium_sdk::{Collection, Context, Disclosure, Plugin, Prompt, Reply, ToolBuilder, ToolError};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// What `[agents.settings.notes]` holds.
//! #[derive(Deserialize, JsonSchema)]
//! struct Settings { signature: Option<String> }
//!
//! /// One stored note; the store stamps its id and times.
//! #[derive(Serialize, Deserialize, JsonSchema)]
//! struct Note { text: String }
//! impl Collection for Note { const NAME: &'static str = "notes"; }
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Write { /** The note. */ text: String }
//! #[derive(Deserialize, JsonSchema)]
//! struct Find { /** Text the note holds, any case. */ text: String }
//!
//! fn signed(cx: &Context<Settings>, text: &str) -> String {
//!     match &cx.settings().signature { Some(s) => format!("{text} — {s}"), None => text.into() }
//! }
//!
//! async fn render_write(cx: Context<Settings>, args: Write) -> Result<Prompt, ToolError> {
//!     Ok(Prompt::new("write a note", format!("Keep this note?\n\n{}", signed(&cx, &args.text))))
//! }
//!
//! async fn write(cx: Context<Settings>, args: Write) -> Result<Reply, ToolError> {
//!     if args.text.trim().is_empty() {
//!         return Err(ToolError::invalid("the note is empty: write what it should say"));
//!     }
//!     let note = cx.storage().create(&Note { text: signed(&cx, &args.text) }).await?;
//!     Ok(Reply::text(format!("kept note {}", note.id))
//!         .disclose(Disclosure::new("a note", note.data.text).reference(note.id)))
//! }
//!
//! async fn find(cx: Context<Settings>, args: Find) -> Result<Reply, ToolError> {
//!     let found = cx.storage().query::<Note>().contains("text", args.text).limit(20).fetch().await?;
//!     let lines: Vec<String> = found.iter().map(|n| format!("{}: {}", n.id, n.data.text)).collect();
//!     Ok(Reply::text(if lines.is_empty() { "no note holds that".into() } else { lines.join("\n") }))
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Plugin::<Settings>::new("notes")
//!         .collection::<Note>()
//!         .tool(ToolBuilder::new("write", "Keeps a note.").render(render_write).run(write))
//!         .tool(ToolBuilder::new("find", "Finds notes.").does_not_gate().concurrent().run(find))
//!         .serve()
//! }
//! ```
//!
//! What the daemon passes (`--socket`, `--audit`, `--allow-uid`, and
//! storage as fd 3 or `--storage-socket`) is read by [`Plugin::serve`];
//! the grant of every call is checked and its audit line written by the
//! worker kit before and after the body runs. The protocol versions the SDK
//! speaks are [`protocol::SUPPORTED`].

mod context;
mod plugin;
pub mod protocol;
mod reply;
mod schema;
mod service;
pub mod skill;
pub mod storage;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;

pub use context::Context;
pub use plugin::{NoSettings, Plugin, PluginError, ServeArgs, Settings};
pub use reply::{Disclosure, Prompt, Reply, ToolError};
pub use service::PluginService;
pub use storage::{Collection, Query, Storage, StorageError, Stored};
pub use tool::{DoesNotGate, GateStated, GateUnstated, Renders, Tool, ToolBuilder};
