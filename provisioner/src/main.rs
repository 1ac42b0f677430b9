//! `collegium-provision mattermost --config FILE` converges Mattermost to
//! the configuration; `collegium-provision host --config FILE` converges
//! this host (agent OS users, homes, workspaces, the daemon's directories,
//! the nftables rule keeping agents off the callback port).
//! Each prints one line per change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "collegium-provision",
    version,
    about = "Converges Mattermost and the host to a Collegium configuration"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The team, channels, bot accounts, their tokens, memberships and the
    /// `/collegium` command.
    Mattermost {
        /// The configuration file.
        #[arg(long)]
        config: PathBuf,
    },
    /// One OS user per shell-holding agent, its home and workspace, the
    /// daemon's directories with their owners and modes, and an nftables
    /// table rejecting the agents' connections to the callback port. Run as
    /// root.
    Host {
        /// The configuration file.
        #[arg(long)]
        config: PathBuf,
    },
}

fn main() -> ExitCode {
    let (config, host) = match Cli::parse().command {
        Command::Mattermost { config } => (config, false),
        Command::Host { config } => (config, true),
    };
    let loaded = match collegium_control::config::load(&config) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprint!("{}", error.report());
            return ExitCode::FAILURE;
        }
    };
    if host {
        return report(
            "The host",
            collegium_provision::host::provision(&loaded).map(|o| o.changes),
        );
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("collegium-provision: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    report(
        "Mattermost",
        runtime
            .block_on(collegium_provision::mattermost::provision(&loaded))
            .map(|o| o.changes),
    )
}

/// Prints what changed, or that nothing did, or why it failed.
fn report<E: std::fmt::Display>(what: &str, changed: Result<Vec<String>, E>) -> ExitCode {
    match changed {
        Ok(changes) if changes.is_empty() => {
            println!("{what} already matches the configuration; nothing changed.");
            ExitCode::SUCCESS
        }
        Ok(changes) => {
            for change in &changes {
                println!("{change}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("collegium-provision: {error}");
            ExitCode::FAILURE
        }
    }
}
