//! `collegium-worker-browser serve`: the browser worker (ARCHITECTURE §4).
//! It runs as its own unprivileged user (`collegium-browser`), sets
//! no-new-privileges before its runtime starts, and serves the web tools:
//! browser sessions whose every request goes through its own egress proxy,
//! one plain fetch, and search, every request held to the address policy it
//! is given on its command line (§3.4). It never reads the deployment's configuration,
//! whose secrets are not its to hold; the daemon holds it to the
//! configuration's `[web]` at the handshake instead. It prints `ready` once
//! its socket accepts connections and stops on SIGTERM.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use clap::{Parser, Subcommand};
use collegium_web_scope::{Scope, ScopeSettings};
use std::sync::Arc;

use collegium_web_scope::Resolver;
use collegium_worker_browser::proxy::EgressProxy;
use collegium_worker_browser::service::{BrowserWorker, NAMESPACE};
use collegium_worker_browser::session::{Sessions, SessionsConfig};
use collegium_worker_kit::serve::{PeerPolicy, serve};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(
    name = "collegium-worker-browser",
    version,
    about = "web::fetch and web::search, every request held to the deployment's address policy"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the web tools.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// The deployment's runtime directory; the socket is `web/toolset.sock`
    /// beneath it, in a directory of this worker's user.
    #[arg(long, default_value = "/run/collegium")]
    runtime_dir: PathBuf,
    /// The deployment's audit directory; the log is `web/web.audit.jsonl`
    /// beneath it, in a directory of this worker's user.
    #[arg(long, default_value = "/var/log/collegium")]
    audit_dir: PathBuf,
    /// A uid allowed to connect: the daemon's user.
    #[arg(long = "allow-uid", required = true)]
    allow_uids: Vec<u32>,
    /// The configuration's `web.own_network_browsable` (§3.4).
    #[arg(long)]
    own_network_browsable: bool,
    /// One of the configuration's `web.closed_hosts` (§3.4), once each.
    #[arg(long = "closed-host")]
    closed_hosts: Vec<String>,
    /// A PEM file of authorities to trust beside the system's (a
    /// deployment's own CA), once each.
    #[arg(long = "trust")]
    trust: Vec<PathBuf>,
    /// The configuration's `web.live_sessions` (§3.4).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    live_sessions: u32,
    /// Debian's Chromium; nothing is detected or downloaded.
    #[arg(long, default_value = "/usr/bin/chromium")]
    chromium: PathBuf,
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Serve(args),
    } = Cli::parse();
    match start(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("collegium-worker-browser: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn start(args: ServeArgs) -> anyhow::Result<()> {
    if nix::unistd::geteuid().is_root() {
        bail!(
            "the browser worker never runs as root: run it as its own user (collegium-browser, made by collegium-provision host)"
        );
    }
    let socket_dir =
        collegium_worker_kit::own_dir::own_dir(&args.runtime_dir.join(NAMESPACE), 0o027)?;
    let audit_dir = collegium_worker_kit::own_dir::own_dir(&args.audit_dir.join(NAMESPACE), 0o077)?;
    // Before any thread exists: the flag is per thread, and every thread the
    // runtime starts inherits it.
    collegium_worker_kit::sandbox::forbid_new_privileges()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve_until_stopped(args, socket_dir, audit_dir))
}

async fn serve_until_stopped(
    args: ServeArgs,
    socket_dir: PathBuf,
    audit_dir: PathBuf,
) -> anyhow::Result<()> {
    // The shared initialiser: journal, text or JSON (issue 21 item 6).
    collegium_worker_kit::logging::init("collegium-worker-browser");
    let scope = Arc::new(Scope::new(
        ScopeSettings {
            own_network_browsable: args.own_network_browsable,
            closed_hosts: args.closed_hosts,
        },
        collegium_web_scope::own_addresses()?,
    )?);
    // Both settings are logged at boot (§3.4).
    scope.log_boot();
    // Every request Chromium makes goes through the proxy, judged by the
    // same scope as a fetch; a main-frame load it refused is reported as
    // its refusal, naming the address (§3.4).
    let proxy = EgressProxy::start(scope.clone(), Resolver::from_system()?).await?;
    let refusals = proxy.log();
    let mut sessions = SessionsConfig::new(
        args.chromium,
        Some(proxy.address()),
        usize::try_from(args.live_sessions)?,
    );
    sessions.refusal_for = Arc::new(move |url| refusals.refusal_for(url).map(|r| r.to_string()));
    let trust = collegium_worker_browser::fetch::Trust {
        extra_authorities: args.trust,
    };
    // Where Chromium's certificate error cannot say whose fault it is, the
    // fetch route's verifier looks at the same site (§3.4 certificates). A
    // client of its own, not the service's: a verifier's finding is taken
    // per host, and a fetch of the same site at that moment must not take
    // the check's, nor the check the fetch's.
    let checker = Arc::new(collegium_worker_browser::fetch::Fetcher::new(
        scope.clone(),
        &trust,
    )?);
    sessions.check_certificate = Arc::new(move |url| {
        let checker = checker.clone();
        Box::pin(async move { checker.certificate_problem(&url).await })
    });
    let sessions = Sessions::new(sessions);
    let worker = BrowserWorker::new(
        scope,
        &trust,
        sessions.clone(),
        args.live_sessions,
        &audit_dir.join(format!("{NAMESPACE}.audit.jsonl")),
    )?;
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let policy = PeerPolicy {
        allowed_uids: args.allow_uids.into_iter().collect::<BTreeSet<u32>>(),
    };
    // The directory (mode 0750, the daemon's group) gates who reaches the
    // socket, and the peer check who is served; the socket itself may then
    // be open to whoever reaches it.
    let serving = serve(&socket_dir.join("toolset.sock"), 0o666, policy, worker).await?;
    println!("ready");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    serving.shutdown().await?;
    // No browser outlives the worker that started it.
    sessions.shutdown().await;
    proxy.shutdown().await;
    Ok(())
}
