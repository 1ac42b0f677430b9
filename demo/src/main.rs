//! `collegium-demo`: Collegium on its embedded defaults in one command. It
//! starts the Mattermost simulator (with its browser client) and the model
//! simulator in demo mode — or uses a real OpenAI-compatible endpoint named
//! by `COLLEGIUM_DEMO_MODEL_URL` — makes the server's first account its
//! admin, creates a person to sign in as, provisions the team, the channels
//! and two agents, and runs the daemon until Ctrl-C.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::Parser;
use collegium_control::chat::Rest;
use serde_json::{Value, json};

const ADMIN_PASSWORD: &str = "Demo-admin-1234";
const PERSON: &str = "demo";
const PERSON_PASSWORD: &str = "Demo-person-1234";

#[derive(Parser)]
#[command(
    name = "collegium-demo",
    about = "Start Collegium on its embedded defaults"
)]
struct Args {
    /// Where the simulated Mattermost listens (its browser client too).
    #[arg(long, default_value = "127.0.0.1:8065")]
    mattermost: std::net::SocketAddr,
    /// Where the model simulator listens.
    #[arg(long, default_value = "127.0.0.1:8090")]
    model: std::net::SocketAddr,
    /// The port of the daemon's callback server.
    #[arg(long, default_value_t = 8071)]
    callback_port: u16,
    /// Where the demo keeps its configuration and state; a fresh temporary
    /// directory when not given.
    #[arg(long)]
    dir: Option<PathBuf>,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let runtime = tokio::runtime::Runtime::new()?;
    let (config, _keep) = runtime.block_on(prepare(&args))?;
    // The daemon runs as operators run it, on its own runtime, until Ctrl-C
    // (SIGINT stops it cleanly); the simulators keep serving on this one.
    let daemon = std::thread::spawn(move || collegium_control::daemon::run(&config));
    let ran = daemon
        .join()
        .map_err(|_| anyhow::anyhow!("the daemon panicked"))?;
    drop(runtime);
    ran.map_err(|e| anyhow::anyhow!("{e}"))
}

/// Everything before the daemon: returns the configuration's path and the
/// temporary directory to keep alive.
async fn prepare(args: &Args) -> anyhow::Result<(PathBuf, Option<TempDir>)> {
    let (dir, keep) = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)?;
            (dir.canonicalize()?, None)
        }
        None => {
            let made = TempDir::new()?;
            (made.path.clone(), Some(made))
        }
    };
    let mattermost = mattermost_sim::start(args.mattermost, &mattermost_sim::Options::default())
        .await
        .with_context(|| format!("start the Mattermost simulator on {}", args.mattermost))?;
    let real_model = std::env::var("COLLEGIUM_DEMO_MODEL_URL").ok();
    let (model_url, model_name) = match &real_model {
        Some(url) => (
            url.clone(),
            std::env::var("COLLEGIUM_DEMO_MODEL").context(
                "COLLEGIUM_DEMO_MODEL_URL is set: name the model in COLLEGIUM_DEMO_MODEL",
            )?,
        ),
        None => {
            let model = model_sim::start(args.model, true)
                .await
                .with_context(|| format!("start the model simulator on {}", args.model))?;
            let url = format!("{}/v1", model.url);
            // The simulator serves as long as the process runs.
            std::mem::forget(model);
            (url, "collegium-demo".to_string())
        }
    };
    bootstrap(&mattermost.url).await?;
    let config = dir.join("collegium.toml");
    let api_key = if real_model.is_some() && std::env::var_os("COLLEGIUM_DEMO_API_KEY").is_some() {
        "api_key = { env = \"COLLEGIUM_DEMO_API_KEY\" }"
    } else {
        ""
    };
    let text = include_str!("collegium-demo.toml")
        .replace("{timezone}", "UTC")
        .replace("{state}", &dir.display().to_string())
        .replace("{callback_port}", &args.callback_port.to_string())
        .replace("{mattermost}", &mattermost.url)
        .replace("{admin_password}", ADMIN_PASSWORD)
        .replace("{model_url}", &model_url)
        .replace("{model}", &model_name)
        .replace("{api_key}", api_key);
    std::fs::write(&config, text)?;
    let loaded =
        collegium_control::config::load(&config).map_err(|e| anyhow::anyhow!("{}", e.report()))?;
    collegium_provision::mattermost::provision(&loaded)
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    join_person(&mattermost.url).await?;
    let url = mattermost.url.clone();
    std::mem::forget(mattermost);
    let model_line = match &real_model {
        Some(url) => format!("The agents answer through {url}."),
        None => "The agents answer through the model simulator's scripted demo replies, which \
                 say so; set COLLEGIUM_DEMO_MODEL_URL and COLLEGIUM_DEMO_MODEL for a real model."
            .to_string(),
    };
    let banner = format!(
        "\nCollegium is starting. Open {url} and sign in as `{PERSON}` with the password \
         `{PERSON_PASSWORD}`.\nTalk to @mira or @theo in Town Square, or open a direct message \
         with either.\n{model_line}\nConfiguration and state: {}. Stop with Ctrl-C.\n",
        dir.display()
    );
    // One write, and a reader that went away is no reason to stop the
    // system it was told about.
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes());
        let _ = out.flush();
    }
    Ok((config, keep))
}

/// The server's first account becomes its admin; the admin allows bots,
/// their tokens and calls to the loopback callback (on a real server: the
/// System Console), and a person to sign in as.
async fn bootstrap(url: &str) -> anyhow::Result<()> {
    let rest = Rest::new(url)?;
    let _: Value = rest
        .post(
            "users",
            &json!({"username": "admin", "email": "admin@example.com", "password": ADMIN_PASSWORD}),
        )
        .await
        .context("create the admin account")?;
    let (_, token) = rest.login("admin", ADMIN_PASSWORD).await?;
    let admin = rest.with_token(&token);
    let _: Value = admin
        .put(
            "config/patch",
            &json!({"ServiceSettings": {
                "EnableBotAccountCreation": true,
                "EnableUserAccessTokens": true,
                "AllowedUntrustedInternalConnections": "127.0.0.0/8"
            }}),
        )
        .await?;
    let _: Value = admin
        .post(
            "users",
            &json!({"username": PERSON, "email": "demo@example.com", "password": PERSON_PASSWORD}),
        )
        .await
        .context("create the demo person")?;
    Ok(())
}

/// The demo person joins the team and its channels.
async fn join_person(url: &str) -> anyhow::Result<()> {
    let rest = Rest::new(url)?;
    let (_, token) = rest.login("admin", ADMIN_PASSWORD).await?;
    let admin = rest.with_token(&token);
    let Some(team) = admin.team_by_name("collegium").await? else {
        bail!("the team was not provisioned");
    };
    let Some(person) = admin.user_by_username(PERSON).await? else {
        bail!("the demo person is missing");
    };
    admin.add_team_member(&team.id, &person.id).await?;
    for name in ["town-square", "research"] {
        if let Some(channel) = admin.channel_by_name(&team.id, name).await? {
            admin.add_channel_member(&channel.id, &person.id).await?;
        }
    }
    Ok(())
}

/// A temporary directory removed when the demo ends.
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> anyhow::Result<Self> {
        let path = std::env::temp_dir().join(format!("collegium-demo-{}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(Self { path })
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
