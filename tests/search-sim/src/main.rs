//! `search-sim`: the search provider simulator as a program.

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "search-sim",
    version,
    about = "A scripted search provider speaking the Brave Web Search and SearXNG JSON wire formats"
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8091")]
    listen: SocketAddr,
    /// The key Brave's wire accepts in `X-Subscription-Token`.
    #[arg(long, default_value = "sim-brave-key")]
    brave_key: String,
    /// A bearer token SearXNG's wire requires (none by default, as SearXNG).
    #[arg(long)]
    searxng_key: Option<String>,
    /// Answer SearXNG's `format=json` with 403, as an instance whose
    /// settings do not enable it.
    #[arg(long)]
    searxng_json_disabled: bool,
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
    let config = search_sim::Config {
        brave_key: Some(cli.brave_key),
        searxng_key: cli.searxng_key,
        searxng_json: !cli.searxng_json_disabled,
    };
    let running = search_sim::start(cli.listen, config).await?;
    println!("search-sim listening on {}", running.url);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    Ok(())
}
