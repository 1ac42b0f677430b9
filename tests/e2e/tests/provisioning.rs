//! `collegium-provision mattermost` against the Mattermost simulator (§3.1,
//! §8.4): a fresh server provisioned; a second run changes nothing and mints
//! nothing; each forbidding setting refused by name before anything is
//! created; hand-made damage repaired.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use collegium_control::commands;
use collegium_provision::mattermost::{ProvisionError, TOKEN_DESCRIPTION};
use e2e::{Harness, binary};
use mattermost_wire::model::{Bot, Channel, Command as SlashCommand, UserAccessToken};
use serde_json::{Value, json};

async fn channel(h: &Harness, name: &str) -> Channel {
    let team = h.team().await;
    h.admin
        .channel_by_name(&team.id, name)
        .await
        .expect("lookup")
        .unwrap_or_else(|| panic!("no ~{name}"))
}

async fn members(h: &Harness, name: &str) -> Vec<String> {
    let channel = channel(h, name).await;
    let list: Vec<Value> = h
        .admin
        .get(&format!("channels/{}/members", channel.id))
        .await
        .expect("members");
    let mut names = Vec::new();
    for member in list {
        let user: Value = h
            .admin
            .get(&format!(
                "users/{}",
                member["user_id"].as_str().unwrap_or_default()
            ))
            .await
            .expect("user");
        names.push(user["username"].as_str().unwrap_or_default().to_string());
    }
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_fresh_server_is_provisioned_to_the_configuration() {
    let h = Harness::start().await;
    h.grant_theo_mail();
    let outcome = h.provision().await.expect("provisioned");
    let changes = outcome.changes.join("\n");
    for expected in [
        "created the team collegium (\"Collegium\")",
        "created the public channel ~research (\"Research\")",
        "created the bot @mira (\"Mira\")",
        "created the bot @theo (\"Theo the Operator\")",
        "created the bot @collegium (\"Collegium\")",
        "minted a token for @mira",
        "added @theo to ~ops",
        "made @collegium a team admin",
        "registered /collegium posting to",
    ] {
        assert!(
            changes.contains(expected),
            "missing {expected:?} in:\n{changes}"
        );
    }

    // Each bot is a bot, named as configured (or capitalised, §3.1).
    for (username, display) in [
        ("mira", "Mira"),
        ("theo", "Theo the Operator"),
        ("collegium", "Collegium"),
    ] {
        let user = h.user(username).await;
        assert!(user.is_bot, "@{username}");
        let bot: Bot = h
            .admin
            .get(&format!("bots/{}", user.id))
            .await
            .expect("bot");
        assert_eq!(bot.display_name, display);
    }

    // Each token authenticates as its own account, and the file is the daemon's alone.
    let held = h.credentials();
    for username in ["mira", "theo", "collegium"] {
        let me = h
            .admin
            .with_token(held.accounts[username].token.expose())
            .me()
            .await
            .expect("token works");
        assert_eq!(me.username, username);
    }
    let file = collegium_control::chat::credentials::path(&h.state_dir());
    assert_eq!(
        std::fs::metadata(&file).expect("file").permissions().mode() & 0o777,
        0o600
    );

    // Membership as §3.1 says and no more.
    assert_eq!(
        members(&h, "town-square").await,
        vec!["admin", "collegium", "mira", "theo"]
    );
    assert_eq!(
        members(&h, "research").await,
        vec!["admin", "collegium"],
        "no agent is put in a channel it was not given"
    );
    assert_eq!(
        members(&h, "ops").await,
        vec!["admin", "collegium", "theo"],
        "theo's mail is announced in ~ops"
    );

    // The command posts to the daemon's route, with the hint from the daemon's
    // own definitions and the token the daemon will hold.
    let team = h.team().await;
    let registered: Vec<SlashCommand> = h.admin.commands(&team.id).await.expect("commands");
    let command = registered
        .iter()
        .find(|c| c.trigger == "collegium")
        .expect("/collegium");
    let loaded = h.loaded();
    assert_eq!(
        command.url,
        commands::callback_url(&loaded.config.callbacks.public_url)
    );
    assert_eq!(command.method, "P");
    assert!(command.auto_complete);
    assert_eq!(command.auto_complete_hint, commands::hint());
    assert_eq!(command.auto_complete_desc, commands::DESCRIPTION);
    assert_eq!(
        held.command.as_ref().expect("command token").token.expose(),
        &command.token
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_second_run_changes_nothing_and_mints_no_token() {
    let h = Harness::start().await;
    h.provision().await.expect("first run");
    let before = h.credentials();
    let outcome = h.provision().await.expect("second run");
    assert!(outcome.changes.is_empty(), "{:#?}", outcome.changes);
    assert_eq!(h.credentials(), before, "the tokens held are the same");
    for username in ["mira", "theo", "collegium"] {
        let user = h.user(username).await;
        let tokens: Vec<UserAccessToken> = h.admin.tokens_of(&user.id).await.expect("tokens");
        assert_eq!(tokens.len(), 1, "@{username} has exactly one token");
    }

    // The binary says so in words.
    let out = Command::new(binary("collegium-provision"))
        .args(["mattermost", "--config"])
        .arg(&h.config)
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Mattermost already matches the configuration; nothing changed."
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_each_forbidding_setting_is_refused_by_name_before_anything_is_created() {
    let cases = [
        (
            json!({"EnableBotAccountCreation": false}),
            "ServiceSettings.EnableBotAccountCreation",
        ),
        (
            json!({"EnableUserAccessTokens": false}),
            "ServiceSettings.EnableUserAccessTokens",
        ),
        (
            json!({"AllowedUntrustedInternalConnections": ""}),
            "ServiceSettings.AllowedUntrustedInternalConnections",
        ),
    ];
    for (setting, named) in cases {
        let h = Harness::start().await;
        let _: Value = h
            .admin
            .put("config/patch", &json!({"ServiceSettings": setting}))
            .await
            .expect("patch");
        let Err(ProvisionError::Refused(reasons)) = h.provision().await else {
            panic!("{named}: not refused");
        };
        assert_eq!(reasons.len(), 1, "{reasons:#?}");
        assert!(reasons[0].contains(named), "{reasons:#?}");
        assert!(
            reasons[0].contains("System Console"),
            "it says where to change it: {reasons:#?}"
        );
        assert!(!h.has_team().await, "{named}: a team was created");
        assert!(
            h.admin
                .user_by_username("mira")
                .await
                .expect("lookup")
                .is_none(),
            "{named}: a bot was created"
        );
        assert!(!collegium_control::chat::credentials::path(&h.state_dir()).exists());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_deactivated_bot_a_lost_token_a_missing_channel_and_changed_names_are_repaired() {
    let h = Harness::start().await;
    h.provision().await.expect("first run");
    let mira = h.user("mira").await;
    let theo = h.user("theo").await;

    // Damage done by hand.
    let _: Bot = h
        .admin
        .post(&format!("bots/{}/disable", mira.id), &json!({}))
        .await
        .expect("disable");
    let _: Bot = h
        .admin
        .put(
            &format!("bots/{}", theo.id),
            &json!({"display_name": "Someone Else"}),
        )
        .await
        .expect("rename");
    let research = channel(&h, "research").await;
    let _: Channel = h
        .admin
        .put(
            &format!("channels/{}/patch", research.id),
            &json!({"display_name": "Renamed"}),
        )
        .await
        .expect("rename");
    let file = collegium_control::chat::credentials::path(&h.state_dir());
    let mut held = h.credentials();
    held.accounts.remove("theo");
    collegium_control::chat::credentials::save(&file, &held).expect("lose a token");
    h.write_config(&["launches"]);

    let outcome = h.provision().await.expect("repair");
    let changes = outcome.changes.join("\n");
    for expected in [
        "re-enabled the deactivated bot @mira",
        "renamed the bot @theo to \"Theo the Operator\"",
        "renamed the channel ~research to \"Research\"",
        "created the public channel ~launches (\"Launches\")",
        "added @collegium to ~launches",
        "revoked a stale token of @theo",
        "minted a token for @theo",
    ] {
        assert!(
            changes.contains(expected),
            "missing {expected:?} in:\n{changes}"
        );
    }
    assert!(
        !changes.contains("minted a token for @mira"),
        "mira's token still works once re-enabled:\n{changes}"
    );
    // The repaired token works, and the lost one no longer does.
    let repaired = h.credentials();
    assert_eq!(
        h.admin
            .with_token(repaired.accounts["theo"].token.expose())
            .me()
            .await
            .expect("works")
            .username,
        "theo"
    );
    let tokens: Vec<UserAccessToken> = h.admin.tokens_of(&theo.id).await.expect("tokens");
    assert_eq!(
        tokens
            .iter()
            .filter(|t| t.description == TOKEN_DESCRIPTION)
            .count(),
        1
    );

    let again = h.provision().await.expect("third run");
    assert!(again.changes.is_empty(), "{:#?}", again.changes);
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_person_holding_an_agents_username_stops_provisioning() {
    let h = Harness::start().await;
    let _: Value = h.mattermost_person("mira").await;
    match h.provision().await {
        Err(ProvisionError::Conflict(reason)) => {
            assert!(reason.contains("@mira is a person's account"), "{reason}")
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
}

trait People {
    async fn mattermost_person(&self, username: &str) -> Value;
}

impl People for Harness {
    async fn mattermost_person(&self, username: &str) -> Value {
        self.admin
            .post("users", &json!({"username": username, "email": format!("{username}@example.com"), "password": "Person-pass-1234"}))
            .await
            .expect("person")
    }
}

/// Gives the configuration a daemon user.
fn with_daemon_user(h: &Harness, user: &str) {
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "[deployment]\n",
        &format!("[deployment]\ndaemon_user = \"{user}\"\n"),
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_the_token_file_is_given_to_the_daemons_user_alone() {
    use std::os::unix::fs::MetadataExt;
    let h = Harness::start().await;
    with_daemon_user(&h, "nobody");
    let nobody = nix::unistd::User::from_name("nobody")
        .expect("lookup")
        .expect("every system has nobody");
    if !nix::unistd::geteuid().is_root() {
        // Handing a file to another user takes root: refused up front.
        match h.provision().await {
            Err(ProvisionError::DaemonUser { user, reason }) => {
                assert_eq!(user, "nobody");
                assert!(reason.contains("run the provisioner as root"), "{reason}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(!h.state_dir().exists());
        return;
    }
    h.provision().await.expect("provisioned");
    for path in [
        h.state_dir(),
        collegium_control::chat::credentials::path(&h.state_dir()),
    ] {
        let metadata = std::fs::metadata(&path).expect("exists");
        assert_eq!(metadata.uid(), nobody.uid.as_raw(), "{}", path.display());
        assert_eq!(metadata.gid(), nobody.gid.as_raw(), "{}", path.display());
    }
    assert_eq!(
        std::fs::metadata(h.state_dir()).expect("dir").mode() & 0o777,
        0o700
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_daemon_user_configured_later_is_given_the_token_file() {
    let h = Harness::start().await;
    h.provision()
        .await
        .expect("provisioned without a daemon user");
    with_daemon_user(&h, "nobody");
    let outcome = h.provision().await;
    if nix::unistd::geteuid().is_root() {
        let outcome = outcome.expect("second run");
        assert_eq!(outcome.changes.len(), 1, "{:#?}", outcome.changes);
        assert!(
            outcome.changes[0].contains("to the daemon's user"),
            "{:#?}",
            outcome.changes
        );
    } else {
        assert!(matches!(outcome, Err(ProvisionError::DaemonUser { .. })));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_a_daemon_user_that_does_not_exist_is_refused_before_anything_is_created() {
    let h = Harness::start().await;
    with_daemon_user(&h, "collegium-no-such-user");
    let error = h.provision().await.expect_err("refused");
    assert_eq!(
        error.to_string(),
        "deployment.daemon_user: collegium-no-such-user: there is no such OS user; create it first"
    );
    assert!(!h.state_dir().exists());
    assert!(!h.has_team().await, "nothing was created");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_1_an_archived_channel_is_restored_by_provisioning_and_boot_refuses_only_until_then() {
    let h = Harness::start().await;
    h.provision().await.expect("first run");
    let research = channel(&h, "research").await;
    let before = members(&h, "research").await;
    let archived: Value = h
        .admin
        .delete(&format!("channels/{}", research.id))
        .await
        .expect("an administrator archives ~research");
    assert_eq!(archived, json!({"status": "OK"}));

    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("the channel ~research is archived")
            && stderr.contains("collegium-provision mattermost --config"),
        "boot refuses, naming the channel and the fix: {stderr}"
    );

    let outcome = h
        .provision()
        .await
        .expect("the archived channel is converged");
    assert_eq!(
        outcome.changes,
        ["restored the archived channel ~research"],
        "restored, not left for a person"
    );
    let restored = channel(&h, "research").await;
    assert_eq!(restored.id, research.id, "the same channel, not a new one");
    assert_eq!(restored.delete_at, 0);
    assert_eq!(members(&h, "research").await, before, "its members kept");

    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
    let again = h.provision().await.expect("third run");
    assert!(again.changes.is_empty(), "{:#?}", again.changes);
}
