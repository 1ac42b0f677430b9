//! `collegium-worker-mail serve --config FILE`: the mail worker (§3.13,
//! ARCHITECTURE §4). It reads the deployment's configuration itself, maps
//! each agent to its mailbox and reads every password file; started as root
//! it does that first and then becomes its own user (`collegium-mail`) for
//! good, before any thread exists. It never serves as root. It sets
//! no-new-privileges, serves `Toolset` and `Mailbox` on one peer-checked
//! socket, prints `ready` once the socket accepts connections and stops on
//! SIGTERM.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use collegium_proto::mail::v1::mailbox_server::MailboxServer;
use collegium_proto::toolset::v1::toolset_server::ToolsetServer;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::serve::{PeerPolicy, serve_routes};
use collegium_worker_mail::credentials::Files;
use collegium_worker_mail::mailbox::MailboxWorker;
use collegium_worker_mail::privilege;
use collegium_worker_mail::service::{MailWorker, NAMESPACE};
use collegium_worker_mail::settings::{self, Mailboxes};
use collegium_worker_mail::tls::Trust;
use nix::unistd::User;
use tokio::signal::unix::{SignalKind, signal};
use tonic::service::Routes;

#[derive(Parser)]
#[command(
    name = "collegium-worker-mail",
    version,
    about = "mail::* over each agent's own mailbox, and the daemon's inbound poll"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the mail tools and the Mailbox service.
    Serve(ServeArgs),
}

#[derive(clap::Args)]
struct ServeArgs {
    /// The deployment's configuration file.
    #[arg(long)]
    config: PathBuf,
    /// The user the worker becomes when started as root.
    #[arg(long, default_value = "collegium-mail")]
    user: String,
    /// A uid allowed to connect; the daemon's user when not given.
    #[arg(long = "allow-uid")]
    allow_uids: Vec<u32>,
    /// A PEM file of authorities to trust beside the public roots (a
    /// deployment's own CA), once each.
    #[arg(long = "trust")]
    trust: Vec<PathBuf>,
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Serve(args),
    } = Cli::parse();
    match start(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("collegium-worker-mail: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// What the worker serves with, read while it may still read it.
struct Setup {
    mailboxes: Mailboxes,
    trust: Trust,
    runtime_dir: PathBuf,
    audit_dir: PathBuf,
    allowed: BTreeSet<u32>,
}

fn start(args: ServeArgs) -> anyhow::Result<()> {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    let started_as_root = nix::unistd::geteuid().is_root();
    // Looked up before anything is read: a root start with no user to
    // become stops here.
    let account = started_as_root
        .then(|| privilege::account(&args.user))
        .transpose()?;
    let setup = set_up(&args)?;
    if let Some(account) = &account {
        // Single-threaded still: every id of the one thread is dropped.
        privilege::become_user(account)?;
    }
    if nix::unistd::geteuid().is_root() {
        bail!(
            "the mail worker never serves as root: run it as its own user (collegium-mail, made by collegium-provision host), or start it as root with --user"
        );
    }
    let socket_dir =
        collegium_worker_kit::own_dir::own_dir(&setup.runtime_dir.join(NAMESPACE), 0o027)?;
    let audit_dir =
        collegium_worker_kit::own_dir::own_dir(&setup.audit_dir.join(NAMESPACE), 0o077)?;
    // Before any thread exists: the flag is per thread, and every thread the
    // runtime starts inherits it.
    collegium_worker_kit::sandbox::forbid_new_privileges()?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve_until_stopped(setup, socket_dir, audit_dir))
}

fn set_up(args: &ServeArgs) -> anyhow::Result<Setup> {
    let loaded = collegium_control::config::load(&args.config)
        .map_err(|e| anyhow::anyhow!("{}", e.report()))?;
    let deployment = &loaded.config.deployment;
    let daemon_name = deployment
        .daemon_user
        .clone()
        .unwrap_or_else(|| "collegium".to_string());
    let daemon = User::from_name(&daemon_name)
        .with_context(|| format!("looking up the daemon's user {daemon_name}"))?;
    let trust = Trust::load(&args.trust)?;
    let entries = settings::entries(&loaded)?;
    let reader = Files {
        daemon_uid: daemon.as_ref().map(|u| u.uid.as_raw()),
    };
    let mailboxes = settings::resolve(entries, &deployment.resources_root, &reader)?;
    let allowed: BTreeSet<u32> = if args.allow_uids.is_empty() {
        daemon.iter().map(|u| u.uid.as_raw()).collect()
    } else {
        args.allow_uids.iter().copied().collect()
    };
    if allowed.is_empty() {
        bail!(
            "the daemon's user {daemon_name} does not exist: name the uid allowed to connect with --allow-uid"
        );
    }
    Ok(Setup {
        mailboxes,
        trust,
        runtime_dir: deployment.runtime_dir.clone(),
        audit_dir: deployment.audit_dir.clone(),
        allowed,
    })
}

async fn serve_until_stopped(
    setup: Setup,
    socket_dir: PathBuf,
    audit_dir: PathBuf,
) -> anyhow::Result<()> {
    // The shared initialiser: journal, text or JSON (issue 21 item 6).
    collegium_worker_kit::logging::init("collegium-worker-mail");
    let log = AuditLog::open(
        &audit_dir.join(format!("{NAMESPACE}.audit.jsonl")),
        NAMESPACE,
    )?;
    let mailboxes = Arc::new(setup.mailboxes);
    let trust = Arc::new(setup.trust);
    let tools = MailWorker::new(mailboxes.clone(), trust.clone(), log);
    let inbound = MailboxWorker::new(mailboxes.clone(), trust);
    tracing::info!(
        mailboxes = mailboxes.len(),
        agents = %mailboxes.keys().cloned().collect::<Vec<_>>().join(", "),
        "mail worker configured"
    );
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let policy = PeerPolicy {
        allowed_uids: setup.allowed,
    };
    // An arrival's whole text travels in one poll answer.
    let routes = Routes::new(ToolsetServer::new(tools))
        .add_service(MailboxServer::new(inbound).max_encoding_message_size(usize::MAX));
    // The directory (mode 0750, the daemon's group) gates who reaches the
    // socket, and the peer check who is served.
    let serving = serve_routes(&socket_dir.join("toolset.sock"), 0o666, policy, routes).await?;
    println!("ready");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    serving.shutdown().await?;
    Ok(())
}
