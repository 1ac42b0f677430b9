//! Offline checks of the deployment files in `deploy/` (issue 21;
//! ARCHITECTURE §1, §4; `docs/deployment.md`). systemd cannot be PID 1 on
//! the build machines, so every unit is checked against a temporary root
//! tree: the units themselves, the host's own systemd units they order
//! against (targets, slices), and a stub executable wherever a unit runs one
//! of the workspace's binaries or a host program. A unit naming a binary the
//! workspace does not build finds nothing there, and `verify` says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub mod package;

/// One unit file in `deploy/systemd/`, with the name systemd-analyze is
/// given (a template by an instance of it) and its exposure ceiling on
/// `systemd-analyze security`'s 0–100 scale (15 for 1.5).
#[derive(Debug, Clone, Copy)]
pub struct Unit {
    pub file: &'static str,
    pub name: &'static str,
    /// The ceiling the tests enforce.
    pub ceiling: u32,
    /// Issue 21's ceiling where the unit cannot meet it, with the reason
    /// (`docs/deployment.md`, "Ratings").
    pub issue_ceiling: Option<(u32, &'static str)>,
}

/// Every unit the deployment ships, with its ceiling (issue 21 item 2).
pub const UNITS: &[Unit] = &[
    Unit {
        file: "collegium.service",
        name: "collegium.service",
        ceiling: 15,
        issue_ceiling: None,
    },
    Unit {
        file: "collegium-worker-pdf.service",
        name: "collegium-worker-pdf.service",
        ceiling: 10,
        issue_ceiling: None,
    },
    Unit {
        file: "collegium-worker-mail.service",
        name: "collegium-worker-mail.service",
        ceiling: 20,
        issue_ceiling: Some((
            15,
            "the worker starts as root to read the configuration (whose prompt files sit in the daemon's group's directory) and drops itself; User=root alone costs 0.4",
        )),
    },
    Unit {
        file: "collegium-worker-browser.service",
        name: "collegium-worker-browser.service",
        ceiling: 25,
        issue_ceiling: None,
    },
    Unit {
        file: "collegium-worker-shell.service",
        name: "collegium-worker-shell.service",
        ceiling: 35,
        issue_ceiling: Some((
            30,
            "root with CAP_SETUID/CAP_SETGID/CAP_KILL, user/PID/mount/IPC namespaces, the network unpoliced (§3.4, A2), no W^X for agents' JITs, mount and setrlimit for the launcher, cgroups under the host hierarchy",
        )),
    },
    Unit {
        file: "collegium-provision.service",
        name: "collegium-provision.service",
        ceiling: 35,
        issue_ceiling: None,
    },
    Unit {
        file: "collegium-plugin@.service",
        name: "collegium-plugin@demo.service",
        // Issue 21 names none: no looser than the daemon it stands beside.
        ceiling: 15,
        issue_ceiling: None,
    },
];

/// The workspace's binaries the units run from the app root
/// (`/usr/lib/collegium`, §6.1): each is a `[[bin]]` of a member crate.
pub const APP_BINARIES: &[&str] = &[
    "collegium",
    "collegium-provision",
    "collegium-worker-shell",
    "collegium-shell-launch",
    "collegium-worker-pdf",
    "collegium-worker-browser",
    "collegium-worker-mail",
];

/// The app root every binary is installed under.
pub const APP_ROOT: &str = "/usr/lib/collegium";

/// Host programs the units run: `sh -c` where a flag takes `id -u
/// collegium`, and the `ExecStartPre=+` lines handing a runtime directory to
/// the daemon's group.
pub const HOST_PROGRAMS: &[&str] = &["/usr/bin/sh", "/usr/bin/chgrp", "/usr/bin/chown"];

/// Where the host keeps its own units; the first that exists is copied.
const HOST_UNIT_DIRS: &[&str] = &["/usr/lib/systemd/system", "/lib/systemd/system"];

/// Where units go inside the root tree.
pub const UNIT_DIR: &str = "usr/lib/systemd/system";

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A file of `deploy/`, by its path beneath it.
pub fn deploy_file(path: &str) -> PathBuf {
    repo().join("deploy").join(path)
}

/// A temporary root tree holding the deployment's units.
pub struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    /// The host's units, the deployment's units, and a stub for every
    /// binary in `APP_BINARIES` and program in `HOST_PROGRAMS`.
    pub fn with_units() -> Root {
        let root = Root::empty();
        let units = root.path().join(UNIT_DIR);
        std::fs::create_dir_all(&units).expect("making the root's unit directory");
        let host = HOST_UNIT_DIRS
            .iter()
            .map(Path::new)
            .find(|d| d.is_dir())
            .expect("the host's systemd units (install systemd: tests/setup.sh)");
        // `cp -a` keeps the host's symlinks (aliases, masks) as they are.
        run(Command::new("cp").arg("-a").arg(host.join(".")).arg(&units));
        for unit in UNITS {
            std::fs::copy(
                deploy_file(&format!("systemd/{}", unit.file)),
                units.join(unit.file),
            )
            .unwrap_or_else(|e| panic!("copying {}: {e}", unit.file));
        }
        for binary in APP_BINARIES {
            root.stub(&format!("{APP_ROOT}/{binary}"));
        }
        for program in HOST_PROGRAMS {
            root.stub(program);
        }
        root
    }

    /// An empty root tree with an `/etc`.
    pub fn empty() -> Root {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir_all(dir.path().join("etc")).expect("making /etc");
        Root { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// An executable at `path` inside the root that does nothing.
    fn stub(&self, path: &str) {
        use std::os::unix::fs::PermissionsExt;
        let at = self.path().join(path.trim_start_matches('/'));
        std::fs::create_dir_all(at.parent().expect("a stub's parent"))
            .expect("making a stub's directory");
        std::fs::write(&at, "#!/bin/sh\nexit 0\n").expect("writing a stub");
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755))
            .expect("making a stub executable");
    }

    /// A root tree holding `tree` (a package's contents, extracted), the
    /// host's units beside it, and a stub for each host program the units
    /// run; the workspace's binaries are the tree's own.
    pub fn with_tree(tree: &Path) -> Root {
        let root = Root::empty();
        run(Command::new("cp")
            .arg("-a")
            .arg(tree.join("."))
            .arg(root.path()));
        let units = root.path().join(UNIT_DIR);
        std::fs::create_dir_all(&units).expect("making the root's unit directory");
        let host = HOST_UNIT_DIRS
            .iter()
            .map(Path::new)
            .find(|d| d.is_dir())
            .expect("the host's systemd units (install systemd: tests/setup.sh)");
        run(Command::new("cp").arg("-a").arg(host.join(".")).arg(&units));
        for program in HOST_PROGRAMS {
            root.stub(program);
        }
        root
    }

    /// `systemd-analyze ARGS --root=ROOT`, run in the root's unit
    /// directory so that unit names resolve to the files there.
    pub fn analyze(&self, args: &[&str]) -> Output {
        self.analyze_in(UNIT_DIR, args)
    }

    /// `systemd-analyze ARGS --root=ROOT`, run in `unit_dir` (beneath the
    /// root), where the unit names given resolve to files.
    pub fn analyze_in(&self, unit_dir: &str, args: &[&str]) -> Output {
        let mut command = Command::new("systemd-analyze");
        command
            .args(args)
            .arg(format!("--root={}", self.path().display()))
            .current_dir(self.path().join(unit_dir));
        command
            .output()
            .unwrap_or_else(|e| panic!("systemd-analyze: {e} (install systemd: tests/setup.sh)"))
    }
}

/// Runs `command`, panicking with its output unless it succeeds.
pub fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e} (install systemd: tests/setup.sh)"));
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Both streams of `output`, as text.
pub fn said(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}
