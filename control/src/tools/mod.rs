//! Tools: the declaration registry, grants, name forms and name resolution
//! (§3.4), and argument checking (§7.2). Dispatch to the processes that
//! serve them is in `workers/`.

pub mod arguments;
pub mod core;
pub mod framework;
pub mod names;
pub mod registry;
pub mod resolve;
pub mod served;
pub mod shell_bounds;

pub use names::ToolRef;
pub use registry::{Gate, Host, Registry, ToolDeclaration, ToolsetDeclaration, ToolsetKind};
