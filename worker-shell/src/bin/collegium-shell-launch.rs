//! The shell worker's launcher, as a program of its own (ARCHITECTURE §4):
//! the worker execs it once per command, so what it costs to start is paid
//! by every command. Built apart from the worker, it carries only the
//! launcher's code, not the worker's gRPC server and the framework it
//! links: a fifth of the size to load, relocate and fork.

fn main() -> std::process::ExitCode {
    collegium_worker_shell::launch::main()
}
