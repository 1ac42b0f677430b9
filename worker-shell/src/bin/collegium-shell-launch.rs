//! The shell worker's launcher, as a program of its own (ARCHITECTURE §4):
//! the worker execs it once per command, so what it costs to start is paid
//! by every command. Built apart from the worker, it carries only the
//! launcher's code, not the worker's gRPC server and the framework it
//! links: a fifth of the size to load, relocate and fork.
//!
//! Its first argument names its errand, each reading its request on stdin:
//! `launch` runs a command; `probe-reach` confines itself as a command is
//! confined, then connects to each endpoint it is given instead (§6.4);
//! `measure-home` measures an agent's home as its user (`home`).

fn main() -> std::process::ExitCode {
    let errand = std::env::args_os().nth(1);
    match errand.as_ref().and_then(|e| e.to_str()) {
        Some("launch") => collegium_worker_shell::launch::main(),
        Some("probe-reach") => collegium_worker_shell::launch::reach_main(),
        Some("measure-home") => collegium_worker_shell::home::measure_main(),
        // What the packaged binaries each answer (issue 21 item 8), so an
        // operator can tell which build is installed.
        Some("--version") => {
            println!("collegium-shell-launch {}", env!("CARGO_PKG_VERSION"));
            std::process::ExitCode::SUCCESS
        }
        _ => {
            eprintln!(
                "collegium-shell-launch: the shell worker runs this with its errand (launch, probe-reach or measure-home) and a request on stdin"
            );
            std::process::ExitCode::from(2)
        }
    }
}
