//! Configuration (ARCHITECTURE §7): one TOML file, checked whole at
//! `collegium config check` and at boot. Two passes: the file's shape against
//! its JSON Schema, which reports every misplaced, mistyped or unknown key at
//! once; then, on a well-shaped file, the cross-references and refusals the
//! spec assigns to configuration.

pub mod browser_unit;
mod check;
pub mod model;
mod paths;
pub mod problems;
pub mod resolved;
pub mod schema;
pub mod secret;
pub mod settings;
pub mod summary;

use std::path::{Path, PathBuf};

pub use check::web::closed_host;
pub use check::{declared_at_boot, namespace_grant};
pub use model::Config;
pub use problems::{KeyPath, Problem};
pub use resolved::{AgentLimits, ResolvedAgent};

use crate::tools::Registry;

/// A configuration that passed every check.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    pub path: PathBuf,
    /// The file as written, with every path made absolute.
    pub config: Config,
    pub agents: Vec<ResolvedAgent>,
    pub registry: Registry,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{path} has {} problem{}", problems.len(), if problems.len() == 1 { "" } else { "s" })]
    Invalid {
        path: PathBuf,
        problems: Vec<Problem>,
        /// True when the file's shape was wrong, so cross-reference checks
        /// have not run yet.
        structural: bool,
    },
}

impl LoadError {
    /// The error, then every problem on its own line: what `config check`
    /// prints and what a refused boot logs.
    pub fn report(&self) -> String {
        let mut out = format!("{self}\n");
        if let Self::Invalid {
            problems,
            structural,
            ..
        } = self
        {
            for problem in problems {
                out.push_str(&format!("  {problem}\n"));
            }
            if *structural {
                out.push_str("(cross-reference checks run once the file's shape is right)\n");
            }
        }
        out
    }
}

/// Reads and checks the file at `path`. Relative paths inside it are resolved
/// against the file's own directory.
pub fn load(path: &Path) -> Result<LoadedConfig, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let base = std::path::absolute(&base).unwrap_or(base);
    load_str(&text, path, &base)
}

/// Checks `text` as the file at `path` whose relative paths resolve against
/// `base`.
pub fn load_str(text: &str, path: &Path, base: &Path) -> Result<LoadedConfig, LoadError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| LoadError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let invalid = |problems: Vec<Problem>, structural: bool| LoadError::Invalid {
        path: path.to_path_buf(),
        problems,
        structural,
    };
    let instance = serde_json::to_value(&table)
        .map_err(|e| invalid(vec![Problem::new(KeyPath::root(), e.to_string())], true))?;
    let structural =
        schema::structural_problems(&schema::config_schema(), &instance, &KeyPath::root());
    if !structural.is_empty() {
        return Err(invalid(structural, true));
    }
    let mut config: Config = serde_json::from_value(instance)
        .map_err(|e| invalid(vec![Problem::new(KeyPath::root(), e.to_string())], true))?;
    absolutize(&mut config, base);
    let registry = Registry::framework();
    let agents = check::check(&config, &registry).map_err(|problems| invalid(problems, false))?;
    Ok(LoadedConfig {
        path: path.to_path_buf(),
        config,
        agents,
        registry,
    })
}

fn absolutize(config: &mut Config, base: &Path) {
    let deployment = &mut config.deployment;
    for dir in [
        &mut deployment.state_dir,
        &mut deployment.runtime_dir,
        &mut deployment.audit_dir,
        &mut deployment.resources_root,
        &mut deployment.app_root,
        &mut deployment.plugins_root,
        &mut deployment.workspaces_root,
        &mut deployment.homes_root,
    ] {
        *dir = paths::resolve(base, dir);
    }
    let mut secrets: Vec<&mut secret::Secret> = Vec::new();
    if let Some(s) = config.callbacks.trigger_secret.as_mut() {
        secrets.push(s);
    }
    if let Some(admin) = config.mattermost.admin.as_mut() {
        secrets.extend(admin.password.as_mut());
        secrets.extend(admin.token.as_mut());
    }
    for model in config.models.values_mut() {
        secrets.extend(model.api_key.as_mut());
    }
    for secret in secrets {
        if let Some(file) = secret.file.as_mut() {
            *file = paths::resolve(base, file);
        }
    }
}
