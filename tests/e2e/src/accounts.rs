//! OS users made for one test, and the configuration lines that run the
//! daemon as one of them (A21: the daemon runs as its own user).

use std::process::Command;

use nix::unistd::User;

use crate::Harness;

/// The harness's line allowing root (`Harness::write_config`).
pub const ALLOW_ROOT: &str = "allow_root = true\n";

/// A system user made for one test and removed after it.
pub struct SystemUser {
    pub name: String,
}

impl SystemUser {
    /// Creates `collegium-e2e-{tag}{pid}`: `tag` tells apart the users one
    /// test makes (a name stays within useradd's 32 characters).
    pub fn create(tag: &str) -> Self {
        let name = format!("collegium-e2e-{tag}{}", std::process::id());
        let status = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
            ])
            .arg(&name)
            .status()
            .expect("run useradd");
        assert!(status.success(), "useradd {name}");
        Self { name }
    }

    pub fn user(&self) -> User {
        User::from_name(&self.name)
            .expect("lookup")
            .expect("the user exists")
    }
}

impl Drop for SystemUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).status();
    }
}

/// The effective uid of process `pid`, from `/proc`.
pub fn effective_uid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().nth(1))
        .and_then(|uid| uid.parse().ok())
        .expect("an Uid line")
}

impl Harness {
    /// Sets `line` under `[deployment]`.
    pub fn deployment_line(&self, line: &str) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        let text = text.replacen("[deployment]\n", &format!("[deployment]\n{line}\n"), 1);
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Takes out the harness's `allow_root = true`.
    pub fn forbid_root(&self) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        assert!(text.contains(ALLOW_ROOT), "the harness allows root");
        std::fs::write(&self.config, text.replacen(ALLOW_ROOT, "", 1)).expect("write config");
    }

    /// Names `user` the daemon's user, allows no root, provisions, and
    /// gives it the directories it writes beside its state (sockets, audit
    /// logs, workspaces), as deploy/tmpfiles.d makes them; the harness's
    /// directory above them is passable (0755).
    pub async fn provision_for_daemon_user(&self, user: &User) {
        self.forbid_root();
        self.deployment_line(&format!("daemon_user = \"{}\"", user.name));
        self.provision().await.expect("provisioned");
        let owned = [
            self.state_dir(),
            self.dir.path().join("run"),
            self.dir.path().join("audit"),
            self.dir.path().join("workspaces"),
        ];
        for dir in &owned {
            std::fs::create_dir_all(dir).expect("mkdir");
            let chowned = Command::new("chown")
                .arg("-R")
                .arg(format!("{}:{}", user.uid, user.gid))
                .arg(dir)
                .status()
                .expect("chown");
            assert!(chowned.success(), "chown {}", dir.display());
        }
    }
}
