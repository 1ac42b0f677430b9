//! `collegium-provision mattermost --config FILE`: converges Mattermost to
//! the configuration, printing one line per change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "collegium-provision",
    version,
    about = "Converges Mattermost to a Collegium configuration"
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
}

fn main() -> ExitCode {
    let Cli {
        command: Command::Mattermost { config },
    } = Cli::parse();
    let loaded = match collegium_control::config::load(&config) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprint!("{}", error.report());
            return ExitCode::FAILURE;
        }
    };
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
    match runtime.block_on(collegium_provision::mattermost::provision(&loaded)) {
        Ok(outcome) if outcome.changes.is_empty() => {
            println!("Mattermost already matches the configuration; nothing changed.");
            ExitCode::SUCCESS
        }
        Ok(outcome) => {
            for change in &outcome.changes {
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
