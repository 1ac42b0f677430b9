//! The shell worker's launcher, as a program of its own (ARCHITECTURE §4):
//! the worker execs it once per command, so what it costs to start is paid
//! by every command. Built apart from the worker, it carries only the
//! launcher's code, not the worker's gRPC server and the framework it
//! links: a fifth of the size to load, relocate and fork.
//!
//! `collegium-shell-launch measure-home` measures an agent's home as its
//! user instead (`home`): the other errand the worker sends as root to
//! become an agent.

fn main() -> std::process::ExitCode {
    match std::env::args_os().nth(1) {
        Some(errand) if errand == "measure-home" => collegium_worker_shell::home::measure_main(),
        _ => collegium_worker_shell::launch::main(),
    }
}
