//! The fixture toolset as a worker process, for scenarios that dispatch over
//! the real wire, and its declaration as the daemon's registry would hold it.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use collegium_control::tools::{Host, ToolsetDeclaration, ToolsetKind};
use collegium_control::workers::declarations;
use fixture_toolset::tools::NAMESPACE;

use crate::binary;

/// A running fixture worker. Killed when dropped.
pub struct FixtureProcess {
    pub child: Child,
    pub socket: PathBuf,
    pub audit: PathBuf,
    pub record: PathBuf,
}

impl FixtureProcess {
    /// Starts the fixture in `dir`, admitting `allow_uid`, as the OS user
    /// `run_as` (uid, gid) when given (root only). Returns once its socket
    /// accepts connections.
    pub fn start(dir: &std::path::Path, allow_uid: u32, run_as: Option<(u32, u32)>) -> Self {
        let socket = dir.join("fixture.sock");
        let audit = dir.join("fixture.audit.jsonl");
        let record = dir.join("fixture.asked.jsonl");
        let mut command = Command::new(binary("collegium-fixture-toolset"));
        command
            .arg("--socket")
            .arg(&socket)
            .arg("--audit")
            .arg(&audit)
            .arg("--record")
            .arg(&record)
            .args(["--allow-uid", &allow_uid.to_string()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if let Some((uid, gid)) = run_as {
            // std drops root's supplementary groups when it sets the uid.
            command.uid(uid).gid(gid);
        }
        let mut child = command.spawn().expect("spawn the fixture toolset");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the ready line");
        assert_eq!(line.trim(), "ready", "the fixture did not start");
        Self {
            child,
            socket,
            audit,
            record,
        }
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for FixtureProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The fixture's toolset as the registry declares it: what it reports, as
/// the daemon translates it.
pub fn declaration() -> ToolsetDeclaration {
    ToolsetDeclaration {
        namespace: NAMESPACE.into(),
        kind: ToolsetKind::Plugin,
        host: Host::Plugin,
        tools: fixture_toolset::tools::declarations()
            .iter()
            .map(declarations::tool)
            .collect(),
        settings_schema: fixture_toolset::tools::settings_schema(),
        skills: Vec::new(),
    }
}
