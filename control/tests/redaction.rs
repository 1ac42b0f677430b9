//! Secrets only through a redacting type (issue 21 item 6): a configuration
//! holding every kind of secret the daemon reads — the admin's password and
//! token, a model's API key, the trigger route's secret — and the values the
//! daemon derives from it (the model's provider configuration, the bot and
//! command tokens of the credentials file, a REST client acting with a
//! token) never print a secret in `Debug` or `Display`; each revealed value
//! prints `[redacted]` until the one place that sends it exposes it.

use std::path::{Path, PathBuf};

use collegium_control::chat::credentials::{self, Account, CommandCredential, Credentials};
use collegium_control::chat::rest::Rest;
use collegium_control::config;
use collegium_control::config::secret::Secret;
use collegium_control::inference::ProviderConfig;

const SECRETS: [&str; 6] = [
    "sk-model-key-never-shown",
    "admin-password-never-shown",
    "admin-token-never-shown",
    "trigger-secret-never-shown",
    "bot-token-never-shown",
    "command-token-never-shown",
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn assert_hidden(what: &str, printed: &str) {
    for secret in SECRETS {
        assert!(
            !printed.contains(secret),
            "{what} printed {secret}:\n{printed}"
        );
    }
}

/// The minimal valid configuration with every secret given inline.
fn loaded(dir: &Path) -> config::LoadedConfig {
    let text = std::fs::read_to_string(repo().join("tests/config/valid/minimal.toml"))
        .expect("read")
        .replace(
            "../resources",
            &repo().join("tests/config/resources").display().to_string(),
        )
        .replace(
            "context_window = 128000\n",
            "context_window = 128000\napi_key = { value = \"sk-model-key-never-shown\" }\n",
        )
        .replace(
            "team = \"collegium\"\n",
            "team = \"collegium\"\n\
             admin = { username = \"root\", password = { value = \"admin-password-never-shown\" } }\n\n\
             [callbacks]\ntrigger_secret = { value = \"trigger-secret-never-shown\" }\n",
        );
    let file = dir.join("collegium.toml");
    std::fs::write(&file, text).expect("write");
    config::load(&file).unwrap_or_else(|e| panic!("{}", e.report()))
}

#[test]
fn i21_a_config_holding_secrets_never_prints_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let loaded = loaded(dir.path());
    assert_hidden(
        "the loaded configuration",
        &format!("{loaded:?} {loaded:#?}"),
    );

    let model = &loaded.config.models["sim"];
    let key = model
        .api_key
        .as_ref()
        .expect("a key")
        .reveal()
        .expect("reveal");
    assert_eq!(format!("{key} {key:?}"), "[redacted] [redacted]");
    assert_eq!(key.expose(), "sk-model-key-never-shown");
    let provider = ProviderConfig::from_model(model, Some(key));
    assert_hidden("the provider configuration", &format!("{provider:?}"));

    let admin = loaded.config.mattermost.admin.as_ref().expect("admin");
    // The other admin form: a token alone, as `Secret` holds it.
    let token = Secret {
        file: None,
        env: None,
        value: Some("admin-token-never-shown".into()),
    };
    for secret in [admin.password.as_ref().expect("set"), &token] {
        let revealed = secret.reveal().expect("reveal");
        assert_hidden(
            "an admin secret",
            &format!("{secret} {secret:?} {revealed} {revealed:?}"),
        );
    }
    let trigger = loaded
        .config
        .callbacks
        .trigger_secret
        .as_ref()
        .expect("set");
    let revealed = trigger.reveal().expect("reveal");
    assert_hidden(
        "the trigger secret",
        &format!("{trigger} {revealed} {revealed:?}"),
    );
}

#[test]
fn i21_tokens_held_from_the_credentials_file_never_print() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut held = Credentials {
        server: "http://127.0.0.1:8065".into(),
        team_id: "team".into(),
        ..Credentials::default()
    };
    held.accounts.insert(
        "mira".into(),
        Account {
            user_id: "u1".into(),
            token_id: "t1".into(),
            token: "bot-token-never-shown".into(),
        },
    );
    held.command = Some(CommandCredential {
        command_id: "c1".into(),
        token: "command-token-never-shown".into(),
    });
    assert_hidden("the credentials", &format!("{held:?}"));
    assert_hidden(
        "an account",
        &format!(
            "{} {:?}",
            held.accounts["mira"].token, held.accounts["mira"].token
        ),
    );

    // The file itself holds the tokens, and reads back the same.
    let file = credentials::path(dir.path());
    credentials::save(&file, &held).expect("save");
    let written = std::fs::read_to_string(&file).expect("read");
    assert!(written.contains("bot-token-never-shown"), "{written}");
    assert!(written.contains("command-token-never-shown"), "{written}");
    assert_eq!(credentials::load(&file).expect("load"), held);

    let rest = Rest::new("http://127.0.0.1:9")
        .expect("client")
        .with_token(held.accounts["mira"].token.expose());
    assert_hidden("a REST client", &format!("{rest:?}"));
}
