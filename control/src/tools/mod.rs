//! Tools: the declaration registry, grants and name forms (§3.4). Dispatch
//! lands with the worker machinery.

pub mod framework;
pub mod names;
pub mod registry;

pub use names::ToolRef;
pub use registry::{Gate, Host, Registry, ToolDeclaration, ToolsetDeclaration, ToolsetKind};
