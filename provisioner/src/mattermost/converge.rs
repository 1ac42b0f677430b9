//! Converge Mattermost to the configuration (§3.1): the team, the declared
//! channels (restoring any an administrator archived), one bot account per
//! agent and one for the system bot, one token each, the memberships §3.1
//! names and no others, and the `/collegium` command. Each piece is read
//! first and changed only where it differs, so a second run changes
//! nothing; every change is one line.

use std::collections::BTreeMap;

use collegium_control::chat::Rest;
use collegium_control::chat::credentials::{Account, CommandCredential, Credentials};
use collegium_control::commands;
use collegium_control::config::LoadedConfig;
use collegium_control::config::model::ChannelType;
use collegium_control::config::resolved::capitalised;
use mattermost_wire::model::{Channel, Command};

use super::ProvisionError;

/// The description every token the provisioner mints carries, so a token
/// whose record was lost can be found and revoked.
pub const TOKEN_DESCRIPTION: &str = "collegium daemon";

/// One bot account the configuration wants.
struct Wanted {
    username: String,
    display_name: String,
    description: String,
}

pub struct Converger<'a> {
    admin: Rest,
    loaded: &'a LoadedConfig,
    pub changes: Vec<String>,
    pub credentials: Credentials,
}

impl<'a> Converger<'a> {
    pub fn new(admin: Rest, loaded: &'a LoadedConfig, held: Credentials) -> Self {
        let config = &loaded.config;
        // Tokens minted for another server or team are not this deployment's.
        let credentials = if held.server == config.mattermost.url {
            held
        } else {
            Credentials::default()
        };
        Self {
            admin,
            loaded,
            changes: Vec::new(),
            credentials: Credentials {
                server: config.mattermost.url.clone(),
                ..credentials
            },
        }
    }

    fn change(&mut self, line: String) {
        self.changes.push(line);
    }

    pub async fn run(&mut self) -> Result<(), ProvisionError> {
        let team_id = self.team().await?;
        self.credentials.team_id = team_id.clone();
        let channels = self.channels(&team_id).await?;
        let accounts = self.accounts(&team_id).await?;
        self.tokens(&accounts).await?;
        self.memberships(&channels, &accounts).await?;
        self.system_bot_admin(&team_id, &accounts).await?;
        self.command(&team_id).await
    }

    async fn team(&mut self) -> Result<String, ProvisionError> {
        let mm = &self.loaded.config.mattermost;
        if let Some(team) = self.admin.team_by_name(&mm.team).await? {
            return Ok(team.id);
        }
        let display = mm
            .team_display_name
            .clone()
            .unwrap_or_else(|| mm.team.clone());
        let team = self.admin.create_team(&mm.team, &display).await?;
        self.change(format!("created the team {} (\"{display}\")", mm.team));
        Ok(team.id)
    }

    async fn channels(
        &mut self,
        team_id: &str,
    ) -> Result<BTreeMap<String, Channel>, ProvisionError> {
        let mut found = BTreeMap::new();
        for declared in &self.loaded.config.channels {
            let display = declared
                .display_name
                .clone()
                .unwrap_or_else(|| capitalised(&declared.name));
            let kind = match declared.kind {
                ChannelType::Public => "O",
                ChannelType::Private => "P",
            };
            let channel = match self.admin.channel_by_name(team_id, &declared.name).await? {
                Some(existing) => {
                    if existing.kind != kind {
                        return Err(ProvisionError::Conflict(format!(
                            "the channel ~{} is {}, but the configuration declares it {}; convert it in Mattermost",
                            declared.name,
                            if existing.kind == "P" {
                                "private"
                            } else {
                                "public"
                            },
                            if kind == "P" { "private" } else { "public" },
                        )));
                    }
                    let existing = self.unarchived(existing, &declared.name).await?;
                    if existing.display_name != display {
                        let renamed = self.admin.rename_channel(&existing.id, &display).await?;
                        self.change(format!(
                            "renamed the channel ~{} to \"{display}\"",
                            declared.name
                        ));
                        renamed
                    } else {
                        existing
                    }
                }
                None => {
                    let created = self
                        .admin
                        .create_channel(team_id, &declared.name, &display, kind)
                        .await?;
                    self.change(format!(
                        "created the {} channel ~{} (\"{display}\")",
                        if kind == "P" { "private" } else { "public" },
                        declared.name
                    ));
                    created
                }
            };
            found.insert(declared.name.clone(), channel);
        }
        Ok(found)
    }

    /// The channel, restored if an administrator archived it: a configured
    /// channel is converged like any other piece (§3.1), and an archived
    /// one still holds its name, so it cannot be created again.
    async fn unarchived(
        &mut self,
        channel: Channel,
        name: &str,
    ) -> Result<Channel, ProvisionError> {
        if channel.delete_at == 0 {
            return Ok(channel);
        }
        let restored = self.admin.restore_channel(&channel.id).await?;
        self.change(format!("restored the archived channel ~{name}"));
        Ok(restored)
    }

    fn wanted(&self) -> Vec<Wanted> {
        let config = &self.loaded.config;
        let mut wanted: Vec<Wanted> = self
            .loaded
            .agents
            .iter()
            .zip(&config.agents)
            .map(|(agent, declared)| Wanted {
                username: agent.username.clone(),
                display_name: agent.display_name.clone(),
                description: if declared.expertise.is_empty() {
                    "A Collegium agent.".to_string()
                } else {
                    declared.expertise.clone()
                },
            })
            .collect();
        wanted.push(Wanted {
            username: config.mattermost.system_bot.username.clone(),
            display_name: config.mattermost.system_bot.display_name.clone(),
            description:
                "Collegium's system bot: notices, triggers and refusals, never an agent thinking."
                    .to_string(),
        });
        wanted
    }

    /// Every bot account, created, re-enabled or renamed as needed, and in the
    /// team. Returns username → user id.
    async fn accounts(
        &mut self,
        team_id: &str,
    ) -> Result<BTreeMap<String, String>, ProvisionError> {
        let mut ids = BTreeMap::new();
        for want in self.wanted() {
            let user_id = match self.admin.user_by_username(&want.username).await? {
                Some(user) if !user.is_bot => {
                    return Err(ProvisionError::Conflict(format!(
                        "@{} is a person's account, not a bot; choose another username for that agent",
                        want.username
                    )));
                }
                Some(user) => {
                    if user.delete_at != 0 {
                        self.admin.enable_bot(&user.id).await?;
                        self.change(format!("re-enabled the deactivated bot @{}", want.username));
                    }
                    let bot = self.admin.bot(&user.id).await?;
                    if bot.is_some_and(|b| b.display_name != want.display_name) {
                        self.admin.rename_bot(&user.id, &want.display_name).await?;
                        self.change(format!(
                            "renamed the bot @{} to \"{}\"",
                            want.username, want.display_name
                        ));
                    }
                    user.id
                }
                None => {
                    let bot = self
                        .admin
                        .create_bot(&want.username, &want.display_name, &want.description)
                        .await?;
                    self.change(format!(
                        "created the bot @{} (\"{}\")",
                        want.username, want.display_name
                    ));
                    bot.user_id
                }
            };
            if self
                .admin
                .team_member(team_id, &user_id)
                .await?
                .is_none_or(|m| m.delete_at != 0)
            {
                self.admin.add_team_member(team_id, &user_id).await?;
                self.change(format!("added @{} to the team", want.username));
            }
            ids.insert(want.username, user_id);
        }
        Ok(ids)
    }

    /// One working token per account: a held token that still authenticates
    /// as its account is kept; otherwise the orphaned tokens this provisioner
    /// minted are revoked and a new one is minted.
    async fn tokens(&mut self, accounts: &BTreeMap<String, String>) -> Result<(), ProvisionError> {
        for (username, user_id) in accounts {
            if let Some(held) = self
                .credentials
                .accounts
                .get(username)
                .filter(|a| a.user_id == *user_id)
            {
                let works = self
                    .admin
                    .with_token(held.token.expose())
                    .me()
                    .await
                    .is_ok_and(|me| me.id == *user_id);
                if works {
                    continue;
                }
            }
            for stale in self.admin.tokens_of(user_id).await? {
                if stale.description == TOKEN_DESCRIPTION {
                    self.admin.revoke_token(&stale.id).await?;
                    self.change(format!("revoked a stale token of @{username}"));
                }
            }
            let minted = self.admin.create_token(user_id, TOKEN_DESCRIPTION).await?;
            self.credentials.accounts.insert(
                username.clone(),
                Account {
                    user_id: user_id.clone(),
                    token_id: minted.id,
                    token: minted.token.into(),
                },
            );
            self.change(format!("minted a token for @{username}"));
        }
        // Accounts the configuration no longer names keep nothing here.
        let stale: Vec<String> = self
            .credentials
            .accounts
            .keys()
            .filter(|u| !accounts.contains_key(*u))
            .cloned()
            .collect();
        for username in stale {
            self.credentials.accounts.remove(&username);
            self.change(format!(
                "forgot the token of @{username}, which the configuration no longer names"
            ));
        }
        Ok(())
    }

    /// §3.1's memberships and no more: every bot joins the main channel, an
    /// agent the channel its mail is announced to and each channel its
    /// schedules announce in, the system bot every configured channel.
    async fn memberships(
        &mut self,
        channels: &BTreeMap<String, Channel>,
        accounts: &BTreeMap<String, String>,
    ) -> Result<(), ProvisionError> {
        let config = &self.loaded.config;
        let main = config.deployment.main_channel.clone();
        let mut wanted: Vec<(String, String)> =
            accounts.keys().map(|u| (u.clone(), main.clone())).collect();
        for agent in &self.loaded.agents {
            let announce = agent
                .settings
                .get("mail")
                .and_then(|m| m["mailbox"]["announce_channel"].as_str())
                .map(str::to_string);
            if let Some(channel) = announce {
                wanted.push((agent.username.clone(), channel));
            }
        }
        // A schedule announces in a channel its agent belongs to (§4.2).
        for agent in &config.agents {
            for schedule in &agent.schedules {
                wanted.push((agent.username.clone(), schedule.channel.clone()));
            }
        }
        for channel in &config.channels {
            wanted.push((
                config.mattermost.system_bot.username.clone(),
                channel.name.clone(),
            ));
        }
        wanted.sort();
        wanted.dedup();
        for (username, channel_name) in wanted {
            let (Some(user_id), Some(channel)) =
                (accounts.get(&username), channels.get(&channel_name))
            else {
                continue;
            };
            if self
                .admin
                .channel_member(&channel.id, user_id)
                .await?
                .is_none()
            {
                self.admin.add_channel_member(&channel.id, user_id).await?;
                self.change(format!("added @{username} to ~{channel_name}"));
            }
        }
        Ok(())
    }

    /// The system bot manages the team's commands, so the daemon can check
    /// `/collegium` at boot without the admin's credentials.
    async fn system_bot_admin(
        &mut self,
        team_id: &str,
        accounts: &BTreeMap<String, String>,
    ) -> Result<(), ProvisionError> {
        let username = &self.loaded.config.mattermost.system_bot.username;
        let Some(user_id) = accounts.get(username) else {
            return Ok(());
        };
        let member = self.admin.team_member(team_id, user_id).await?;
        if !member.is_some_and(|m| m.scheme_admin) {
            self.admin.make_team_admin(team_id, user_id).await?;
            self.change(format!(
                "made @{username} a team admin, so it may read the team's commands"
            ));
        }
        Ok(())
    }

    /// `/collegium` as a custom slash command posting to the daemon's command
    /// route: a Mattermost plugin would hold it (§8.4), which this project
    /// cannot build; the README's operator section says what that changes.
    async fn command(&mut self, team_id: &str) -> Result<(), ProvisionError> {
        let url = commands::callback_url(&self.loaded.config.callbacks.public_url);
        let desired = Command {
            team_id: team_id.to_string(),
            trigger: commands::TRIGGER.to_string(),
            method: "P".to_string(),
            url: url.clone(),
            auto_complete: true,
            auto_complete_desc: commands::DESCRIPTION.to_string(),
            auto_complete_hint: commands::hint(),
            display_name: "Collegium".to_string(),
            description: commands::DESCRIPTION.to_string(),
            ..Command::default()
        };
        let existing = self
            .admin
            .commands(team_id)
            .await?
            .into_iter()
            .find(|c| c.trigger == commands::TRIGGER && c.delete_at == 0);
        let registered = match existing {
            None => {
                let created = self.admin.create_command(&desired).await?;
                self.change(format!(
                    "registered /{} posting to {url}",
                    commands::TRIGGER
                ));
                created
            }
            Some(existing) => {
                let differs = existing.url != desired.url
                    || existing.method != desired.method
                    || existing.auto_complete != desired.auto_complete
                    || existing.auto_complete_desc != desired.auto_complete_desc
                    || existing.auto_complete_hint != desired.auto_complete_hint
                    || existing.display_name != desired.display_name
                    || existing.description != desired.description;
                if differs {
                    let updated = self
                        .admin
                        .update_command(&Command {
                            id: existing.id.clone(),
                            token: existing.token.clone(),
                            creator_id: existing.creator_id.clone(),
                            ..desired
                        })
                        .await?;
                    self.change(format!(
                        "updated /{} to post to {url} with the current hint",
                        commands::TRIGGER
                    ));
                    updated
                } else {
                    existing
                }
            }
        };
        let held = CommandCredential {
            command_id: registered.id,
            token: registered.token.into(),
        };
        if self.credentials.command.as_ref() != Some(&held) {
            self.credentials.command = Some(held);
            self.change(format!("recorded the token of /{}", commands::TRIGGER));
        }
        Ok(())
    }
}
