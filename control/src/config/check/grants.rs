//! Grants and settings are one mechanism (§3.4): an agent is granted
//! namespaces or single tools; its effective settings per toolset are the
//! deployment defaults merged shallowly with its own, parsed against the
//! toolset's schema; a ref-only tool is left out of a namespace grant until its
//! settings are present, and naming it by ref without them is refused.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::{Map, Value};

use crate::config::model::{Agent, Config};
use crate::config::problems::{KeyPath, Problem, Problems};
use crate::config::schema::structural_problems;
use crate::tools::names::{GrantName, parse_grant};
use crate::tools::{Registry, ToolDeclaration, ToolRef, ToolsetDeclaration, ToolsetKind};

/// What an agent's grants come to.
pub struct Granted {
    pub namespaces: Vec<String>,
    pub whole_namespaces: Vec<String>,
    pub tools: Vec<ToolRef>,
    pub settings: crate::config::settings::Settings,
}

pub fn resolve(
    config: &Config,
    agent: &Agent,
    path: &KeyPath,
    registry: &Registry,
    problems: &mut Problems,
) -> Granted {
    let plugins_root = &config.deployment.plugins_root;
    let mut named: Vec<(usize, GrantName)> = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, text) in agent.grants.iter().enumerate() {
        let grant_path = path.key("grants").index(i);
        if !seen.insert(text.as_str()) {
            problems.push(grant_path, format!("`{text}` is granted twice"));
            continue;
        }
        match parse_grant(text) {
            Err(error) => problems.push(grant_path, format!("the grant {error}")),
            Ok(grant) => match grant_problem(&grant, registry, plugins_root) {
                Some(message) => problems.push(grant_path, message),
                None => named.push((i, grant)),
            },
        }
    }

    let granted_namespaces: BTreeSet<String> = named
        .iter()
        .map(|(_, g)| match g {
            GrantName::Namespace(ns) => ns.clone(),
            GrantName::Tool(t) => t.namespace.clone(),
        })
        .collect();

    for namespace in agent.settings.keys() {
        if !granted_namespaces.contains(namespace) {
            problems.push(
                path.key("settings").key(namespace),
                format!("settings for `{namespace}`, which this agent is not granted (§3.4)"),
            );
        }
    }

    let mut settings = crate::config::settings::Settings::default();
    for namespace in &granted_namespaces {
        // Merged for a plugin too, whose schema arrives with its `Describe`:
        // boot checks them against it (`declared_at_boot`), and its calls
        // carry them (§3.4, §3.14).
        let merged = merged_settings(config, agent, namespace, path, problems);
        if let Some(toolset) = registry.toolset(namespace) {
            problems.extend(settings_problems(toolset, &merged, config, agent, path));
        }
        settings.insert(namespace.clone(), Value::Object(merged));
    }

    let mut tools = BTreeSet::new();
    for (i, grant) in &named {
        match grant {
            GrantName::Namespace(ns) => {
                if let Some(toolset) = registry.toolset(ns) {
                    tools.extend(namespace_grant(toolset, settings.get(ns)));
                }
            }
            GrantName::Tool(tool) => {
                if let Some(declared) = registry.tool(tool)
                    && let Some(refusal) =
                        ref_without_settings(tool, declared, settings.get(&tool.namespace))
                {
                    problems.push(path.key("grants").index(*i), refusal);
                    continue;
                }
                tools.insert(tool.clone());
            }
        }
    }

    let whole_namespaces = named
        .iter()
        .filter_map(|(_, g)| match g {
            GrantName::Namespace(ns) => Some(ns.clone()),
            GrantName::Tool(_) => None,
        })
        .collect();
    Granted {
        namespaces: granted_namespaces.into_iter().collect(),
        whole_namespaces,
        tools: tools.into_iter().collect(),
        settings,
    }
}

/// Why a well-formed grant names nothing grantable, if it does not.
fn grant_problem(grant: &GrantName, registry: &Registry, plugins_root: &Path) -> Option<String> {
    let (namespace, tool) = match grant {
        GrantName::Namespace(ns) => (ns.as_str(), None),
        GrantName::Tool(t) => (t.namespace.as_str(), Some(t.tool.as_str())),
    };
    match registry.toolset(namespace) {
        Some(toolset) if toolset.kind == ToolsetKind::Core => Some(format!(
            "`{}` is a core tool every agent already holds; naming it in config is an error (§3.4)",
            tool.map_or_else(|| namespace.to_string(), |t| format!("{namespace}::{t}"))
        )),
        Some(toolset) => tool.and_then(|t| {
            toolset.tool(t).is_none().then(|| {
                format!(
                    "the toolset `{namespace}` has no tool `{t}`; it has {}",
                    toolset
                        .tools
                        .iter()
                        .map(|d| format!("`{namespace}::{}`", d.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
        }),
        None if plugins_root.join(namespace).is_dir() => None,
        None => Some(format!(
            "no toolset `{namespace}`: it is not a framework toolset, and there is no plugin directory {}",
            plugins_root.join(namespace).display()
        )),
    }
}

/// The deployment's `[settings.NS]` with the agent's own merged over it,
/// shallowly (§3.4).
fn merged_settings(
    config: &Config,
    agent: &Agent,
    namespace: &str,
    path: &KeyPath,
    problems: &mut Problems,
) -> Map<String, Value> {
    let mut merged = match config.settings.get(namespace) {
        Some(Value::Object(defaults)) => defaults.clone(),
        _ => Map::new(),
    };
    match agent.settings.get(namespace) {
        Some(Value::Object(own)) => {
            for (key, value) in own {
                merged.insert(key.clone(), value.clone());
            }
        }
        Some(_) => problems.push(path.key("settings").key(namespace), "must be a table"),
        None => {}
    }
    merged
}

/// Problems with merged settings, each at the key that supplied the value, or
/// at the agent's own settings where a required key is missing.
fn settings_problems(
    toolset: &ToolsetDeclaration,
    merged: &Map<String, Value>,
    config: &Config,
    agent: &Agent,
    path: &KeyPath,
) -> Vec<Problem> {
    let namespace = &toolset.namespace;
    let own = path.key("settings").key(namespace);
    let defaults = KeyPath::root().key("settings").key(namespace);
    let from_agent = |key: &str| {
        agent
            .settings
            .get(namespace)
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key(key))
    };
    let from_defaults = |key: &str| {
        config
            .settings
            .get(namespace)
            .and_then(Value::as_object)
            .is_some_and(|o| o.contains_key(key))
    };
    let instance = Value::Object(merged.clone());
    structural_problems(&toolset.settings_schema, &instance, &own)
        .into_iter()
        .map(|mut problem| {
            // Re-root a problem whose top-level key came from the deployment
            // defaults, so the operator is sent to the line that set it.
            let relative = problem
                .path
                .as_str()
                .strip_prefix(own.as_str())
                .unwrap_or_default()
                .trim_start_matches('.')
                .to_string();
            let top = relative
                .split(['.', '['])
                .next()
                .unwrap_or_default()
                .to_string();
            if !top.is_empty() && !from_agent(&top) && from_defaults(&top) {
                problem.path = defaults.suffixed(&relative);
            }
            problem
        })
        .collect()
}

/// The tools a grant of `toolset`'s whole namespace covers under the
/// agent's effective `settings`: a tool that works only under certain
/// settings is left out until they are present (§3.4). The one rule for a
/// framework toolset at `config check` and for a plugin's, declared at boot.
pub fn namespace_grant<'a>(
    toolset: &'a ToolsetDeclaration,
    settings: Option<&'a Value>,
) -> impl Iterator<Item = ToolRef> + 'a {
    toolset
        .tools
        .iter()
        .filter(move |tool| missing_settings(&tool.requires_settings, settings).is_empty())
        .map(|tool| ToolRef::new(&toolset.namespace, &tool.name))
}

/// Why naming `tool` by ref is refused under these effective settings, if it
/// is: it works only under settings the agent does not have (§3.4).
fn ref_without_settings(
    tool: &ToolRef,
    declared: &ToolDeclaration,
    settings: Option<&Value>,
) -> Option<String> {
    let missing = missing_settings(&declared.requires_settings, settings);
    if missing.is_empty() {
        return None;
    }
    let quoted = |keys: &[&String]| {
        keys.iter()
            .map(|s| format!("`{s}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let required: Vec<&String> = declared.requires_settings.iter().collect();
    let absent = if missing.len() == required.len() {
        "none is given".to_string()
    } else {
        format!("{} is not given", quoted(&missing))
    };
    Some(format!(
        "`{tool}` works only with the setting{} {} under [agents.settings.{ns}] or [settings.{ns}], and {absent} (§3.4)",
        if required.len() == 1 { "" } else { "s" },
        quoted(&required),
        ns = tool.namespace,
    ))
}

/// The checks `resolve` makes of a framework toolset's settings and grants,
/// for a toolset declared only at boot by its own process (a plugin's
/// `Describe`, §3.14): every granted agent's effective settings against the
/// schema it declares, and every grant naming one of its tools by ref
/// without the settings that tool works under. Each problem beside the
/// username of the agent it concerns.
pub fn declared_at_boot(config: &Config, toolset: &ToolsetDeclaration) -> Vec<(String, Problem)> {
    let namespace = &toolset.namespace;
    let mut found = Vec::new();
    for (index, agent) in config.agents.iter().enumerate() {
        let path = KeyPath::root().key("agents").index(index);
        let grants: Vec<(usize, GrantName)> = agent
            .grants
            .iter()
            .enumerate()
            .filter_map(|(i, text)| parse_grant(text).ok().map(|g| (i, g)))
            .filter(|(_, grant)| match grant {
                GrantName::Namespace(ns) => ns == namespace,
                GrantName::Tool(tool) => tool.namespace == *namespace,
            })
            .collect();
        if grants.is_empty() {
            continue;
        }
        // A settings table that is not a table was refused when the file
        // was loaded; nothing of it is left to report here.
        let merged = merged_settings(config, agent, namespace, &path, &mut Problems::default());
        let mut problems = settings_problems(toolset, &merged, config, agent, &path);
        let merged = Value::Object(merged);
        for (i, grant) in &grants {
            if let GrantName::Tool(tool) = grant
                && let Some(declared) = toolset.tool(&tool.tool)
                && let Some(refusal) = ref_without_settings(tool, declared, Some(&merged))
            {
                problems.push(Problem::new(path.key("grants").index(*i), refusal));
            }
        }
        found.extend(problems.into_iter().map(|p| (agent.username.clone(), p)));
    }
    found
}

/// The keys of `required` the settings lack (an explicit null is absent).
fn missing_settings<'a>(required: &'a [String], settings: Option<&Value>) -> Vec<&'a String> {
    required
        .iter()
        .filter(|key| {
            settings
                .and_then(|s| s.get(key.as_str()))
                .is_none_or(Value::is_null)
        })
        .collect()
}
