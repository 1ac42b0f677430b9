//! The boot phase that seats each agent (§3.1, §3.4, §3.8): its own
//! Mattermost session, its model's provider, the tools it is offered, and
//! its system prompt, rendered once so the provider's prefix cache holds it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::DaemonError;
use super::runtime::Boot;
use crate::chat::Rest;
use crate::chat::credentials::Account;
use crate::config::LoadedConfig;
use crate::config::model::Personality;
use crate::config::resolved::ResolvedAgent;
use crate::context::prompt::{PromptFacts, system_prompt};
use crate::inference::{Provider, ProviderConfig, RetryPolicy, ToolSpec};
use crate::services::Seat;
use crate::tools::arguments::provider_schema;
use crate::tools::{Registry, ToolRef};
use crate::workers::dispatch::Worker;

/// The account held for `username`, or the refusal that names the fix.
pub fn account<'a>(boot: &'a Boot<'_>, username: &str) -> Result<&'a Account, DaemonError> {
    boot.credentials
        .accounts
        .get(username)
        .ok_or_else(|| DaemonError::MattermostNotReady {
            problems: format!("there is no token for @{username}"),
            fix: format!(
                "collegium-provision mattermost --config {}",
                boot.loaded.path.display()
            ),
        })
}

/// A seat for every configured agent, by username, each offered the tools
/// the grant check settled (`grants.rs`).
pub fn seats(boot: &Boot<'_>, base: &Rest) -> Result<BTreeMap<String, Seat>, DaemonError> {
    let mut seats = BTreeMap::new();
    for agent in &boot.loaded.agents {
        let tools = boot
            .offered
            .get(&agent.username)
            .cloned()
            .unwrap_or_default();
        seats.insert(agent.username.clone(), seat(boot, base, agent, tools)?);
    }
    Ok(seats)
}

fn seat(
    boot: &Boot<'_>,
    base: &Rest,
    agent: &ResolvedAgent,
    tools: Vec<ToolRef>,
) -> Result<Seat, DaemonError> {
    let config = &boot.loaded.config;
    let held = account(boot, &agent.username)?;
    let declared = config.agents.iter().find(|a| a.username == agent.username);
    let own_prompt = own_prompt(boot.loaded, &agent.username)?;
    let prompt = system_prompt(&PromptFacts {
        agent,
        offered: &tools,
        own_prompt: &own_prompt,
        personality: declared
            .and_then(|a| a.personality)
            .unwrap_or(Personality::Collegial),
        limits: &config.limits,
        operator_timezone: &config.deployment.operator_timezone,
        workspaces_root: &config.deployment.workspaces_root,
        homes_root: &config.deployment.homes_root,
        shell_commands: &shell_commands(&boot.workers, &agent.username),
        display_names: &boot
            .loaded
            .agents
            .iter()
            .map(|a| (a.username.clone(), a.display_name.clone()))
            .collect(),
    });
    Ok(Seat {
        agent: agent.clone(),
        expertise: declared.map(|a| a.expertise.clone()).unwrap_or_default(),
        user_id: held.user_id.clone(),
        rest: base.with_token(held.token.expose()),
        provider: provider(boot.loaded, agent)?,
        system_prompt: prompt,
        tools: tool_specs(&tools, boot.registry),
        held: tools,
    })
}

/// The agent's model provider, with its key read from where the
/// configuration says.
fn provider(loaded: &LoadedConfig, agent: &ResolvedAgent) -> Result<Provider, DaemonError> {
    let model = loaded.config.models.get(&agent.model).ok_or_else(|| {
        DaemonError::ModelsRefused(format!(
            "no model `{}` for @{}",
            agent.model, agent.username
        ))
    })?;
    let api_key = match &model.api_key {
        Some(secret) => Some(secret.reveal().map_err(|source| DaemonError::Secret {
            key: format!("models.{}.api_key", agent.model),
            source,
        })?),
        None => None,
    };
    Provider::new(
        ProviderConfig::from_model(model, api_key),
        RetryPolicy::default(),
    )
    .map_err(DaemonError::Http)
}

/// The agent's prompt: inline, or its file beneath the resources root.
fn own_prompt(loaded: &LoadedConfig, username: &str) -> Result<String, DaemonError> {
    let Some(agent) = loaded.config.agents.iter().find(|a| a.username == username) else {
        return Ok(String::new());
    };
    if let Some(prompt) = &agent.prompt {
        return Ok(prompt.clone());
    }
    let Some(file) = &agent.prompt_file else {
        return Ok(String::new());
    };
    let path = loaded.config.deployment.resources_root.join(file);
    std::fs::read_to_string(&path).map_err(|source| DaemonError::Prompt {
        agent: username.to_string(),
        path,
        source,
    })
}

/// The commands the shell worker found for `agent`'s user at its start.
fn shell_commands(workers: &BTreeMap<String, Arc<Worker>>, agent: &str) -> Vec<String> {
    workers
        .get("shell")
        .and_then(|w| {
            w.described()
                .agent_commands
                .iter()
                .find(|c| c.agent == agent)
                .map(|c| c.available.clone())
        })
        .unwrap_or_default()
}

/// The tools as the model sees them, size bounds left out (§7.2).
fn tool_specs(tools: &[ToolRef], registry: &Registry) -> Vec<ToolSpec> {
    tools
        .iter()
        .filter_map(|tool| {
            let declared = registry.tool(tool)?;
            let schema = declared
                .parameters
                .clone()
                .unwrap_or_else(|| serde_json::json!({"type": "object"}));
            Some(ToolSpec {
                name: tool.model_form(),
                description: declared.description.clone(),
                parameters: provider_schema(&schema),
            })
        })
        .collect()
}
