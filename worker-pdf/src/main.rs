//! `collegium-worker-pdf serve --socket PATH --audit PATH --allow-uid UID`:
//! the PDF worker (§3.4). It runs as its own unprivileged user
//! (`collegium-pdf` in a deployment) and refuses root; it sets
//! no-new-privileges before its runtime starts, serves `PdfReader`, prints
//! `ready` once its socket accepts connections and stops on SIGTERM.
//!
//! `collegium-worker-pdf read-child` is what it re-executes for each PDF.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use collegium_proto::pdf::v1::pdf_reader_server::PdfReaderServer;
use collegium_worker_kit::audit::AuditLog;
use collegium_worker_kit::serve::{PeerPolicy, serve_routes};
use collegium_worker_pdf::cgroup::MemoryCgroups;
use collegium_worker_pdf::child::{self, ChildLimits};
use collegium_worker_pdf::limits::Limits;
use collegium_worker_pdf::read::Reader;
use collegium_worker_pdf::service::{PdfWorker, WORKER};
use tokio::signal::unix::{SignalKind, signal};
use tonic::service::Routes;

const MIB: u64 = 1024 * 1024;

#[derive(Parser)]
#[command(
    name = "collegium-worker-pdf",
    version,
    about = "PDF text, each PDF read in a capped child process"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve `PdfReader` on a Unix socket.
    Serve {
        #[arg(long)]
        socket: PathBuf,
        /// The worker's hash-chained audit log.
        #[arg(long)]
        audit: PathBuf,
        /// A uid allowed to connect (the daemon's); repeatable.
        #[arg(long = "allow-uid", required = true)]
        allow_uids: Vec<u32>,
        /// The socket's mode; its directory gates who reaches it.
        #[arg(long, default_value = "660", value_parser = octal)]
        socket_mode: u32,
        /// A child is killed once its resident memory passes this.
        #[arg(long, default_value_t = 256)]
        memory_cap_mib: u64,
        /// The child's address-space limit.
        #[arg(long, default_value_t = 1024)]
        address_space_mib: u64,
        /// How many PDFs are read at once.
        #[arg(long, default_value_t = 2)]
        concurrency: u32,
        /// A PDF larger than this is not read.
        #[arg(long, default_value_t = 32)]
        body_cap_mib: u64,
        /// A cgroup v2 directory for the children's memory cgroups; unset,
        /// `collegium-pdf` in the host's hierarchy where it delegates the
        /// memory controller.
        #[arg(long)]
        cgroup_root: Option<PathBuf>,
    },
    /// Reads one PDF from stdin (the worker runs this per read).
    #[command(hide = true)]
    ReadChild {
        #[arg(long)]
        address_space: u64,
        #[arg(long)]
        cpu_seconds: u64,
        #[arg(long)]
        max_inflated: u64,
        #[arg(long)]
        body_cap: u64,
    },
}

fn octal(text: &str) -> Result<u32, String> {
    u32::from_str_radix(text, 8).map_err(|e| format!("not an octal mode: {e}"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::ReadChild {
            address_space,
            cpu_seconds,
            max_inflated,
            body_cap,
        } => child::main(ChildLimits {
            address_space_bytes: address_space,
            cpu_seconds,
            max_inflated_bytes: max_inflated,
            body_cap_bytes: body_cap,
        }),
        Command::Serve {
            socket,
            audit,
            allow_uids,
            socket_mode,
            memory_cap_mib,
            address_space_mib,
            concurrency,
            body_cap_mib,
            cgroup_root,
        } => {
            let limits = Limits {
                memory_cap_bytes: memory_cap_mib * MIB,
                address_space_bytes: address_space_mib * MIB,
                concurrency,
                body_cap_bytes: body_cap_mib * MIB,
                ..Limits::default()
            };
            match start(socket, audit, allow_uids, socket_mode, limits, cgroup_root) {
                Ok(()) => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("collegium-worker-pdf: {error:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn start(
    socket: PathBuf,
    audit: PathBuf,
    allow_uids: Vec<u32>,
    socket_mode: u32,
    limits: Limits,
    cgroup_root: Option<PathBuf>,
) -> anyhow::Result<()> {
    if nix::unistd::geteuid().is_root() {
        bail!(
            "the PDF worker does not run as root: run it as its own user (collegium-pdf, made by collegium-provision host)"
        );
    }
    if limits.concurrency == 0 {
        bail!("--concurrency must be at least 1");
    }
    if limits.address_space_bytes < limits.memory_cap_bytes {
        bail!("--address-space-mib must be at least --memory-cap-mib");
    }
    let log = AuditLog::open(&audit, WORKER)?;
    let exe = std::env::current_exe().context("finding the worker's own executable")?;
    let cgroups = MemoryCgroups::detect(cgroup_root);
    collegium_worker_kit::sandbox::forbid_new_privileges()?;
    let worker = PdfWorker::new(
        Reader {
            exe,
            limits,
            cgroups,
        },
        log,
    );
    let allowed: BTreeSet<u32> = allow_uids.into_iter().collect();
    let max_message = usize::try_from(limits.body_cap_bytes.saturating_mul(2) + MIB)
        .context("the body cap is past this machine's address space")?;
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(serve_until_stopped(
            socket,
            socket_mode,
            allowed,
            worker,
            max_message,
        ))
}

async fn serve_until_stopped(
    socket: PathBuf,
    mode: u32,
    allowed: BTreeSet<u32>,
    worker: PdfWorker,
    max_message: usize,
) -> anyhow::Result<()> {
    // The shared initialiser: journal, text or JSON (issue 21 item 6).
    collegium_worker_kit::logging::init("collegium-worker-pdf");
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let policy = PeerPolicy {
        allowed_uids: allowed,
    };
    let serving = serve_routes(
        &socket,
        mode,
        policy,
        // A PDF up to the body cap must arrive to be read; one over it
        // arrives too, to be refused in the framework's words (§3.4).
        Routes::new(PdfReaderServer::new(worker).max_decoding_message_size(max_message)),
    )
    .await?;
    println!("ready");
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    // Reads in flight end with their children (kill_on_drop).
    tokio::time::timeout(Duration::from_secs(5), serving.shutdown())
        .await
        .map_or(Ok(()), |r| r.map_err(anyhow::Error::from))
}
