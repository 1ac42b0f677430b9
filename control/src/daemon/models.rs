//! Boot verification of the models agents use (§7.3): one minimal completion
//! each, concurrently, before the daemon serves. A refused credential refuses
//! boot, naming the model and the agents it would strand; an answer that is
//! neither acceptance nor refusal is recorded as unverified, never verified.

use std::time::Duration;

use tracing::{info, warn};

use super::DaemonError;
use crate::config::LoadedConfig;
use crate::inference::verify::{Verification, verify};
use crate::inference::{Provider, ProviderConfig, RetryPolicy};

/// How long the boot check waits for each model.
pub const VERIFY_DEADLINE: Duration = Duration::from_secs(10);

pub async fn verify_models(loaded: &LoadedConfig) -> Result<(), DaemonError> {
    let mut checks = tokio::task::JoinSet::new();
    let mut used: Vec<&String> = loaded.agents.iter().map(|a| &a.model).collect();
    used.sort();
    used.dedup();
    for name in used {
        let Some(model) = loaded.config.models.get(name) else {
            continue;
        };
        let api_key = match &model.api_key {
            Some(secret) => Some(secret.reveal().map_err(|source| DaemonError::Secret {
                key: format!("models.{name}.api_key"),
                source,
            })?),
            None => None,
        };
        let policy = RetryPolicy {
            attempts: 1,
            ..RetryPolicy::default()
        };
        let provider = Provider::new(ProviderConfig::from_model(model, api_key), policy)
            .map_err(DaemonError::Http)?;
        let name = name.clone();
        checks.spawn(async move { (name, verify(&provider, VERIFY_DEADLINE).await) });
    }
    let mut refused = Vec::new();
    while let Some(joined) = checks.join_next().await {
        let (name, verification) = match joined {
            Ok(done) => done,
            Err(error) => {
                warn!(%error, "a model's boot check failed to run; that model is unverified");
                continue;
            }
        };
        match verification {
            Verification::Verified => info!(model = %name, "model verified"),
            Verification::Unverified(reason) => {
                warn!(model = %name, %reason, "model unverified at boot")
            }
            Verification::Unauthorized => {
                let stranded: Vec<&str> = loaded
                    .agents
                    .iter()
                    .filter(|a| a.model == name)
                    .map(|a| a.username.as_str())
                    .collect();
                refused.push(format!(
                    "model `{name}` refused its credential; it strands {}",
                    stranded.join(", ")
                ));
            }
        }
    }
    if refused.is_empty() {
        Ok(())
    } else {
        refused.sort();
        Err(DaemonError::ModelsRefused(refused.join("\n")))
    }
}
