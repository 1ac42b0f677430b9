//! `collegium-provision host` (A2, §6.1): real OS users, owners and modes.
//! CI runs as root; elsewhere the provisioner refuses up front and these
//! scenarios check that refusal instead.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::Command;

use collegium_provision::host::{HostError, provision};
use e2e::{Harness, binary};
use nix::unistd::{User, geteuid};

/// The harness's configuration (the agents' roots in the harness's
/// directory) with a daemon user and @mira holding the shell.
fn shell_deployment(h: &Harness) {
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text.replacen(
        "[deployment]\n",
        "[deployment]\ndaemon_user = \"nobody\"\n",
        1,
    );
    std::fs::write(&h.config, text).expect("write config");
    h.grant_mira(&["workspace", "shell"]);
}

/// The host's users and groups are one state every test here changes, each
/// from a configuration of its own: a provisioner converging one test's
/// configuration undoes what another's wants (a plugin user's groups), and
/// a test asserting that a second run changes nothing would see it. The
/// provisioner takes its turn on the host itself; these tests take turns
/// for the whole of each.
async fn one_provisioner_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static HOST: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    HOST.lock().await
}

fn owner_and_mode(path: &Path) -> (u32, u32, u32) {
    let metadata = std::fs::metadata(path).expect("exists");
    (metadata.uid(), metadata.gid(), metadata.mode() & 0o7777)
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_each_shell_agent_gets_its_own_user_a_private_home_and_a_read_only_workspace() {
    let _host = one_provisioner_at_a_time().await;
    let h = Harness::start().await;
    shell_deployment(&h);
    if !geteuid().is_root() {
        assert!(matches!(provision(&h.loaded()), Err(HostError::NotRoot)));
        return;
    }
    let first = provision(&h.loaded()).expect("provisioned");
    let root = h.dir.path();
    let (home, workspace) = (root.join("homes/mira"), root.join("workspaces/mira"));
    assert!(
        first
            .changes
            .contains(&format!("created {}", home.display())),
        "{:?}",
        first.changes
    );
    let mira = User::from_name("cg-mira")
        .expect("lookup")
        .expect("mira's OS user exists");
    let nobody = User::from_name("nobody").expect("lookup").expect("nobody");
    assert_eq!(
        owner_and_mode(&home),
        (mira.uid.as_raw(), mira.gid.as_raw(), 0o700),
        "the home is mira's alone"
    );
    assert_eq!(
        owner_and_mode(&workspace),
        (nobody.uid.as_raw(), mira.gid.as_raw(), 0o2750),
        "the daemon writes the workspace; mira's group only reads it"
    );
    assert_eq!(
        owner_and_mode(&h.state_dir()),
        (nobody.uid.as_raw(), nobody.gid.as_raw(), 0o700),
        "the store's directory is the daemon's alone"
    );
    // Judged by what this run did: cg-theo may exist on a host where the
    // demo ran as root.
    assert!(
        !root.join("workspaces/theo").exists()
            && !first.changes.iter().any(|c| c.contains("cg-theo")),
        "theo holds neither the shell nor the workspace: {:?}",
        first.changes
    );

    // Drift is repaired; a run over a converged host changes nothing.
    std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let repaired = provision(&h.loaded()).expect("provisioned");
    assert_eq!(
        repaired.changes,
        [format!(
            "set the mode of {} to 0700 (was 0755)",
            home.display()
        )]
    );
    let output = Command::new(binary("collegium-provision"))
        .args(["host", "--config"])
        .arg(&h.config)
        .output()
        .expect("run the provisioner");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "The host already matches the configuration; nothing changed.\n"
    );
}

/// Provisioners run at once where @mira's user is not made yet each find
/// it missing, and `useradd` lets every one of them make it, the last under
/// another uid than the home was given. Each provisioner waits its turn on
/// the host, so the home is hers as her user stands.
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_provisioners_run_at_once_take_turns_on_the_host() {
    let _host = one_provisioner_at_a_time().await;
    e2e::require_root();
    let h = Harness::start().await;
    shell_deployment(&h);
    let _ = Command::new("userdel").arg("cg-mira").output();
    let loaded = h.loaded();
    std::thread::scope(|s| {
        let runs: Vec<_> = (0..8).map(|_| s.spawn(|| provision(&loaded))).collect();
        for run in runs {
            run.join()
                .expect("a provisioner's thread")
                .expect("provisioned");
        }
    });
    let mira = User::from_name("cg-mira")
        .expect("lookup")
        .expect("mira's OS user exists");
    let home = owner_and_mode(&h.dir.path().join("homes/mira"));
    assert_eq!(
        (home.0, home.1),
        (mira.uid.as_raw(), mira.gid.as_raw()),
        "the home is owned by mira's user as it stands"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_two_agents_that_would_share_an_os_user_are_refused_by_name() {
    let _host = one_provisioner_at_a_time().await;
    let h = Harness::start().await;
    shell_deployment(&h);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let text = text
        .replacen("username = \"mira\"", "username = \"ops-bot\"", 1)
        .replacen("username = \"theo\"", "username = \"ops.bot\"", 1)
        .replacen("grants = [\"ask\"]", "grants = [\"ask\", \"shell\"]", 1);
    std::fs::write(&h.config, text).expect("write config");
    let refused =
        collegium_control::host::layout(&h.loaded(), "nobody").expect_err("two agents, one user");
    assert_eq!(
        refused.to_string(),
        "agents ops-bot and ops.bot would share the OS user `cg-ops-bot`; two agents never share one (§6.1): rename one of them"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_the_provisioner_never_follows_a_link_where_a_directory_goes() {
    let _host = one_provisioner_at_a_time().await;
    let h = Harness::start().await;
    shell_deployment(&h);
    e2e::require_root();
    let homes = h.dir.path().join("homes");
    std::fs::create_dir_all(&homes).expect("homes");
    let elsewhere = h.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("elsewhere");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    std::os::unix::fs::symlink(&elsewhere, homes.join("mira")).expect("link");
    let refused = provision(&h.loaded()).expect_err("a link where mira's home goes");
    assert!(matches!(refused, HostError::NotADirectory(_)), "{refused}");
    assert_eq!(
        owner_and_mode(&elsewhere).2,
        0o755,
        "what the link points at is untouched"
    );
}

/// The OS user `tests/setup.sh` creates for workers and plugins.
const PLUGIN_USER: &str = "collegium-test-worker";

/// A plugin user passes the plugin tree through a group of its own, and is
/// never in the daemon's group, which opens the configuration and the shell
/// worker's socket directory (§3.14, §6.1). One an earlier provisioner put
/// in the daemon's group is taken out.
#[tokio::test(flavor = "multi_thread")]
async fn s6_1_plugin_users_pass_the_plugin_tree_by_a_group_the_daemon_shares_with_them_alone() {
    use nix::unistd::Group;
    let _host = one_provisioner_at_a_time().await;
    let mut h = Harness::start().await;
    shell_deployment(&h);
    h.install_fixture_plugin(&h.dir.path().join("asked.jsonl"));
    h.run_plugin_as("fixture", PLUGIN_USER);
    if !geteuid().is_root() {
        assert!(matches!(provision(&h.loaded()), Err(HostError::NotRoot)));
        return;
    }
    let refused = provision(&h.loaded()).expect_err("the plugin tree inside the configuration's");
    assert!(
        matches!(refused, HostError::PluginPathUnderConfig { ref plugin, key: "deployment.plugins_root", .. } if plugin == "fixture"),
        "{refused}"
    );
    h.config_in_its_own_dir();
    let plugin = User::from_name(PLUGIN_USER)
        .expect("lookup")
        .unwrap_or_else(|| panic!("no OS user {PLUGIN_USER}: run tests/setup.sh"));
    let nobody = User::from_name("nobody").expect("lookup").expect("nobody");
    let daemon_group = Group::from_gid(nobody.gid)
        .expect("lookup")
        .expect("the daemon's group");
    // As the provisioner before this one left it.
    let joined = Command::new("usermod")
        .args(["--append", "--groups", &daemon_group.name, PLUGIN_USER])
        .status()
        .expect("usermod");
    assert!(joined.success());

    let first = provision(&h.loaded()).expect("provisioned");
    let in_group = |name: &str| {
        Group::from_name(name)
            .expect("lookup")
            .map(|g| (g.gid, g.mem))
            .unwrap_or_else(|| panic!("no group {name}"))
    };
    let (_, daemon_members) = in_group(&daemon_group.name);
    assert!(
        !daemon_members.iter().any(|m| m == PLUGIN_USER),
        "{PLUGIN_USER} is out of the daemon's group: {daemon_members:?} ({:?})",
        first.changes
    );
    assert!(
        first.changes.contains(&format!(
            "removed the plugin user {PLUGIN_USER} from the daemon's group {}",
            daemon_group.name
        )),
        "{:?}",
        first.changes
    );
    let (plugins_gid, plugin_members) = in_group("nobody-plugins");
    for member in ["nobody", PLUGIN_USER] {
        assert!(
            plugin_members.iter().any(|m| m == member),
            "{member} in nobody-plugins: {plugin_members:?}"
        );
    }
    assert_eq!(
        owner_and_mode(&h.loaded().config.deployment.plugins_root),
        (0, plugins_gid.as_raw(), 0o750),
        "the plugin tree: root's, passable by the plugin users' group"
    );
    assert_eq!(
        owner_and_mode(h.config.parent().expect("config dir")),
        (0, nobody.gid.as_raw(), 0o750),
        "the configuration: the daemon's group alone"
    );
    assert!(plugin.gid != nobody.gid);
    let again = provision(&h.loaded()).expect("provisioned");
    assert_eq!(again.changes, Vec::<String>::new(), "converged");
}

/// The framework workers' own users (§3.4): system users with a group of
/// their own name, no login shell and no home; made once, and a second run
/// changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn s3_4_the_pdf_and_browser_workers_get_system_users_without_a_shell_or_a_home() {
    use collegium_provision::host::framework_users::{FRAMEWORK_USERS, NO_HOME};
    use nix::unistd::Group;
    let _host = one_provisioner_at_a_time().await;
    let h = Harness::start().await;
    shell_deployment(&h);
    if !geteuid().is_root() {
        assert!(matches!(provision(&h.loaded()), Err(HostError::NotRoot)));
        return;
    }
    let existed: Vec<bool> = FRAMEWORK_USERS
        .iter()
        .map(|name| User::from_name(name).expect("lookup").is_some())
        .collect();
    let first = provision(&h.loaded()).expect("provisioned");
    for (name, existed) in FRAMEWORK_USERS.iter().zip(existed) {
        let user = User::from_name(name)
            .expect("lookup")
            .unwrap_or_else(|| panic!("no OS user {name}"));
        assert_eq!(user.shell, Path::new("/usr/sbin/nologin"), "{name}");
        assert_eq!(user.dir, Path::new(NO_HOME), "{name}");
        assert!(
            user.uid.as_raw() != 0 && user.uid.as_raw() < 1000,
            "{name} is a system user"
        );
        let group = Group::from_gid(user.gid).expect("lookup").expect("group");
        assert_eq!(&group.name, name, "its group is its own");
        let created = format!("created the framework worker's OS user and group {name}");
        assert_eq!(
            first.changes.contains(&created),
            !existed,
            "{:?}",
            first.changes
        );
    }
    assert!(!Path::new(NO_HOME).exists(), "no home was made");
    // Each worker's socket directory is its own, the daemon's group passing;
    // its audit directory is its own alone.
    let loaded = h.loaded();
    let deployment = &loaded.config.deployment;
    let daemon_gid = std::fs::metadata(&deployment.state_dir)
        .expect("state dir")
        .gid();
    for (user, dir) in collegium_provision::host::framework_users::WORKER_DIRS {
        let uid = User::from_name(user)
            .expect("lookup")
            .expect("user")
            .uid
            .as_raw();
        let socket_dir = std::fs::metadata(deployment.runtime_dir.join(dir)).expect("socket dir");
        assert_eq!(
            (socket_dir.uid(), socket_dir.gid()),
            (uid, daemon_gid),
            "{dir}"
        );
        assert_eq!(socket_dir.mode() & 0o7777, 0o750, "{dir}");
        let audit_dir = std::fs::metadata(deployment.audit_dir.join(dir)).expect("audit dir");
        assert_eq!(audit_dir.uid(), uid, "{dir}");
        assert_eq!(audit_dir.mode() & 0o7777, 0o700, "{dir}");
    }
    let again = provision(&h.loaded()).expect("provisioned");
    assert!(again.changes.is_empty(), "{:?}", again.changes);
}
