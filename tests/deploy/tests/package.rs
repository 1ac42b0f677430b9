//! The Debian package (issue 21 item 8 and its Verification bullets): built
//! by cargo-deb from the binaries already built (`deploy_tests::package`),
//! then lintian with no error, its file list a snapshot, shellcheck on the
//! maintainer scripts, the extracted binaries answering `--version`, every
//! unit verified in the extracted tree, sysusers.d and tmpfiles.d from the
//! tree locking the app root (§6.1), and the release build's packages
//! unifying no test-only feature. Snapshots are rewritten with
//! `COLLEGIUM_UPDATE_SNAPSHOTS=1` after a deliberate change.

use std::os::unix::fs::MetadataExt;
use std::process::Command;

use deploy_tests::package::{self, built};
use deploy_tests::{APP_BINARIES, APP_ROOT, Root, UNITS, deploy_file, repo, run, said};

#[test]
fn i21_8_lintian_reports_no_error() {
    let package = built();
    // Overrides come from the package itself
    // (/usr/share/lintian/overrides/collegium), each commented there.
    let output = Command::new("lintian")
        .args(["--fail-on", "error", "--tag-display-limit", "0"])
        .arg(package.deb())
        .output()
        .expect("lintian (install it: tests/setup.sh)");
    let text = said(&output);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("E:")).collect();
    assert!(
        output.status.success() && errors.is_empty(),
        "lintian found errors:\n{text}"
    );
}

#[test]
fn i21_8_the_package_s_file_list_matches_its_snapshot() {
    let list = package::file_list(&built().deb());
    let path = repo().join("tests/deploy/snapshots/package-files.txt");
    if std::env::var_os("COLLEGIUM_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &list).expect("writing the snapshot");
        return;
    }
    let stored = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (set COLLEGIUM_UPDATE_SNAPSHOTS=1)", path.display()));
    assert_eq!(
        stored, list,
        "the package's files changed: review, then rewrite with COLLEGIUM_UPDATE_SNAPSHOTS=1"
    );
}

#[test]
fn i21_8_shellcheck_passes_the_maintainer_scripts() {
    let control = built().control();
    let scripts = ["postinst", "prerm", "postrm"];
    for script in scripts {
        assert!(
            control.join(script).is_file(),
            "the package has no {script}"
        );
    }
    let output = Command::new("shellcheck")
        .args(scripts.map(|s| control.join(s)))
        .output()
        .expect("shellcheck (install it: tests/setup.sh)");
    assert!(output.status.success(), "shellcheck:\n{}", said(&output));
}

/// No maintainer script enables or starts a unit: nothing runs before the
/// operator has written a configuration (issue 21 item 8).
#[test]
fn i21_8_the_maintainer_scripts_enable_and_start_nothing() {
    for script in ["postinst", "prerm", "postrm"] {
        let text = std::fs::read_to_string(built().control().join(script)).expect("a script");
        for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
            for verb in [
                "systemctl enable",
                "systemctl start",
                "systemctl restart",
                "deb-systemd",
            ] {
                assert!(!line.contains(verb), "{script}: `{}`", line.trim());
            }
        }
    }
}

/// The real dpkg runs the package's maintainer scripts in a throwaway
/// overlay of this host (`tests/deploy/scripts/dpkg-lifecycle.sh`): install
/// makes the users and closes the app root and enables nothing, an upgrade
/// keeps the app root closed, removal keeps the state, and only purge
/// deletes it (issue 21 item 8, §6.1).
#[test]
fn i21_8_install_upgrade_remove_and_purge_run_their_scripts_as_intended() {
    let output = Command::new("unshare")
        .arg("-m")
        .arg(repo().join("tests/deploy/scripts/dpkg-lifecycle.sh"))
        .arg(built().deb())
        .output()
        .expect("unshare (util-linux; the deployment tests run as root)");
    assert!(
        output.status.success(),
        "the package's life cycle:\n{}",
        said(&output)
    );
}

#[test]
fn i21_8_the_extracted_binaries_answer_version() {
    let tree = built().tree();
    for binary in APP_BINARIES {
        let path = tree.join(APP_ROOT.trim_start_matches('/')).join(binary);
        let output = Command::new(&path)
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let text = said(&output);
        assert!(
            output.status.success()
                && text.trim() == format!("{binary} {}", env!("CARGO_PKG_VERSION")),
            "{binary} --version: {text}"
        );
    }
}

#[test]
fn i21_8_every_unit_verifies_in_the_extracted_tree() {
    let root = Root::with_tree(&built().tree());
    let mut args = vec!["verify"];
    args.extend(UNITS.iter().map(|u| u.name));
    let output = root.analyze_in("lib/systemd/system", &args);
    let text = said(&output);
    assert!(
        output.status.success() && text.trim().is_empty(),
        "systemd-analyze verify in the package's tree:\n{text}"
    );
}

/// The package's sysusers.d and tmpfiles.d, run into its own extracted
/// tree, give the app root to the framework's users alone (§6.1).
#[test]
fn s6_1_the_package_s_tmpfiles_lock_the_app_root() {
    let root = Root::with_tree(&built().tree());
    let at = format!("--root={}", root.path().display());
    run(Command::new("systemd-sysusers").arg(&at));
    run(Command::new("systemd-tmpfiles").arg("--create").arg(&at));
    let group = std::fs::read_to_string(root.path().join("etc/group")).expect("/etc/group");
    let gid = |name: &str| -> u32 {
        group
            .lines()
            .find_map(|l| {
                let fields: Vec<&str> = l.split(':').collect();
                (fields.first() == Some(&name)).then(|| fields.get(2)?.parse().ok())?
            })
            .unwrap_or_else(|| panic!("no group {name}"))
    };
    for (path, owner_group) in [
        ("usr/lib/collegium", "collegium-app"),
        ("usr/lib/collegium/plugins", "collegium-plugins"),
        ("etc/collegium", "collegium"),
    ] {
        let meta = std::fs::metadata(root.path().join(path)).expect("the directory");
        assert_eq!(
            (meta.mode() & 0o7777, meta.uid(), meta.gid()),
            (0o750, 0, gid(owner_group)),
            "/{path}"
        );
    }
}

/// The release package's binaries are built from `deploy/build-deb`'s
/// packages alone, and cargo unifies no `test-hooks` into the daemon there;
/// with the e2e crate among them it would (the check can fail).
#[test]
fn i21_8_the_release_build_carries_no_test_hook() {
    let listed = run(Command::new(deploy_file("build-deb")).arg("--list-packages"));
    let packages: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    for binary in APP_BINARIES {
        assert!(
            packages.iter().any(|p| {
                let manifest =
                    std::fs::read_to_string(repo().join(member_dir(p)).join("Cargo.toml"))
                        .unwrap_or_default();
                manifest.contains(&format!("name = \"{binary}\""))
            }),
            "{binary} is built by none of build-deb's packages {packages:?}"
        );
    }
    let features = |extra: &[&str]| -> String {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = Command::new(cargo);
        command
            .current_dir(repo())
            .args([
                "tree",
                "--offline",
                "--locked",
                "-e",
                "normal",
                "--prefix",
                "none",
            ])
            .args(["-f", "{p} {f}"]);
        for p in packages
            .iter()
            .map(String::as_str)
            .chain(extra.iter().copied())
        {
            command.arg(format!("--package={p}"));
        }
        let output = run(&mut command);
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| l.starts_with("collegium-control "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // build-deb's last guard, on the built daemon, greps for the hook's log
    // line: it must still be the hook's.
    let guard = "test hook: wedging the store thread";
    let script = std::fs::read_to_string(deploy_file("build-deb")).expect("build-deb");
    let hook = std::fs::read_to_string(repo().join("control/src/daemon/notify.rs"))
        .expect("the test hook's source");
    assert!(script.contains(guard) && hook.contains(guard));
    let release = features(&[]);
    assert!(!release.is_empty(), "cargo tree shows no collegium-control");
    assert!(!release.contains("test-hooks"), "{release}");
    assert!(features(&["e2e"]).contains("test-hooks"));
}

/// The package's example configuration is `deploy/examples/collegium.toml`
/// with the packaged layout (`docs/deployment.md`) and secrets in files,
/// and nothing else: the two cannot drift apart.
#[test]
fn i21_8_the_packaged_example_differs_from_the_example_only_in_layout_and_secrets() {
    let layout = [
        ("state_dir", "\"/var/lib/collegium\""),
        ("runtime_dir", "\"/run/collegium\""),
        ("audit_dir", "\"/var/log/collegium\""),
        ("resources_root", "\"/etc/collegium/resources\""),
        ("plugins_root", "\"/usr/lib/collegium/plugins\""),
        ("workspaces_root", "\"/var/lib/collegium-workspaces\""),
        ("homes_root", "\"/var/lib/collegium-homes\""),
        ("daemon_user", "\"collegium\""),
    ];
    let key = |l: &str| l.split('=').next().unwrap_or("").trim().to_string();
    // The tables from [deployment] on, without comments, blank lines and the
    // layout's keys.
    let body = |path: std::path::PathBuf| -> (Vec<String>, Vec<String>) {
        let text = std::fs::read_to_string(&path).expect("an example");
        let start = text.find("[deployment]").expect("a [deployment] table");
        let lines = text[start..]
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
        let (layout_lines, rest): (Vec<&str>, Vec<&str>) =
            lines.partition(|l| layout.iter().any(|(k, _)| key(l) == *k));
        (
            layout_lines.into_iter().map(str::to_string).collect(),
            rest.into_iter().map(str::to_string).collect(),
        )
    };
    let (_, example) = body(deploy_file("examples/collegium.toml"));
    let (packaged_layout, packaged) = body(deploy_file("debian/collegium.toml.example"));
    for (k, value) in layout {
        let line = format!("{k} = {value}");
        assert!(
            packaged_layout.contains(&line),
            "the packaged example does not say `{line}`: {packaged_layout:?}"
        );
    }
    assert_eq!(
        example.len(),
        packaged.len(),
        "the two have different tables"
    );
    for (ours, theirs) in example.iter().zip(&packaged) {
        if ours == theirs {
            continue;
        }
        // A secret may differ, and only to a file in the secrets directory.
        assert!(
            key(ours) == key(theirs)
                && ["password", "api_key"].contains(&key(ours).as_str())
                && theirs.contains("{ file = \"/etc/collegium/secrets/"),
            "the packaged example differs beyond its layout and secrets:\n  {ours}\n  {theirs}"
        );
    }
}

/// A workspace member's directory, by its package name.
fn member_dir(package: &str) -> &str {
    match package {
        "collegium-control" => "control",
        "collegium-provision" => "provisioner",
        other => other.strip_prefix("collegium-").unwrap_or(other),
    }
}

/// Issue 21 item 8: the package depends on Chromium, which the browser
/// worker runs, and on systemd, whose units and tools it ships for.
#[test]
fn i21_8_the_package_depends_on_chromium_and_systemd() {
    let control = std::fs::read_to_string(built().control().join("control")).expect("control");
    let depends = control
        .lines()
        .find_map(|line| line.strip_prefix("Depends:"))
        .unwrap_or_else(|| panic!("no Depends field:\n{control}"));
    let named: Vec<&str> = depends
        .split(',')
        .map(|d| d.split_whitespace().next().unwrap_or_default())
        .collect();
    for needed in ["chromium", "systemd"] {
        assert!(named.contains(&needed), "Depends lacks {needed}: {depends}");
    }
}
