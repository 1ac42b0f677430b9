//! Boot checks against Mattermost (§3.1, §8.4). Boot only checks; the
//! provisioner converges. Every configured account's token must authenticate
//! as that account, the `/collegium` command must exist with this daemon's
//! callback URL and the token it holds, and every configured channel must
//! exist. Anything missing refuses boot, naming it and the command that
//! fixes it: a daemon that starts without its stop switch is worse than one
//! that does not start.

use tracing::info;

use super::DaemonError;
use crate::chat::credentials::{self, Credentials, CredentialsError};
use crate::chat::{Rest, RestError};
use crate::commands;
use crate::config::LoadedConfig;
use crate::config::model::Triggering;

/// Returns the credentials it checked, for the runtime to use.
pub async fn check(loaded: &LoadedConfig) -> Result<Credentials, DaemonError> {
    let config = &loaded.config;
    let fix = format!(
        "collegium-provision mattermost --config {}",
        loaded.path.display()
    );
    let refuse = |problems: Vec<String>| DaemonError::MattermostNotReady {
        problems: problems.join("\n  - "),
        fix: fix.clone(),
    };
    let file = credentials::path(&config.deployment.state_dir);
    let held = match credentials::load(&file) {
        Ok(held) => held,
        Err(CredentialsError::Missing { path }) => {
            return Err(refuse(vec![format!(
                "there are no bot tokens: {} does not exist",
                path.display()
            )]));
        }
        Err(error) => return Err(refuse(vec![error.to_string()])),
    };
    let rest = Rest::new(&config.mattermost.url).map_err(DaemonError::Http)?;
    let mut problems = Vec::new();
    let mut crowded = Vec::new();
    let agents: Vec<&str> = loaded.agents.iter().map(|a| a.username.as_str()).collect();
    let system_bot = &config.mattermost.system_bot.username;
    let accounts = loaded
        .agents
        .iter()
        .map(|a| a.username.as_str())
        .chain(std::iter::once(system_bot.as_str()));
    for username in accounts {
        if let Some(problem) = authenticates(&rest, &held, username)
            .await
            .map_err(unreachable)?
        {
            problems.push(problem);
        }
    }
    let bot = held
        .accounts
        .get(system_bot)
        .map(|a| rest.with_token(a.token.expose()));
    match &bot {
        Some(bot) if problems.is_empty() => {
            problems.extend(
                command(bot, &held, &config.callbacks.public_url)
                    .await
                    .map_err(unreachable)?,
            );
            for channel in &config.channels {
                match bot
                    .channel_by_name(&held.team_id, &channel.name)
                    .await
                    .map_err(unreachable)?
                {
                    Some(found) if found.delete_at == 0 => {
                        if channel.triggering == Triggering::RespondToAll {
                            crowded.extend(
                                agents_present(bot, &held, &agents, &found.id, &channel.name)
                                    .await
                                    .map_err(unreachable)?,
                            );
                        }
                    }
                    Some(_) => problems.push(format!(
                        "the channel ~{} is archived; provisioning restores it",
                        channel.name
                    )),
                    None => problems.push(format!("the channel ~{} does not exist", channel.name)),
                }
            }
        }
        _ => {}
    }
    if problems.is_empty() && !crowded.is_empty() {
        return Err(DaemonError::RespondToAllShared(crowded.join("\n  - ")));
    }
    if problems.is_empty() {
        info!(
            accounts = held.accounts.len(),
            channels = config.channels.len(),
            "Mattermost is provisioned for this configuration"
        );
        Ok(held)
    } else {
        Err(refuse(problems))
    }
}

/// A respond-to-all channel holding two or more of `agents`, as a problem
/// line; none when it holds at most one (§3.10). Membership is Mattermost's,
/// read through the system bot, which is in every configured channel.
async fn agents_present(
    bot: &Rest,
    held: &Credentials,
    agents: &[&str],
    channel_id: &str,
    channel_name: &str,
) -> Result<Option<String>, RestError> {
    let mut present = Vec::new();
    for agent in agents {
        let Some(account) = held.accounts.get(*agent) else {
            continue;
        };
        if bot
            .channel_member(channel_id, &account.user_id)
            .await?
            .is_some()
        {
            present.push((*agent).to_string());
        }
    }
    Ok(crate::activation::crowding(channel_name, &present))
}

fn unreachable(error: RestError) -> DaemonError {
    DaemonError::MattermostUnreachable(error.to_string())
}

/// Whether the held token authenticates as `username`; a problem if not.
async fn authenticates(
    rest: &Rest,
    held: &Credentials,
    username: &str,
) -> Result<Option<String>, RestError> {
    let Some(account) = held.accounts.get(username) else {
        return Ok(Some(format!("there is no token for @{username}")));
    };
    match rest.with_token(account.token.expose()).me().await {
        Ok(user) if user.username == username => Ok(None),
        Ok(user) => Ok(Some(format!(
            "the token held for @{username} authenticates as @{}",
            user.username
        ))),
        Err(RestError::Api { status: 401, .. }) => Ok(Some(format!(
            "the token held for @{username} does not authenticate"
        ))),
        Err(error) => Err(error),
    }
}

/// Problems with the `/collegium` command, read as the system bot (a team
/// admin, so it may list the team's commands).
async fn command(
    bot: &Rest,
    held: &Credentials,
    public_url: &str,
) -> Result<Vec<String>, RestError> {
    let expected = commands::callback_url(public_url);
    let registered = match bot.commands(&held.team_id).await {
        Ok(list) => list
            .into_iter()
            .find(|c| c.trigger == commands::TRIGGER && c.delete_at == 0),
        Err(RestError::Api { status: 403, .. }) => {
            return Ok(vec![
                "the system bot may not list the team's commands (it is not a team admin)".into(),
            ]);
        }
        Err(error) => return Err(error),
    };
    let Some(registered) = registered else {
        return Ok(vec![format!(
            "the /{} command is not registered",
            commands::TRIGGER
        )]);
    };
    let mut problems = Vec::new();
    if registered.url != expected {
        problems.push(format!(
            "the /{} command posts to {}, not to this daemon's {expected}",
            commands::TRIGGER,
            registered.url
        ));
    }
    if held
        .command
        .as_ref()
        .is_none_or(|c| c.token.expose() != &registered.token)
    {
        problems.push(format!(
            "the /{} command's token is not the one this daemon holds",
            commands::TRIGGER
        ));
    }
    Ok(problems)
}
