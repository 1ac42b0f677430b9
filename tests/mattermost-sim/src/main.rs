//! `mattermost-sim`: the Mattermost simulator as a program, for the demo and
//! for tests in other languages.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "mattermost-sim",
    version,
    about = "A Mattermost API v4 simulator with a browser client"
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8065")]
    listen: SocketAddr,
    /// Keep state in this file across restarts (in memory otherwise).
    #[arg(long)]
    state: Option<PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    let running = mattermost_sim::start(
        cli.listen,
        &mattermost_sim::Options {
            state_file: cli.state,
        },
    )
    .await?;
    // The one line a launcher waits for.
    println!("mattermost-sim listening on {}", running.url);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("stopping");
    Ok(())
}
