//! `collegium-fixture-toolset`: the fixture toolset as a worker process.
//! Prints `ready` on stdout once its socket accepts connections; stops
//! cleanly on SIGTERM or SIGINT.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use collegium_proto::toolset::v1::Gate;
use collegium_worker_kit::admission::Admission;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::grant::GrantVerifier;
use collegium_worker_kit::serve::{PeerPolicy, serve};
use fixture_toolset::tools::{self, NAMESPACE};
use tokio::signal::unix::{SignalKind, signal};

#[derive(Parser)]
#[command(
    name = "collegium-fixture-toolset",
    about = "The fixture toolset, served for tests"
)]
struct Cli {
    /// The socket to serve on.
    #[arg(long)]
    socket: PathBuf,
    /// The audit log.
    #[arg(long)]
    audit: PathBuf,
    /// Where to record every call asked of it, one JSON line each.
    #[arg(long)]
    record: Option<PathBuf>,
    /// A uid allowed to connect (the daemon's); repeat for several.
    #[arg(long = "allow-uid", required = true)]
    allow_uids: Vec<u32>,
    /// The socket's mode, in octal.
    #[arg(long, default_value = "660")]
    mode: String,
}

fn main() -> anyhow::Result<()> {
    // Before anything opens a descriptor of its own: what the process was
    // started with, for the tests of a plugin's environment (§3.14).
    if let Some(path) = std::env::var_os("FIXTURE_RECORD_PROCESS") {
        std::fs::write(&path, fixture_toolset::describe::process().to_string())
            .context("cannot record the process")?;
    }
    // Before the runtime starts its threads: the flag is per thread, and only
    // threads created after it is set inherit it. Tests of the handshake
    // check ask for a worker that leaves it unset.
    if std::env::var_os("FIXTURE_WITHOUT_NO_NEW_PRIVILEGES").is_none() {
        collegium_worker_kit::sandbox::forbid_new_privileges()?;
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve_until_stopped())
}

async fn serve_until_stopped() -> anyhow::Result<()> {
    // The shared initialiser: journal, text or JSON (issue 21 item 6).
    collegium_worker_kit::logging::init("collegium-fixture-toolset");
    let cli = Cli::parse();
    let mode = u32::from_str_radix(&cli.mode, 8).context("--mode is an octal number")?;
    let served: BTreeSet<String> = tools::TOOLS.iter().map(|t| t.name.to_string()).collect();
    let gated: BTreeSet<String> = tools::TOOLS
        .iter()
        .filter(|t| t.gate != Gate::None)
        .map(|t| t.name.to_string())
        .collect();
    let log = AuditLog::open(&cli.audit, NAMESPACE)?;
    let admission = Admission::new(NAMESPACE, GrantVerifier::new(NAMESPACE, served, gated), log);
    let fixture = fixture_toolset::Fixture::new(admission, cli.record);
    let policy = PeerPolicy {
        allowed_uids: cli.allow_uids.into_iter().collect(),
    };
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let serving = serve(&cli.socket, mode, policy, fixture).await?;
    println!("ready");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    serving.shutdown().await?;
    Ok(())
}
