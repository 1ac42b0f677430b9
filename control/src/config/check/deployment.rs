//! Deployment-wide checks: timezone, channels, callbacks, Mattermost, models,
//! limits and the deployment's toolset defaults.

use std::collections::BTreeSet;
use std::net::IpAddr;

use super::names::{CHANNEL_NAME_MAX, USERNAME_MAX, is_handle, is_http_url};
use crate::config::model::{Config, ProviderKind};
use crate::config::problems::{KeyPath, Problems};
use crate::config::secret::Secret;
use crate::tools::{Registry, ToolsetKind};

/// The output ceiling an anthropic model gets where none is configured; the
/// adapter sends the same.
const ANTHROPIC_DEFAULT_MAX_TOKENS: u32 = 8192;

pub fn check(config: &Config, registry: &Registry, problems: &mut Problems) {
    let root = KeyPath::root();
    let deployment = root.key("deployment");
    if config
        .deployment
        .operator_timezone
        .parse::<chrono_tz::Tz>()
        .is_err()
    {
        problems.push(
            deployment.key("operator_timezone"),
            format!(
                "`{}` is not an IANA timezone (for example `Europe/Berlin`)",
                config.deployment.operator_timezone
            ),
        );
    }
    if !config
        .channels
        .iter()
        .any(|c| c.name == config.deployment.main_channel)
    {
        problems.push(
            deployment.key("main_channel"),
            format!(
                "`{}` is not one of the channels declared under [[channels]]; boot notices need it (§7.3)",
                config.deployment.main_channel
            ),
        );
    }
    channels(config, problems);
    callbacks(config, problems);
    mattermost(config, problems);
    models(config, problems);
    limits(config, problems);
    toolset_defaults(config, registry, problems);
    plugin_tables(config, problems);
}

fn channels(config: &Config, problems: &mut Problems) {
    let mut seen = BTreeSet::new();
    for (i, channel) in config.channels.iter().enumerate() {
        let path = KeyPath::root().key("channels").index(i).key("name");
        if !is_handle(&channel.name, CHANNEL_NAME_MAX) {
            problems.push(
                path.clone(),
                format!(
                    "`{}` is not a channel name: lowercase letters, digits, `.`, `-` and `_`, starting with a letter, at most {CHANNEL_NAME_MAX}",
                    channel.name
                ),
            );
        }
        if !seen.insert(channel.name.as_str()) {
            problems.push(
                path,
                format!("the channel `{}` is declared twice", channel.name),
            );
        }
    }
}

/// §6.4: the callback port must not be publicly routable.
fn callbacks(config: &Config, problems: &mut Problems) {
    let path = KeyPath::root().key("callbacks");
    let ip = config.callbacks.bind.ip();
    if !is_loopback_or_private(ip) {
        problems.push(
            path.key("bind"),
            format!(
                "{ip} is neither a loopback nor a private address; bind the loopback or a private interface and let Mattermost reach it over that path (§6.4)"
            ),
        );
    }
    if !is_http_url(&config.callbacks.public_url) {
        problems.push(
            path.key("public_url"),
            format!("`{}` is not an http(s) URL", config.callbacks.public_url),
        );
    }
    if config.callbacks.trigger_outstanding_max == 0 {
        problems.push(
            path.key("trigger_outstanding_max"),
            "must be at least 1; to close the trigger route, leave `trigger_secret` unset (§6.4)",
        );
    }
    if let Some(secret) = &config.callbacks.trigger_secret {
        secret_source(secret, path.key("trigger_secret"), problems);
    }
}

fn is_loopback_or_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        // fc00::/7, the unique-local range, is IPv6's private space.
        IpAddr::V6(v6) => v6.is_loopback() || (v6.segments()[0] & 0xfe00) == 0xfc00,
    }
}

fn mattermost(config: &Config, problems: &mut Problems) {
    let path = KeyPath::root().key("mattermost");
    let mm = &config.mattermost;
    if !is_http_url(&mm.url) {
        problems.push(
            path.key("url"),
            format!("`{}` is not an http(s) URL", mm.url),
        );
    }
    if !is_handle(&mm.team, CHANNEL_NAME_MAX) {
        problems.push(
            path.key("team"),
            format!("`{}` is not a team name", mm.team),
        );
    }
    if !is_handle(&mm.system_bot.username, USERNAME_MAX) {
        problems.push(
            path.key("system_bot").key("username"),
            format!("`{}` is not a Mattermost username", mm.system_bot.username),
        );
    }
    if let Some(admin) = &mm.admin {
        let admin_path = path.key("admin");
        match (&admin.username, &admin.password, &admin.token) {
            (Some(_), Some(password), None) => {
                secret_source(password, admin_path.key("password"), problems);
            }
            (None, None, Some(token)) => secret_source(token, admin_path.key("token"), problems),
            _ => problems.push(
                admin_path,
                "give either `username` with `password`, or `token` alone",
            ),
        }
    }
}

fn models(config: &Config, problems: &mut Problems) {
    for (name, model) in &config.models {
        let path = KeyPath::root().key("models").key(name);
        if model.context_window.is_none() {
            problems.push(
                path.key("context_window"),
                "missing: a model cannot be offered without a recorded context window (§3.8)",
            );
        }
        if model.model.trim().is_empty() {
            problems.push(path.key("model"), "the provider's model name is empty");
        }
        if let Some(url) = &model.base_url
            && !is_http_url(url)
        {
            problems.push(
                path.key("base_url"),
                format!("`{url}` is not an http(s) URL"),
            );
        }
        // Anthropic's vocabulary for reasoning effort is a thinking budget in
        // tokens (§3.12): a word would be silently ignored, and a budget the
        // API refuses would refuse every completion.
        if model.provider == ProviderKind::Anthropic
            && let Some(effort) = &model.reasoning_effort
        {
            let ceiling = model
                .max_output_tokens
                .unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS);
            match effort.parse::<u32>() {
                Err(_) => problems.push(
                    path.key("reasoning_effort"),
                    format!(
                        "`{effort}` is not a thinking budget; for an anthropic model the reasoning effort is a number of tokens, such as \"4096\" (§3.12)"
                    ),
                ),
                Ok(budget) if budget < 1024 || budget >= ceiling => problems.push(
                    path.key("reasoning_effort"),
                    format!(
                        "a thinking budget of {budget} tokens must be at least 1024 and below the model's output ceiling of {ceiling} tokens (max_output_tokens), or the provider refuses every request"
                    ),
                ),
                Ok(_) => {}
            }
        }
        match &model.api_key {
            Some(key) => secret_source(key, path.key("api_key"), problems),
            None if model.provider != ProviderKind::OpenaiCompatible => problems.push(
                path.key("api_key"),
                format!(
                    "missing: the {} provider needs a key",
                    model.provider.as_str()
                ),
            ),
            None => {}
        }
    }
}

fn limits(config: &Config, problems: &mut Problems) {
    let path = KeyPath::root().key("limits");
    let limits = &config.limits;
    if limits.debounce_window_ms > limits.debounce_ceiling_ms {
        problems.push(
            path.key("debounce_ceiling_ms"),
            format!(
                "{} is below debounce_window_ms ({}); the ceiling bounds the window (§4.4)",
                limits.debounce_ceiling_ms, limits.debounce_window_ms
            ),
        );
    }
}

/// `[plugins.NS]`: how to run a plugin that is installed.
fn plugin_tables(config: &Config, problems: &mut Problems) {
    let mut users: std::collections::BTreeMap<&str, &str> = std::collections::BTreeMap::new();
    for (namespace, plugin) in &config.plugins {
        let dir = config.deployment.plugins_root.join(namespace);
        if !dir.is_dir() {
            problems.push(
                KeyPath::root().key("plugins").key(namespace),
                format!("there is no plugin directory {}", dir.display()),
            );
        }
        let Some(user) = plugin.user.as_deref() else {
            continue;
        };
        let path = KeyPath::root().key("plugins").key(namespace).key("user");
        if let Some(refusal) = plugin_user_refusal(user) {
            problems.push(path.clone(), refusal);
        }
        // A storage connection is bound to its plugin by its uid (§3.14),
        // and one user's processes cannot be told apart.
        if let Some(first) = users.insert(user, namespace) {
            problems.push(
                path,
                format!(
                    "`{user}` is also the user of the plugin `{first}`; give each plugin a user of its own"
                ),
            );
        }
    }
}

/// Why `user` cannot be a plugin's own: a plugin is trusted with its own
/// records only, and its user must hold nothing else (§3.14, §6.1).
fn plugin_user_refusal(user: &str) -> Option<String> {
    if user == "root" {
        return Some("a plugin never runs as root; name a user of its own".into());
    }
    if let Some((class, _)) = crate::host::WORKER_USERS
        .iter()
        .find(|(_, worker)| *worker == user)
    {
        return Some(format!(
            "`{user}` is the {class} worker's user, and a plugin under it would reach what that worker holds; name a user of the plugin's own"
        ));
    }
    if user.starts_with(crate::host::USER_PREFIX) {
        return Some(format!(
            "`{user}` is an agent's user (`{}NAME`), and a plugin under it would reach that agent's files; name a user of the plugin's own",
            crate::host::USER_PREFIX
        ));
    }
    None
}

/// `[settings.NS]`: deployment defaults for a toolset the registry knows.
fn toolset_defaults(config: &Config, registry: &Registry, problems: &mut Problems) {
    for (namespace, value) in &config.settings {
        let path = KeyPath::root().key("settings").key(namespace);
        match registry.toolset(namespace) {
            Some(toolset) if toolset.kind == ToolsetKind::Core => problems.push(
                path,
                format!("`{namespace}` is core framework machinery and takes no settings (§3.4)"),
            ),
            Some(_) => {}
            None if config.deployment.plugins_root.join(namespace).is_dir() => {}
            None => problems.push(
                path,
                format!("there is no toolset `{namespace}` to give settings to"),
            ),
        }
        if !value.is_object() {
            problems.push(
                KeyPath::root().key("settings").key(namespace),
                "must be a table",
            );
        }
    }
}

/// A secret names exactly one source; a file it names must exist where this
/// process can see that it does not. Another unit's systemd credential is
/// not looked for: it exists only while that unit runs, and only for it.
pub fn secret_source(secret: &Secret, path: KeyPath, problems: &mut Problems) {
    let own_credentials = std::env::var_os("CREDENTIALS_DIRECTORY").map(std::path::PathBuf::from);
    match secret.source() {
        Err(error) => problems.push(path, error.to_string()),
        Ok(crate::config::secret::SecretSource::File(file))
            if crate::config::secret::another_units_credential(
                file,
                own_credentials.as_deref(),
            ) => {}
        Ok(crate::config::secret::SecretSource::File(file)) => {
            // Only a definite absence is a problem: the file may be readable by
            // the process that needs it and not by whoever runs the check.
            if let Err(error) = std::fs::metadata(file)
                && error.kind() == std::io::ErrorKind::NotFound
            {
                problems.push(
                    path.key("file"),
                    format!("{} does not exist", file.display()),
                );
            }
        }
        Ok(_) => {}
    }
}
