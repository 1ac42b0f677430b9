//! `collegium`: the control daemon and the operator's command line.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use collegium_control::config;
use collegium_control::workers::audit::filter::{self, Filter, TimeArg};
use collegium_control::workers::audit::show::{self, Show};
use collegium_worker_kit::audit::Outcome;

#[derive(Parser)]
#[command(
    name = "collegium",
    version,
    about = "Runs LLM-backed agents as colleagues in Mattermost"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check or describe a configuration file.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Check what the workers recorded.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
    /// Run the control daemon.
    Run {
        /// The configuration file.
        #[arg(long)]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verify a worker's audit log: every line chained to the one before and,
    /// with the store, still reaching the last line the daemon recorded.
    /// Exit 1 naming the first bad line.
    Verify {
        /// The worker's audit log.
        file: PathBuf,
        /// The daemon's store (`collegium.db` in the state directory).
        #[arg(long, requires = "worker")]
        store: Option<PathBuf>,
        /// The worker whose log this is, as the configuration names it;
        /// needed with --store, which holds every worker's anchors.
        #[arg(long, requires = "store")]
        worker: Option<String>,
    },
    /// Show a worker's audit log, one call a line, after verifying it as
    /// `verify` does (a log that does not verify shows nothing; exit 1).
    /// With the store, each call says who approved it, when, in which
    /// channel, and links the approval prompt.
    Show {
        /// The worker's audit log.
        file: PathBuf,
        /// The daemon's store, opened read-only.
        #[arg(long, requires = "worker")]
        store: Option<PathBuf>,
        /// The worker whose log this is, as the configuration names it.
        #[arg(long, requires = "store")]
        worker: Option<String>,
        /// The configuration: the operator's timezone and the Mattermost
        /// site for links. Without it, times are UTC and links site-relative.
        #[arg(long)]
        config: Option<PathBuf>,
        /// Only this agent's calls.
        #[arg(long)]
        agent: Option<String>,
        /// Only this tool's calls (`namespace::tool`), or a namespace's.
        #[arg(long)]
        tool: Option<String>,
        /// Only calls that ended so (success, refusal, invalid_arguments,
        /// unresolved, failure, grant_refused, abandoned).
        #[arg(long, value_parser = filter::parse_outcome)]
        outcome: Option<Outcome>,
        /// Calls at or after: RFC 3339, or a date (its midnight in the
        /// operator's timezone).
        #[arg(long, value_name = "TIME", value_parser = filter::parse_time)]
        since: Option<TimeArg>,
        /// Calls at or before: RFC 3339, or a date (through its end).
        #[arg(long, value_name = "TIME", value_parser = filter::parse_time)]
        until: Option<TimeArg>,
        /// One JSON object a line, for log shippers (docs/audit.md).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum ConfigCommand {
    /// Check a whole file, printing every problem with its key; exit 1 on any.
    Check {
        /// The configuration file.
        file: PathBuf,
    },
    /// Print the JSON Schema of the configuration file.
    Schema,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Config {
            command: ConfigCommand::Check { file },
        } => config_check(&file),
        Command::Config {
            command: ConfigCommand::Schema,
        } => {
            let schema = config::schema::config_schema();
            match serde_json::to_string_pretty(&schema) {
                Ok(text) => {
                    println!("{text}");
                    ExitCode::SUCCESS
                }
                Err(error) => {
                    eprintln!("collegium: cannot render the schema: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Audit {
            command:
                AuditCommand::Verify {
                    file,
                    store,
                    worker,
                },
        } => match collegium_control::workers::audit::verify(
            &file,
            store.as_deref().zip(worker.as_deref()),
        ) {
            Ok(report) => {
                println!("{report}");
                ExitCode::SUCCESS
            }
            Err(error) => {
                println!("{error}");
                ExitCode::FAILURE
            }
        },
        Command::Audit {
            command:
                AuditCommand::Show {
                    file,
                    store,
                    worker,
                    config,
                    agent,
                    tool,
                    outcome,
                    since,
                    until,
                    json,
                },
        } => {
            let request = Show {
                file,
                anchored: store.zip(worker),
                config,
                filter: Filter {
                    agent,
                    tool,
                    outcome,
                    since,
                    until,
                },
                json,
            };
            if show::run(&request) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::Run { config } => match collegium_control::daemon::run(&config) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("collegium: {error}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Where an agent holds a `web::*` tool, the browser worker's unit drop-in
/// matching this configuration, with this host's resolvers
/// (`docs/deployment.md`).
fn print_browser_unit(loaded: &config::LoadedConfig) {
    let browses = loaded
        .agents
        .iter()
        .any(|a| a.tools.iter().any(|t| t.namespace == "web"));
    if !browses {
        return;
    }
    let web = loaded.config.web.clone().unwrap_or_default();
    let resolv_conf = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
    let resolvers = config::browser_unit::resolvers(&resolv_conf);
    print!(
        "\nThe browser worker's unit drop-in for this configuration:\n\n{}",
        config::browser_unit::render(&web, &resolvers)
    );
}

fn config_check(file: &std::path::Path) -> ExitCode {
    match config::load(file) {
        Ok(loaded) => {
            print!("{}", config::summary::render(&loaded));
            print_browser_unit(&loaded);
            check_plugins(&loaded)
        }
        Err(error) => {
            print!("{}", error.report());
            ExitCode::FAILURE
        }
    }
}

/// Starts each granted plugin to hold it, and the agents' settings, to
/// what it declares (§3.14); exit 1 on any refusal.
fn check_plugins(loaded: &config::LoadedConfig) -> ExitCode {
    use collegium_control::workers::plugins;
    if plugins::granted_plugins(loaded).is_empty() {
        return ExitCode::SUCCESS;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            println!("cannot start the plugins to check them: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(plugins::check::check(loaded)) {
        Ok(checked) => {
            print!("{}", plugins::check::summary(&checked));
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("{error}");
            ExitCode::FAILURE
        }
    }
}
