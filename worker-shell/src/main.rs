//! `collegium-worker-shell launch`: the launcher, exec'd by the worker for
//! each command (ARCHITECTURE §4). It reads its request on stdin.

use std::process::ExitCode;

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("launch") => collegium_worker_shell::launch::main(),
        _ => {
            eprintln!("usage: collegium-worker-shell launch < REQUEST");
            ExitCode::from(2)
        }
    }
}
