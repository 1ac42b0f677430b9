//! `model-sim`: the model provider simulator as a program.

use std::net::SocketAddr;

use clap::Parser;

#[derive(Parser)]
#[command(
    name = "model-sim",
    version,
    about = "A scripted model provider speaking the OpenAI and Anthropic wire formats"
)]
struct Cli {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8090")]
    listen: SocketAddr,
    /// Answer unscripted requests with demo replies that say they are scripted.
    #[arg(long)]
    demo: bool,
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
    let running = model_sim::start(cli.listen, cli.demo).await?;
    println!("model-sim listening on {}", running.url);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    Ok(())
}
