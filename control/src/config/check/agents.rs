//! Per-agent checks (§3.1, §3.4, §3.5, §3.8, §3.13, §3.15, §4.2).

use std::collections::BTreeSet;

use serde_json::Value;

use super::deployment::secret_source;
use super::grants;
use super::is_beneath;
use super::names::{USERNAME_MAX, is_handle};
use crate::config::model::{Agent, Config, Schedule};
use crate::config::problems::{KeyPath, Problems};
use crate::config::resolved::{AgentLimits, ResolvedAgent, capitalised};
use crate::context::sizing::{default_context_budget, max_turn_ceiling};
use crate::skills;
use crate::tools::{Registry, ToolRef};
use crate::triggers::{Recurrence, RecurrenceError};

pub fn check(config: &Config, registry: &Registry, problems: &mut Problems) -> Vec<ResolvedAgent> {
    let mut usernames = BTreeSet::new();
    let mut resolved = Vec::new();
    for (i, agent) in config.agents.iter().enumerate() {
        let path = KeyPath::root().key("agents").index(i);
        identity(config, agent, &path, &mut usernames, problems);
        prompt(config, agent, &path, problems);
        let granted = grants::resolve(config, agent, &path, registry, problems);
        let limits = limits(config, agent, &path, problems);
        let mut holds: Vec<ToolRef> = granted.tools.clone();
        holds.extend(registry.core_tools());
        // A plugin's tools are known only once it has described itself, so
        // a whole plugin namespace granted here holds whatever it will serve;
        // the plugin's boot checks each skill's tools against what it does.
        let whole_plugins: Vec<&str> = granted
            .whole_namespaces
            .iter()
            .map(String::as_str)
            .filter(|namespace| registry.toolset(namespace).is_none())
            .collect();
        let held = |tool: &ToolRef| {
            holds.contains(tool) || whole_plugins.contains(&tool.namespace.as_str())
        };
        let skills = skills(config, agent, &path, registry, &held, problems);
        schedules(config, agent, &path, problems);
        mailbox(config, &granted.settings, &path, problems);
        shell_deadline(config, agent, &granted.settings, &path, problems);
        resolved.push(ResolvedAgent {
            username: agent.username.clone(),
            display_name: agent
                .display_name
                .clone()
                .unwrap_or_else(|| capitalised(&agent.username)),
            model: agent.model.clone(),
            limits,
            namespaces: granted.namespaces,
            whole_namespaces: granted.whole_namespaces,
            tools: granted.tools,
            skills,
            settings: granted.settings,
        });
    }
    colleagues(&resolved, problems);
    resolved
}

fn identity(
    config: &Config,
    agent: &Agent,
    path: &KeyPath,
    usernames: &mut BTreeSet<String>,
    problems: &mut Problems,
) {
    let key = path.key("username");
    if !is_handle(&agent.username, USERNAME_MAX) {
        problems.push(
            key.clone(),
            format!(
                "`{}` is not a Mattermost username: lowercase letters, digits, `.`, `-` and `_`, starting with a letter, at most {USERNAME_MAX}",
                agent.username
            ),
        );
    }
    if agent.username == config.mattermost.system_bot.username {
        problems.push(
            key.clone(),
            format!("`{}` is the system bot's username (§3.2)", agent.username),
        );
    }
    if !usernames.insert(agent.username.clone()) {
        problems.push(
            key,
            format!(
                "two agents have the username `{}`; each agent is one bot account (§3.1)",
                agent.username
            ),
        );
    }
    if !config.models.contains_key(&agent.model) {
        problems.push(
            path.key("model"),
            format!("`{}` is not a model declared under [models]", agent.model),
        );
    }
}

/// §3.1: the prompt is inline or a markdown file beneath the resources root.
fn prompt(config: &Config, agent: &Agent, path: &KeyPath, problems: &mut Problems) {
    match (&agent.prompt, &agent.prompt_file) {
        (Some(text), None) => {
            if text.trim().is_empty() {
                problems.push(path.key("prompt"), "the prompt is empty");
            }
        }
        (None, Some(file)) => {
            let key = path.key("prompt_file");
            let root = &config.deployment.resources_root;
            let full = root.join(file);
            if file.is_absolute() || !is_beneath(&full, root) {
                problems.push(
                    key,
                    format!(
                        "{} must be a relative path beneath the resources root {} (§3.1)",
                        file.display(),
                        root.display()
                    ),
                );
                return;
            }
            match std::fs::read_to_string(&full) {
                Ok(text) if text.trim().is_empty() => {
                    problems.push(key, format!("{} is empty", full.display()));
                }
                Ok(_) => {}
                Err(error) => problems.push(key, format!("cannot read {}: {error}", full.display())),
            }
        }
        (Some(_), Some(_)) => problems.push(
            path.key("prompt"),
            "give the prompt inline or as `prompt_file`, not both",
        ),
        (None, None) => problems.push(
            path.key("prompt"),
            "missing: give the prompt inline, or as `prompt_file` beneath the resources root (§3.1)",
        ),
    }
}

fn limits(config: &Config, agent: &Agent, path: &KeyPath, problems: &mut Problems) -> AgentLimits {
    let deployment = &config.limits;
    let limits_path = KeyPath::root().key("limits");
    let (ceiling, ceiling_key) = match agent.turn_ceiling_tokens {
        Some(c) => (c, path.key("turn_ceiling_tokens")),
        None => (
            deployment.turn_ceiling_tokens,
            limits_path.key("turn_ceiling_tokens"),
        ),
    };
    let (budget, budget_key) = match (
        agent.context_budget_tokens,
        deployment.context_budget_tokens,
    ) {
        (Some(b), _) => (b, Some(path.key("context_budget_tokens"))),
        (None, Some(b)) => (b, Some(limits_path.key("context_budget_tokens"))),
        (None, None) => (default_context_budget(ceiling), None),
    };
    if let Some(key) = budget_key
        && budget >= ceiling
    {
        problems.push(
            key,
            format!(
                "the context budget ({budget} tokens) is not below the turn ceiling ({ceiling} tokens at {ceiling_key}); a window that filled it would leave the turn no room to start (§3.8)"
            ),
        );
    }
    if let Some(window) = config
        .models
        .get(&agent.model)
        .and_then(|m| m.context_window)
    {
        let max = max_turn_ceiling(window);
        if ceiling > max {
            problems.push(
                ceiling_key,
                format!(
                    "the turn ceiling ({ceiling} tokens) is more than {max} tokens, the share of model `{}`'s {window}-token window a turn may claim (§3.8)",
                    agent.model
                ),
            );
        }
    }
    for (value, key) in [
        (agent.action_budget, "action_budget"),
        (
            agent.completion_time_limit_secs,
            "completion_time_limit_secs",
        ),
        (agent.turn_ceiling_tokens, "turn_ceiling_tokens"),
        (agent.context_budget_tokens, "context_budget_tokens"),
    ] {
        if value == Some(0) {
            problems.push(path.key(key), "must be at least 1");
        }
    }
    AgentLimits {
        action_budget: agent.action_budget.unwrap_or(deployment.action_budget),
        context_budget_tokens: budget,
        turn_ceiling_tokens: ceiling,
        completion_time_limit_secs: agent
            .completion_time_limit_secs
            .unwrap_or(deployment.completion_time_limit_secs),
    }
}

/// §3.5: a skill must exist and parse, and the agent must hold every tool it
/// declares.
fn skills(
    config: &Config,
    agent: &Agent,
    path: &KeyPath,
    registry: &Registry,
    held: &dyn Fn(&ToolRef) -> bool,
    problems: &mut Problems,
) -> Vec<skills::Skill> {
    let mut found = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, name) in agent.skills.iter().enumerate() {
        let key = path.key("skills").index(i);
        if !seen.insert(name.as_str()) {
            problems.push(key, format!("`{name}` is named twice"));
            continue;
        }
        match skills::locate(
            name,
            registry,
            &config.deployment.resources_root,
            &config.deployment.plugins_root,
        ) {
            Err(error) => problems.push(key, error.to_string()),
            Ok(skill) => {
                let missing: Vec<String> = skill
                    .tools
                    .iter()
                    .filter(|t| !held(t))
                    .map(|t| format!("`{t}`"))
                    .collect();
                if missing.is_empty() {
                    found.push(skill);
                } else {
                    problems.push(
                        key,
                        format!(
                            "the skill `{name}` calls {}, which this agent is not granted (§3.5)",
                            missing.join(", ")
                        ),
                    );
                }
            }
        }
    }
    found
}

/// §4.2: a schedule's recurrence and timezone parse, and it names a channel.
fn schedules(config: &Config, agent: &Agent, path: &KeyPath, problems: &mut Problems) {
    let mut names = BTreeSet::new();
    for (i, schedule) in agent.schedules.iter().enumerate() {
        let key = path.key("schedules").index(i);
        if schedule.name.trim().is_empty() {
            problems.push(key.key("name"), "the schedule's name is empty");
        } else if !names.insert(schedule.name.as_str()) {
            problems.push(
                key.key("name"),
                format!("this agent has two schedules named `{}`", schedule.name),
            );
        }
        recurrence(config, schedule, &key, problems);
        if !config.channels.iter().any(|c| c.name == schedule.channel) {
            problems.push(
                key.key("channel"),
                format!(
                    "`{}` is not a channel declared under [[channels]]; a schedule announces in a channel, never a DM (§4.2)",
                    schedule.channel
                ),
            );
        }
        if schedule.text.trim().is_empty() {
            problems.push(key.key("text"), "the announcement text is empty");
        }
    }
}

/// §4.2: the recurrence is five cron fields that some date matches, read in
/// the schedule's IANA timezone or, unset, the operator's. An operator
/// timezone that does not parse is refused at `deployment.operator_timezone`
/// alone; the expression is then still checked, read in UTC.
fn recurrence(config: &Config, schedule: &Schedule, key: &KeyPath, problems: &mut Problems) {
    let timezone = schedule
        .timezone
        .as_deref()
        .unwrap_or(&config.deployment.operator_timezone);
    let expression = match Recurrence::parse(&schedule.recurrence, timezone) {
        Ok(_) => return,
        Err(error @ RecurrenceError::Timezone { .. }) => {
            if schedule.timezone.is_some() {
                problems.push(key.key("timezone"), error.to_string());
            }
            Recurrence::parse(&schedule.recurrence, "UTC").err()
        }
        Err(error) => Some(error),
    };
    if let Some(error) = expression {
        problems.push(key.key("recurrence"), error.to_string());
    }
}

/// §3.13: the mailbox's credentials are well-formed and it announces in a
/// declared channel. Whether mail is granted without a mailbox, or a mailbox is
/// partial, is the mail settings schema's to say.
fn mailbox(
    config: &Config,
    settings: &std::collections::BTreeMap<String, Value>,
    path: &KeyPath,
    problems: &mut Problems,
) {
    let Some(mailbox) = settings.get("mail").and_then(|m| m.get("mailbox")) else {
        return;
    };
    let key = path.key("settings").key("mail").key("mailbox");
    if let Some(channel) = mailbox.get("announce_channel").and_then(Value::as_str)
        && !config.channels.iter().any(|c| c.name == channel)
    {
        problems.push(
            key.key("announce_channel"),
            format!(
                "`{channel}` is not a channel declared under [[channels]]; mail is announced in a channel, never a DM (§3.13)"
            ),
        );
    }
    for server in ["imap", "smtp"] {
        if let Some(password) = mailbox.get(server).and_then(|s| s.get("password"))
            && let Ok(secret) =
                serde_json::from_value::<crate::config::secret::Secret>(password.clone())
        {
            let at = key.key(server).key("password");
            // The mail worker is the only process that reads a mailbox
            // password (§3.13): an inline value or an environment variable
            // would be the daemon's to read too. The file is never read
            // here, only checked to exist.
            match secret.source() {
                Ok(crate::config::secret::SecretSource::Inline) => problems.push(
                    at,
                    "a mailbox password is read by the mail worker alone, never inline in the configuration the daemon reads: use `password = { file = \"...\" }`, a file only the mail worker's user can read (§3.13)".to_string(),
                ),
                Ok(crate::config::secret::SecretSource::Env(var)) => problems.push(
                    at,
                    format!("a mailbox password is read by the mail worker alone, never from an environment variable (`{var}`) the daemon could read: use `password = {{ file = \"...\" }}` (§3.13)"),
                ),
                _ => secret_source(&secret, at, problems),
            }
        }
    }
}

/// §3.4, §7.1: an agent's own shell deadline must leave the worker time to
/// stop the command and answer before the daemon gives up on the call;
/// otherwise the daemon's deadline, not the one configured, would decide.
fn shell_deadline(
    config: &Config,
    agent: &Agent,
    settings: &std::collections::BTreeMap<String, Value>,
    path: &KeyPath,
    problems: &mut Problems,
) {
    let Some(deadline) = settings
        .get("shell")
        .and_then(|s| s.get("deadline_secs"))
        .and_then(Value::as_u64)
    else {
        return;
    };
    let margin = collegium_worker_kit::deadline::STOP_MARGIN.as_secs();
    let daemon = u64::from(config.limits.tool_call_deadline_secs);
    let room = daemon.saturating_sub(margin);
    if deadline > room {
        let own = agent
            .settings
            .get("shell")
            .and_then(|s| s.get("deadline_secs"))
            .is_some();
        let key = if own {
            path.key("settings").key("shell").key("deadline_secs")
        } else {
            KeyPath::root()
                .key("settings")
                .key("shell")
                .key("deadline_secs")
        };
        problems.push(
            key,
            format!(
                "a command deadline of {deadline} s does not fit under limits.tool_call_deadline_secs ({daemon} s): the worker keeps {margin} s to stop a command and answer, so at most {room} s"
            ),
        );
    }
}

/// §3.15: a declared colleague is another configured agent that holds
/// `tasks::report`.
fn colleagues(agents: &[ResolvedAgent], problems: &mut Problems) {
    let report = ToolRef::new("tasks", "report");
    for (i, agent) in agents.iter().enumerate() {
        let Some(list) = agent
            .settings
            .get("tasks")
            .and_then(|t| t.get("colleagues"))
            .and_then(Value::as_array)
        else {
            continue;
        };
        for (j, name) in list.iter().filter_map(Value::as_str).enumerate() {
            let key = KeyPath::root()
                .key("agents")
                .index(i)
                .key("settings")
                .key("tasks")
                .key("colleagues")
                .index(j);
            let name = name.trim_start_matches('@');
            if name == agent.username {
                problems.push(key, format!("`{name}` is this agent itself; an agent never assigns itself a unit (§3.15)"));
            } else {
                match agents.iter().find(|a| a.username == name) {
                    None => problems.push(key, format!("`{name}` is not a configured agent (§3.15)")),
                    Some(colleague) if !colleague.holds(&report) => problems.push(
                        key,
                        format!(
                            "`{name}` holds no `tasks::report`, so it could never report back (§3.15)"
                        ),
                    ),
                    Some(_) => {}
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::{LoadError, load_str};

    /// The problems `config check` reports at the agent's one schedule.
    fn schedule_problems(recurrence: &str, timezone: Option<&str>) -> Vec<String> {
        let timezone = timezone
            .map(|tz| format!("timezone = \"{tz}\"\n"))
            .unwrap_or_default();
        let text = format!(
            r#"
[deployment]
operator_timezone = "Europe/Berlin"
main_channel = "town-square"

[mattermost]
url = "http://127.0.0.1:8065"
team = "collegium"

[models.sim]
provider = "openai-compatible"
model = "demo"

[[channels]]
name = "town-square"

[[agents]]
username = "mira"
prompt = "You research."
model = "sim"
grants = []

[[agents.schedules]]
name = "daily"
recurrence = "{recurrence}"
{timezone}channel = "town-square"
text = "Report."
"#
        );
        // Schedules are still refused as not acted on, so the file never
        // passes; only the schedule's own problems are of interest here.
        match load_str(&text, Path::new("collegium.toml"), Path::new("/")) {
            Err(LoadError::Invalid { problems, .. }) => problems
                .iter()
                .filter(|p| p.path.as_str().starts_with("agents[0].schedules[0]"))
                .map(ToString::to_string)
                .collect(),
            Ok(_) => panic!("a schedule passed while schedules are not acted on"),
            Err(other) => panic!("{other}"),
        }
    }

    /// §3.11: the roster lists a peer's granted toolsets by namespace — a
    /// single tool's grant by its namespace, never the tool — and no core
    /// namespace, which every agent holds; a skill assigned adds none.
    #[test]
    fn s3_11_a_peer_is_listed_by_granted_namespace_with_core_ones_left_out() {
        let root = tempfile::tempdir().expect("tempdir");
        let skill = root.path().join("skills/briefing");
        std::fs::create_dir_all(&skill).expect("mkdir");
        std::fs::write(
            skill.join("SKILL.md"),
            "---\ndescription: Write a brief.\ntools: [workspace::write]\n---\nWrite it.\n",
        )
        .expect("write");
        let text = r#"
[deployment]
operator_timezone = "Europe/Berlin"
main_channel = "town-square"
resources_root = "."

[mattermost]
url = "http://127.0.0.1:8065"
team = "collegium"

[models.sim]
provider = "openai-compatible"
model = "demo"
context_window = 128000

[[channels]]
name = "town-square"

[[agents]]
username = "mira"
prompt = "You research."
model = "sim"
grants = ["workspace", "ask::human"]
skills = ["briefing"]
"#;
        let loaded = match load_str(text, &root.path().join("collegium.toml"), root.path()) {
            Ok(loaded) => loaded,
            Err(LoadError::Invalid { problems, .. }) => panic!("{problems:#?}"),
            Err(other) => panic!("{other}"),
        };
        let mira = &loaded.agents[0];
        assert_eq!(mira.namespaces, vec!["ask", "workspace"]);
        let skills: Vec<&str> = mira.skills.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(skills, vec!["briefing"]);
    }

    #[test]
    fn s4_2_check_accepts_a_good_recurrence() {
        assert_eq!(
            schedule_problems("0 9 L * *", Some("America/New_York")),
            Vec::<String>::new()
        );
        assert_eq!(
            schedule_problems("*/15 9-17 * JAN-MAR 1-5", None),
            Vec::<String>::new()
        );
    }

    #[test]
    fn s4_2_check_names_the_recurrence_for_a_bad_expression() {
        assert_eq!(
            schedule_problems("0 9 * *", None),
            vec![
                "agents[0].schedules[0].recurrence: `0 9 * *` has 4 fields; a recurrence is a five-field cron expression (minute hour day-of-month month day-of-week), with no seconds or year field"
            ]
        );
        let problems = schedule_problems("0 9 * * 8", Some("Europe/Berlin"));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(
                "agents[0].schedules[0].recurrence: `0 9 * * 8` does not parse as cron: "
            ),
            "{problems:?}"
        );
    }

    #[test]
    fn s4_2_check_names_the_timezone_for_a_bad_timezone() {
        assert_eq!(
            schedule_problems("0 9 * * *", Some("Europe/Atlantis")),
            vec![
                "agents[0].schedules[0].timezone: `Europe/Atlantis` is not an IANA timezone (for example `Europe/Berlin`)"
            ]
        );
        // A bad expression in a bad timezone: both, each at its key.
        let problems = schedule_problems("0 9 30 2 *", Some("Europe/Atlantis"));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("agents[0].schedules[0].timezone: "));
        assert!(problems[1].starts_with(
            "agents[0].schedules[0].recurrence: `0 9 30 2 *` matches no date in any year"
        ));
    }
}
