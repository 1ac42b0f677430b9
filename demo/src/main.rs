//! `collegium-demo`: Collegium on its embedded defaults in one command. It
//! starts the Mattermost simulator (with its browser client) and the model
//! simulator in demo mode — or uses a real OpenAI-compatible endpoint named
//! by `COLLEGIUM_DEMO_MODEL_URL` — makes the server's first account its
//! admin, creates a person to sign in as, provisions the team, the channels
//! and two agents, and runs the daemon until Ctrl-C.
//!
//! Both agents hold the workspace and `ask::human`, so a person sees a gated
//! write wait on their decision (§3.7) and a question wait on their answer
//! (§3.7a). Run as root, the demo also provisions this host for @theo's
//! shell — its own OS user, home and workspace (§6.1) — and starts the shell
//! worker beside the daemon, so a command runs as that user.

use std::io::{BufRead as _, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};
use clap::Parser;
use collegium_control::chat::Rest;
use model_sim::demo::{ASK_PHRASE, COMMAND, RUN_PHRASE, WRITE_PHRASE};
use serde_json::{Value, json};

const ADMIN_PASSWORD: &str = "Demo-admin-1234";
const PERSON: &str = "demo";
const PERSON_PASSWORD: &str = "Demo-person-1234";
/// The shell worker's program, looked for beside this one.
const SHELL_WORKER: &str = "collegium-worker-shell";

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
    let prepared = runtime.block_on(prepare(&args))?;
    let config = prepared.config.clone();
    // The daemon runs as operators run it, on its own runtime, until Ctrl-C
    // (SIGINT stops it cleanly); the simulators keep serving on this one.
    let daemon = std::thread::spawn(move || collegium_control::daemon::run(&config));
    let ran = daemon
        .join()
        .map_err(|_| anyhow::anyhow!("the daemon panicked"))?;
    drop(prepared);
    drop(runtime);
    ran.map_err(|e| anyhow::anyhow!("{e}"))
}

/// What outlives the preparation: the configuration's path, and what is
/// stopped or removed once the daemon has ended (the worker first, then
/// the directory it serves from).
struct Prepared {
    config: PathBuf,
    _worker: Option<ShellWorker>,
    _reach: Option<ReachTable>,
    _dir: Option<TempDir>,
}

/// The nftables table host provisioning made for this demo's deployment
/// (§6.4), removed when the demo stops: unlike cg-theo, a person has
/// nothing to look at in it, and it would keep rejecting cg-theo on the
/// demo's callback port.
struct ReachTable(String);

impl Drop for ReachTable {
    fn drop(&mut self) {
        let _ = std::process::Command::new("nft")
            .args(["delete", "table", "inet", &self.0])
            .output();
    }
}

/// Whether this run shows the shell, and why not where it does not.
enum Shell {
    On { worker: PathBuf },
    Off(String),
}

/// Only root creates an agent's OS user and starts the worker that runs
/// commands as it (§6.1).
fn shell_plan() -> Shell {
    if !nix::unistd::geteuid().is_root() {
        return Shell::Off(
            "it needs the demo run as root, which creates theo's own OS user (cg-theo) and starts the shell worker; run the demo as root to see it".into(),
        );
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(SHELL_WORKER)));
    match beside {
        Some(worker) if worker.is_file() => Shell::On { worker },
        Some(worker) => Shell::Off(format!(
            "the shell worker is not built ({} is missing): build it with `cargo build -p {SHELL_WORKER}` and start the demo again",
            worker.display()
        )),
        None => Shell::Off(format!(
            "this program's own directory, where {SHELL_WORKER} is looked for, could not be read"
        )),
    }
}

/// Everything before the daemon.
async fn prepare(args: &Args) -> anyhow::Result<Prepared> {
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
    let shell = shell_plan();
    if matches!(shell, Shell::On { .. }) {
        passable(&dir)?;
    }
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
    // The configuration has a directory of its own: host provisioning
    // closes that directory to the agents' users (§6.1), and their homes
    // and workspaces beside it must stay reachable.
    let config_dir = dir.join("config");
    std::fs::create_dir_all(&config_dir)?;
    let config = config_dir.join("collegium.toml");
    let api_key = if real_model.is_some() && std::env::var_os("COLLEGIUM_DEMO_API_KEY").is_some() {
        "api_key = { env = \"COLLEGIUM_DEMO_API_KEY\" }"
    } else {
        ""
    };
    let (daemon_user, theo_grants) = match &shell {
        // The daemon runs inside this process, as root: the layout names the
        // user it really runs as, and that user's socket the worker admits.
        Shell::On { .. } => (
            "daemon_user = \"root\"",
            "\"workspace\", \"ask\", \"shell\"",
        ),
        Shell::Off(_) => ("", "\"workspace\", \"ask\""),
    };
    // The daemon runs inside this process: as root, the configuration says
    // so on purpose, since boot refuses root otherwise (issue 21 item 5).
    let allow_root = if nix::unistd::geteuid().is_root() {
        "# The demo runs the daemon inside its own process, as root here; a real\n\
         # deployment runs it as its own user (docs/deployment.md, \"Least privilege\").\n\
         allow_root = true"
    } else {
        ""
    };
    let text = include_str!("collegium-demo.toml")
        .replace("{allow_root}", allow_root)
        .replace("{timezone}", "UTC")
        .replace("{state}", &dir.display().to_string())
        .replace("{daemon_user}", daemon_user)
        .replace("{theo_grants}", theo_grants)
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
    // The daemon's boot refuses a shell agent the host is not laid out for,
    // and connects to the shell worker rather than starting it (§6.1).
    let (worker, reach) = match &shell {
        Shell::On { worker } => {
            let reach = ReachTable(collegium_control::host::reach::table_name(
                &loaded.config.deployment.state_dir,
            ));
            collegium_provision::host::provision(&loaded)
                .map_err(|e| anyhow::anyhow!("provision the host for the shell: {e}"))?;
            (Some(ShellWorker::start(worker, &config)?), Some(reach))
        }
        Shell::Off(_) => (None, None),
    };
    join_person(&mattermost.url).await?;
    let url = mattermost.url.clone();
    std::mem::forget(mattermost);
    let banner = banner(&url, &dir, real_model.as_deref(), &shell);
    // One write, and a reader that went away is no reason to stop the
    // system it was told about.
    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes());
        let _ = out.flush();
    }
    Ok(Prepared {
        config,
        _worker: worker,
        _reach: reach,
        _dir: keep,
    })
}

/// What the person reads first: where to sign in, and what to say to see
/// what Collegium is for.
fn banner(url: &str, dir: &Path, real_model: Option<&str>, shell: &Shell) -> String {
    let mut out = format!(
        "\nCollegium is starting. Open {url} and sign in as `{PERSON}` with the password \
         `{PERSON_PASSWORD}`.\nTalk to @mira or @theo in Town Square, or open a direct message \
         with either.\n"
    );
    match real_model {
        Some(url) => {
            out.push_str(&format!(
                "The agents answer through {url}. Both may write to their workspace and ask you a question"
            ));
            out.push_str(match shell {
                Shell::On { .. } => {
                    "; theo also holds the shell, run as its own OS user cg-theo.\n"
                }
                Shell::Off(_) => ".\n",
            });
        }
        None => {
            out.push_str(&format!(
                "The agents answer through the model simulator's scripted demo replies, which say \
                 so. To see what Collegium is for, say:\n  \
                 `@mira {WRITE_PHRASE}` — a write to mira's workspace whose exact content waits on \
                 your Approve, Deny or Deny with reason\n  \
                 `@mira {ASK_PHRASE}` — a question only you can answer, with answers offered as \
                 buttons\n"
            ));
            out.push_str(&match shell {
                Shell::On { .. } => format!(
                    "  `@theo {RUN_PHRASE}` — `{COMMAND}` run as theo's own OS user, cg-theo, once \
                     you approve it\n"
                ),
                Shell::Off(why) => format!("  `@theo {RUN_PHRASE}` — not in this run: {why}\n"),
            });
            out.push_str(
                "Set COLLEGIUM_DEMO_MODEL_URL and COLLEGIUM_DEMO_MODEL for a real model.\n",
            );
        }
    }
    if matches!(shell, Shell::On { .. }) {
        out.push_str(
            "As root, the demo provisioned this host for the shell: the OS user cg-theo stays \
             after the demo ends (remove it with `userdel cg-theo`).\n",
        );
    }
    out.push_str(&format!(
        "Configuration and state: {}. Stop with Ctrl-C.\n",
        dir.display()
    ));
    out
}

/// Opens `dir` to other users' passage, and checks every directory above
/// it lets them through too: an agent's OS user reaches its home and
/// workspace beneath it (§6.1).
fn passable(dir: &Path) -> anyhow::Result<()> {
    let mode = std::fs::metadata(dir)?.permissions().mode();
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o755))?;
    for above in dir.ancestors().skip(1) {
        let mode = std::fs::metadata(above)?.permissions().mode();
        if mode & 0o001 == 0 {
            bail!(
                "{} is closed to other users, so theo's OS user could not reach its home in {}: \
                 choose a --dir others may pass through to, such as one under /tmp",
                above.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// The shell worker, started as root beside the daemon and stopped when
/// the demo ends.
struct ShellWorker(Child);

impl ShellWorker {
    fn start(program: &Path, config: &Path) -> anyhow::Result<Self> {
        // Its log goes where the daemon's does; stdout carries only the
        // `ready` it prints once its socket accepts connections.
        let mut child = Command::new(program)
            .arg("serve")
            .arg("--config")
            .arg(config)
            // The floor the daemon holds the shell worker to (§6.1), so the
            // demo runs on any kernel with Landlock; a deployment's unit
            // sets its own.
            .args(["--landlock-floor", "1"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("start {}", program.display()))?;
        let stdout = child.stdout.take().context("the shell worker's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().transpose()?.unwrap_or_default();
        if first.trim() != "ready" {
            let status = child.wait()?;
            bail!("the shell worker did not start ({status}); its error is above");
        }
        // Whatever else it prints is drained, so it never writes into a
        // closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(Self(child))
    }
}

impl Drop for ShellWorker {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGTERM,
            );
        }
        let _ = self.0.wait();
    }
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
