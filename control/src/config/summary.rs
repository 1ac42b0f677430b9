//! The one-screen summary `collegium config check` prints for a valid file:
//! agents, models, channels, what each agent is granted, and which tools stop
//! for a person. Secrets are shown by where they come from, never by value.

use std::fmt::Write;

use super::LoadedConfig;
use super::model::{ChannelType, Triggering};
use crate::tools::Gate;

/// The deployment's least-privilege line (issue 21 item 5, §6.1): the
/// roots no agent's user may traverse, and whether the daemon may run as
/// root.
fn privilege_line(d: &super::model::Deployment) -> String {
    let root = if d.allow_root {
        "runs as root: allowed (deployment.allow_root)"
    } else {
        "runs as root: refused"
    };
    format!(
        "privilege: app root {} · plugins root {} closed to agents' users · {root}",
        d.app_root.display(),
        d.plugins_root.display()
    )
}

pub fn render(loaded: &LoadedConfig) -> String {
    let config = &loaded.config;
    let mut out = String::new();
    let d = &config.deployment;
    // Writing to a String cannot fail.
    let _ = writeln!(out, "{}: valid", loaded.path.display());
    let _ = writeln!(
        out,
        "deployment: timezone {} · main channel {} · state {} · callbacks on {}",
        d.operator_timezone,
        d.main_channel,
        d.state_dir.display(),
        config.callbacks.bind
    );
    let _ = writeln!(out, "{}", privilege_line(d));
    let _ = writeln!(
        out,
        "mattermost: {} team {} · system bot {}",
        config.mattermost.url, config.mattermost.team, config.mattermost.system_bot.username
    );

    let _ = writeln!(out, "models ({}):", config.models.len());
    for (name, model) in &config.models {
        let key = model
            .api_key
            .as_ref()
            .map_or_else(|| "no key".to_string(), |k| format!("key {k}"));
        let _ = writeln!(
            out,
            "  {name}: {} {} · window {} tokens · {key}",
            model.provider.as_str(),
            model.model,
            model.context_window.unwrap_or_default()
        );
    }

    let _ = writeln!(out, "channels ({}):", config.channels.len());
    for channel in &config.channels {
        let kind = match channel.kind {
            ChannelType::Public => "public",
            ChannelType::Private => "private",
        };
        let triggering = match channel.triggering {
            Triggering::MentionRequired => "mention-required",
            Triggering::RespondToAll => "respond-to-all",
        };
        let _ = writeln!(out, "  {}: {kind}, {triggering}", channel.name);
    }

    let _ = writeln!(out, "agents ({}):", loaded.agents.len());
    let mut gated = Vec::new();
    for agent in &loaded.agents {
        let l = &agent.limits;
        let _ = writeln!(
            out,
            "  @{} ({}) · model {} · {} actions · context {}/{} tokens · completions up to {}s",
            agent.username,
            agent.display_name,
            agent.model,
            l.action_budget,
            l.context_budget_tokens,
            l.turn_ceiling_tokens,
            l.completion_time_limit_secs
        );
        let mut by_namespace: Vec<(String, Vec<String>)> = Vec::new();
        for tool in &agent.tools {
            let gate = loaded.registry.tool(tool).map_or(Gate::None, |t| t.gate);
            let mark = match gate {
                Gate::None => "",
                Gate::Approval => {
                    gated.push(format!("{tool} (approval)"));
                    "*"
                }
                Gate::Ask => {
                    gated.push(format!("{tool} (asks a person)"));
                    "?"
                }
            };
            let name = format!("{}{mark}", tool.tool);
            match by_namespace.last_mut() {
                Some((ns, names)) if *ns == tool.namespace => names.push(name),
                _ => by_namespace.push((tool.namespace.clone(), vec![name])),
            }
        }
        let mut groups: Vec<String> = by_namespace
            .into_iter()
            .map(|(ns, names)| format!("{ns} ({})", names.join(", ")))
            .collect();
        groups.extend(
            agent
                .namespaces
                .iter()
                .filter(|ns| loaded.registry.toolset(ns).is_none())
                .map(|ns| format!("{ns} (plugin; its tools are declared at boot)")),
        );
        let grants = if groups.is_empty() {
            "core tools only".to_string()
        } else {
            groups.join(" · ")
        };
        let _ = writeln!(out, "    grants: {grants}");
        if !agent.skills.is_empty() {
            let names: Vec<&str> = agent.skills.iter().map(|s| s.name.as_str()).collect();
            let _ = writeln!(out, "    skills: {}", names.join(", "));
        }
    }
    let source = config
        .agents
        .iter()
        .flat_map(|a| a.schedules.iter().map(move |s| (a, s)));
    for (agent, schedule) in source {
        let _ = writeln!(
            out,
            "  schedule @{} {}: `{}` in {} ({})",
            agent.username,
            schedule.name,
            schedule.recurrence,
            schedule.channel,
            schedule.timezone.as_deref().unwrap_or(&d.operator_timezone)
        );
    }
    gated.sort();
    gated.dedup();
    if gated.is_empty() {
        let _ = writeln!(out, "no granted tool stops for a person");
    } else {
        let _ = writeln!(
            out,
            "stop for a person on every call (* approval, ? ask): {}",
            gated.join(", ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment(allow_root: bool) -> super::super::model::Deployment {
        let mut d: super::super::model::Deployment = serde_json::from_value(serde_json::json!({
            "operator_timezone": "UTC",
            "main_channel": "town-square",
        }))
        .expect("a deployment");
        d.allow_root = allow_root;
        d
    }

    #[test]
    fn a21_the_summary_says_the_app_root_and_whether_root_is_allowed() {
        assert_eq!(
            privilege_line(&deployment(false)),
            "privilege: app root /usr/lib/collegium · plugins root /usr/lib/collegium/plugins closed to agents' users · runs as root: refused"
        );
        assert!(
            privilege_line(&deployment(true))
                .ends_with("runs as root: allowed (deployment.allow_root)")
        );
    }
}
