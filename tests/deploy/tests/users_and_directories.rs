//! sysusers.d and tmpfiles.d into a temporary root (issue 21 item 3, §6.1):
//! the framework's users and groups, and the directories with owners and
//! modes that keep agents' users out.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;

use deploy_tests::{Root, deploy_file, run};

/// `name:x:id:...` lines of a root's `/etc/passwd` or `/etc/group`: each
/// name's id and its fourth field (a group's members).
fn table(root: &Path, file: &str) -> BTreeMap<String, (u32, String)> {
    std::fs::read_to_string(root.join("etc").join(file))
        .unwrap_or_else(|e| panic!("/etc/{file}: {e}"))
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            Some((
                fields[0].to_string(),
                (fields.get(2)?.parse().ok()?, fields.get(3)?.to_string()),
            ))
        })
        .collect()
}

fn provisioned() -> Root {
    let root = Root::empty();
    run(Command::new("systemd-sysusers")
        .arg(format!("--root={}", root.path().display()))
        .arg(deploy_file("sysusers.d/collegium.conf")));
    run(Command::new("systemd-tmpfiles")
        .arg("--create")
        .arg(format!("--root={}", root.path().display()))
        .arg(deploy_file("tmpfiles.d/collegium.conf")));
    root
}

#[test]
fn s6_1_sysusers_makes_the_framework_s_users_and_groups_and_no_agent_s() {
    let root = provisioned();
    let users = table(root.path(), "passwd");
    let groups = table(root.path(), "group");
    let names: Vec<&str> = users.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "collegium",
            "collegium-browser",
            "collegium-mail",
            "collegium-pdf"
        ]
    );
    for user in &names {
        let passwd = std::fs::read_to_string(root.path().join("etc/passwd")).expect("passwd");
        let line = passwd
            .lines()
            .find(|l| l.starts_with(&format!("{user}:")))
            .expect("a line");
        assert!(
            line.ends_with(":/usr/sbin/nologin"),
            "{user} can log in: {line}"
        );
        // Each with a group of its own name.
        assert_eq!(groups[*user].0, users[*user].0, "{user}'s group");
    }
    let members = |group: &str| -> Vec<String> {
        let mut m: Vec<String> = groups[group]
            .1
            .split(',')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        m.sort();
        m
    };
    // The app root's group: the framework's users that run a binary from it
    // as themselves; the mail worker execs as root and drops later.
    assert_eq!(
        members("collegium-app"),
        ["collegium", "collegium-browser", "collegium-pdf"]
    );
    assert_eq!(members("collegium-plugins"), ["collegium"]);
    // The socket group: nobody else in it.
    assert!(members("collegium").is_empty());
}

#[test]
fn s6_1_tmpfiles_gives_each_directory_its_owner_and_mode() {
    let root = provisioned();
    let users = table(root.path(), "passwd");
    let groups = table(root.path(), "group");
    let uid = |name: &str| if name == "root" { 0 } else { users[name].0 };
    let gid = |name: &str| if name == "root" { 0 } else { groups[name].0 };
    let expected = [
        ("usr/lib/collegium", 0o750, "root", "collegium-app"),
        (
            "usr/lib/collegium/plugins",
            0o750,
            "root",
            "collegium-plugins",
        ),
        ("etc/collegium", 0o750, "root", "collegium"),
        ("etc/collegium/mailboxes", 0o700, "root", "root"),
        ("run/collegium", 0o711, "collegium", "collegium"),
        ("var/lib/collegium", 0o700, "collegium", "collegium"),
        ("var/log/collegium", 0o711, "collegium", "collegium"),
        (
            "var/log/collegium/mail",
            0o700,
            "collegium-mail",
            "collegium-mail",
        ),
        ("var/lib/collegium-homes", 0o755, "root", "root"),
        ("var/lib/collegium-workspaces", 0o755, "root", "root"),
    ];
    for (path, mode, user, group) in expected {
        let found = std::fs::symlink_metadata(root.path().join(path))
            .unwrap_or_else(|e| panic!("/{path}: {e}"));
        assert!(found.is_dir(), "/{path} is not a directory");
        assert_eq!(
            (found.mode() & 0o7777, found.uid(), found.gid()),
            (mode, uid(user), gid(group)),
            "/{path}: want {mode:04o} {user}:{group}"
        );
    }
}

/// No agent's user reaches the framework's code: the app root lets no one
/// through but root and its group (§6.1).
#[test]
fn s6_1_the_app_root_is_closed_to_others() {
    let root = provisioned();
    for path in [
        "etc/collegium/mailboxes",
        "usr/lib/collegium",
        "usr/lib/collegium/plugins",
        "etc/collegium",
        "var/lib/collegium",
    ] {
        let mode = std::fs::metadata(root.path().join(path))
            .expect("a directory")
            .mode();
        assert_eq!(
            mode & 0o007,
            0,
            "/{path} is open to others: {:04o}",
            mode & 0o7777
        );
    }
}

/// A second run changes nothing and says nothing: boot and the package's
/// scripts both run tmpfiles over what the first made.
#[test]
fn s6_1_tmpfiles_runs_again_cleanly() {
    let root = provisioned();
    let output = run(Command::new("systemd-tmpfiles")
        .arg("--create")
        .arg(format!("--root={}", root.path().display()))
        .arg(deploy_file("tmpfiles.d/collegium.conf")));
    assert!(
        deploy_tests::said(&output).trim().is_empty(),
        "{}",
        deploy_tests::said(&output)
    );
}
