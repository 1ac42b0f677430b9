//! The Debian package (issue 21 item 8), built for the tests from the
//! binaries already in the target directory (the debug ones the workspace
//! run builds first, `tests/run`): `cargo deb --no-build --profile dev`. No
//! release build runs inside the test suite; `deploy/build-deb` makes the
//! release package, from the same metadata. The package is built once per
//! test process, in a directory of its own, from stripped copies of the
//! binaries, so nothing is written into the shared target directory.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use crate::{APP_BINARIES, repo, run};

/// The package's name (`[package.metadata.deb] name`).
pub const NAME: &str = "collegium";

/// A built package and its contents, extracted.
pub struct Package {
    dir: tempfile::TempDir,
}

impl Package {
    /// The `.deb` file.
    pub fn deb(&self) -> PathBuf {
        self.dir.path().join("collegium.deb")
    }

    /// The package's files, as `dpkg-deb -x` lays them out.
    pub fn tree(&self) -> PathBuf {
        self.dir.path().join("tree")
    }

    /// The package's control files (`postinst`, `prerm`, `postrm`, ...),
    /// as `dpkg-deb -e` lays them out.
    pub fn control(&self) -> PathBuf {
        self.dir.path().join("control")
    }
}

/// The package, built on first use.
pub fn built() -> &'static Package {
    static PACKAGE: OnceLock<Package> = OnceLock::new();
    PACKAGE.get_or_init(build)
}

/// The target directory this test binary was built in:
/// `TARGET/debug/deps/package-HASH`.
pub fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    exe.ancestors()
        .nth(3)
        .expect("a test binary under TARGET/debug/deps")
        .to_path_buf()
}

/// cargo-deb: on PATH, or where `tests/setup.sh` installs it.
pub fn cargo_deb() -> PathBuf {
    let tools = std::env::var_os("COLLEGIUM_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/collegium-tools"));
    let installed = tools.join("cargo/bin/cargo-deb");
    if installed.is_file() {
        return installed;
    }
    PathBuf::from("cargo-deb")
}

fn build() -> Package {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // A target directory of the package's own, holding stripped copies of
    // the debug binaries where cargo-deb's `--profile dev` looks for them.
    let debug = target_dir().join("debug");
    let own = dir.path().join("target/debug");
    std::fs::create_dir_all(&own).expect("making the package's target directory");
    for binary in APP_BINARIES {
        let built = debug.join(binary);
        assert!(
            built.is_file(),
            "{} is not built: run `cargo build --workspace --bins` first (tests/run does)",
            built.display()
        );
        // Stripped on the way: a debug binary is hundreds of megabytes of
        // debug information, which neither the package nor lintian wants.
        run(Command::new("strip")
            .arg("--strip-unneeded")
            .arg("-o")
            .arg(own.join(binary))
            .arg(&built));
    }
    let deb = dir.path().join("collegium.deb");
    // Stripped above already. The system's gzip at its fastest: the test
    // reads the package, nobody downloads it, and cargo-deb's own
    // compressor takes minutes over debug binaries where gzip takes seconds.
    run(Command::new(cargo_deb())
        .current_dir(repo())
        .env("CARGO_TARGET_DIR", dir.path().join("target"))
        .args([
            "--package=collegium-control",
            "--no-build",
            "--profile=dev",
            "--no-strip",
            "--offline",
            "--locked",
            "--fast",
            "--compress-type=gz",
            "--compress-system",
            "--quiet",
        ])
        .arg(format!("--output={}", deb.display())));
    run(Command::new("dpkg-deb")
        .arg("-x")
        .arg(&deb)
        .arg(dir.path().join("tree")));
    run(Command::new("dpkg-deb")
        .arg("-e")
        .arg(&deb)
        .arg(dir.path().join("control")));
    Package { dir }
}

/// `dpkg-deb -c`'s list as `MODE OWNER PATH [-> TARGET]` lines, sorted by
/// path: what the package installs and with which modes, without the sizes
/// and times that change with every build.
pub fn file_list(deb: &Path) -> String {
    let output = run(Command::new("dpkg-deb").arg("-c").arg(deb));
    let mut lines: Vec<(String, String)> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (mode, owner) = (fields.first()?, fields.get(1)?);
            let path = fields.get(5)?;
            let rest = fields.get(6..).map(|r| r.join(" ")).unwrap_or_default();
            let shown = format!("{mode} {owner} {path} {rest}")
                .trim_end()
                .to_string();
            Some((path.to_string(), shown))
        })
        .collect();
    lines.sort();
    lines.into_iter().map(|(_, l)| l + "\n").collect()
}
