//! The semantic pass over a file whose shape is valid: cross-references,
//! limits and grants, each refusal naming its key and citing the spec.
//! `docs/config-refusals.md` lists every refusal made here.

mod agents;
mod deployment;
mod grants;
mod names;
mod unbuilt;
pub mod web;

use std::path::Path;

pub use grants::{declared_at_boot, namespace_grant};

use super::model::Config;
use super::problems::{KeyPath, Problem, Problems};
use super::resolved::ResolvedAgent;
use crate::tools::Registry;

/// Checks `config` (its paths already absolute) against `registry`, returning
/// each agent as it resolves, or every problem found.
pub fn check(config: &Config, registry: &Registry) -> Result<Vec<ResolvedAgent>, Vec<Problem>> {
    let mut problems = Problems::default();
    deployment::check(config, registry, &mut problems);
    let agents = agents::check(config, registry, &mut problems);
    web::check(config, &mut problems);
    unbuilt::check(config, registry, &mut problems);
    // §3.5: the compiled-in skills are validated like any other; every
    // agent's manifest carries the core ones.
    if let Err(error) = crate::skills::builtin::all() {
        problems.push(KeyPath::root(), format!("a compiled-in skill: {error}"));
    }
    if problems.is_empty() {
        Ok(agents)
    } else {
        Err(problems.into_vec())
    }
}

/// Whether `path` lies strictly beneath `root`, both read lexically (the file
/// itself need not exist).
fn is_beneath(path: &Path, root: &Path) -> bool {
    match (super::paths::lexical(path), super::paths::lexical(root)) {
        (Some(path), Some(root)) => path.starts_with(&root) && path != root,
        _ => false,
    }
}
