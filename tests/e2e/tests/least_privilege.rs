//! Least privilege, checked (issue 21 item 5; §6.1; ARCHITECTURE §1): the
//! daemon refuses root unless its configuration allows it, refuses to boot
//! while an agent's user can traverse the app root or the plugins root
//! (tried as each agent's user by the shell worker at its handshake, as the
//! reach of §6.4 is), and boots as a system user of its own. CI runs as
//! root; as anyone else these scenarios have nothing to show and return.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use collegium_provision::host::provision;
use e2e::accounts::{ALLOW_ROOT, SystemUser, effective_uid};
use e2e::{Harness, binary};

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

#[tokio::test(flavor = "multi_thread")]
async fn a21_a_daemon_started_as_root_is_refused_before_the_store_unless_the_configuration_allows_it()
 {
    let h = Harness::start().await;
    e2e::require_root();
    h.provision().await.expect("provisioned");
    h.forbid_root();
    let store = h.state_dir().join(collegium_control::daemon::STORE_FILE);
    assert!(!store.exists(), "provisioning makes no store");

    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains("boot refused: the daemon is running as root (uid 0)")
            && stderr.contains("Run it as the `collegium` user")
            && stderr.contains("set `allow_root = true` under [deployment]"),
        "{stderr}"
    );
    assert!(!store.exists(), "refused before the store is opened");

    // Allowed on purpose, the same daemon boots as root.
    h.deployment_line(ALLOW_ROOT.trim_end());
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
}

/// The harness's deployment with @mira holding the shell, her home and
/// workspace under a directory agents may pass through, and the app root
/// `app` beside them, so only the app root's own mode keeps her out. Each
/// test names its own directory: the tests of one file run at once.
fn shell_deployment_with_app_root(h: &Harness, name: &str) -> (PathBuf, PathBuf) {
    let roots = std::env::temp_dir().join(format!(
        "collegium-least-privilege-e2e-{}-{name}",
        std::process::id()
    ));
    h.agent_roots_at(&roots);
    h.grant_mira(&["workspace", "shell"]);
    chmod(&roots, 0o755);
    let app_root = roots.join("app");
    std::fs::create_dir_all(&app_root).expect("the app root");
    h.deployment_line(&format!("app_root = \"{}\"", app_root.display()));
    (roots, app_root)
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_boot_refuses_while_an_agents_user_can_traverse_the_app_root_and_boots_once_it_is_0750()
 {
    let h = Harness::start().await;
    let (roots, app_root) = shell_deployment_with_app_root(&h, "app");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    provision(&h.loaded()).expect("the host provisioned");
    chmod(&app_root, 0o755);
    let _worker = e2e::shell_worker::start(&h.config, 1, &[]).expect("the shell worker started");

    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "agent_reach.mira: cg-mira can traverse {}, so @mira's commands could read the framework's code",
            app_root.display()
        )) && stderr.contains("mode 0750")
            && stderr.contains(&format!(
                "chown root:collegium-app {0} && chmod 0750 {0}",
                app_root.display()
            )),
        "{stderr}"
    );
    let plugins_root = h.loaded().config.deployment.plugins_root;
    assert!(
        !stderr.contains(&format!("traverse {}", plugins_root.display())),
        "the provisioner closed the plugins root (root, its group's, 0750): {stderr}"
    );

    // Root's and 0750, the same worker's next handshake finds the walk
    // denied to mira's user, and the daemon boots.
    chmod(&app_root, 0o750);
    let mut daemon = h.daemon();
    daemon.wait_for("agents are listening");
    drop(daemon);
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn s6_1_boot_refuses_while_an_agents_user_can_traverse_the_plugins_root() {
    let h = Harness::start().await;
    let (roots, app_root) = shell_deployment_with_app_root(&h, "plugins");
    e2e::require_root();
    h.provision().await.expect("provisioned");
    provision(&h.loaded()).expect("the host provisioned");
    chmod(&app_root, 0o750);
    // A plugins root agents pass through, outside the app root: as an
    // operator who put it beside the homes would have it.
    let plugins_root = roots.join("plugins");
    std::fs::create_dir_all(&plugins_root).expect("the plugins root");
    chmod(&plugins_root, 0o755);
    let text = std::fs::read_to_string(&h.config).expect("config");
    let here = h.dir.path().display().to_string();
    std::fs::write(
        &h.config,
        text.replacen(
            &format!("plugins_root = \"{here}/plugins\""),
            &format!("plugins_root = \"{}\"", plugins_root.display()),
            1,
        ),
    )
    .expect("write config");
    let _worker = e2e::shell_worker::start(&h.config, 1, &[]).expect("the shell worker started");

    let (code, stderr) = h.daemon_refusal();
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "agent_reach.mira: cg-mira can traverse {}",
            plugins_root.display()
        )) && stderr.contains("collegium-plugins"),
        "{stderr}"
    );
    assert!(
        !stderr.contains(&format!("traverse {}", app_root.display())),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&roots);
}

#[tokio::test(flavor = "multi_thread")]
async fn a21_the_daemon_boots_as_a_system_user_of_its_own() {
    let h = Harness::start().await;
    e2e::require_root();
    let account = SystemUser::create("");
    let user = account.user();
    // As a deployment has it: the configuration names the daemon's user,
    // which the provisioner gives the state directory and the token file,
    // and nothing allows root. The workspaces root is its too: it fills
    // each agent's workspace (A2).
    h.provision_for_daemon_user(&user).await;
    assert!(
        std::fs::metadata(binary("collegium"))
            .expect("the binary")
            .permissions()
            .mode()
            & 0o001
            != 0,
        "the daemon's user can run the built binary"
    );

    let mut command = Command::new(binary("collegium"));
    command.uid(user.uid.as_raw()).gid(user.gid.as_raw());
    let mut daemon = h.daemon_from(command);
    daemon.wait_for("agents are listening");
    assert_eq!(
        effective_uid(daemon.child.id()),
        user.uid.as_raw(),
        "the daemon runs as its own user"
    );
    daemon.terminate();
    daemon.wait_for("stopped cleanly");
}
