//! The end-to-end harness: both simulators in this process, a temporary
//! state directory, a real configuration file, the provisioner, and the real
//! `collegium` binary. Scenarios are named for the section they prove
//! (`s3_1_…`).

pub mod accounts;
pub mod browser_worker;
pub mod clearing;
pub mod fixture;
pub mod mail_worker;
pub mod notify;
pub mod people;
pub mod procs;
pub mod scenario;
pub mod shell_worker;
pub mod ssrf_lab;
pub mod triggers;
pub mod web_workers;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use collegium_control::chat::Rest;
use serde_json::{Value, json};

pub const ADMIN: &str = "admin";
pub const ADMIN_PASSWORD: &str = "Admin-pass-1234";

/// A running deployment's surroundings: Mattermost, a model provider, a
/// state directory and the configuration naming them.
pub struct Harness {
    pub mattermost: mattermost_sim::Running,
    pub model: model_sim::Running,
    pub dir: tempfile::TempDir,
    pub config: PathBuf,
    /// The admin's session, for scenarios to read and change the server.
    pub admin: Rest,
}

impl Harness {
    /// A fresh Mattermost whose first account is its admin, with the settings
    /// a Collegium deployment needs turned on by that admin, and a model that
    /// answers the boot check.
    pub async fn start() -> Self {
        let mattermost = mattermost_sim::start(
            "127.0.0.1:0".parse().expect("addr"),
            &mattermost_sim::Options::default(),
        )
        .await
        .expect("start the Mattermost simulator");
        let model = model_sim::start("127.0.0.1:0".parse().expect("addr"), false)
            .await
            .expect("start the model simulator");
        model.sim.script(
            "demo-model",
            vec![model_sim::script::Scripted {
                text: Some("OK".into()),
                standing: true,
                ..Default::default()
            }],
        );
        let rest = Rest::new(&mattermost.url).expect("client");
        let _: Value = rest
            .post("users", &json!({"username": ADMIN, "email": "admin@example.com", "password": ADMIN_PASSWORD}))
            .await
            .expect("the first account");
        let (_, token) = rest
            .login(ADMIN, ADMIN_PASSWORD)
            .await
            .expect("admin login");
        let admin = rest.with_token(&token);
        let _: Value = admin
            .put(
                "config/patch",
                &json!({"ServiceSettings": {
                    "EnableBotAccountCreation": true,
                    "EnableUserAccessTokens": true,
                    "AllowedUntrustedInternalConnections": "127.0.0.0/8"
                }}),
            )
            .await
            .expect("settings");
        let dir = tempfile::tempdir().expect("tempdir");
        {
            // Traversable, so toolsets run under their own users reach their
            // socket and audit directories; the state directory inside stays
            // the daemon's alone.
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
        }
        let config = dir.path().join("collegium.toml");
        let harness = Self {
            mattermost,
            model,
            dir,
            config,
            admin,
        };
        harness.write_config(&[]);
        harness
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// Writes the configuration, with `extra_channels` declared beside the
    /// standard ones. It says `allow_root = true`: CI runs the suite as
    /// root, and the daemon refuses uid 0 unless its configuration allows it
    /// (issue 21 item 5), so the tests that need root say so here, once. A
    /// test of the refusal, or of a daemon under its own user, removes the
    /// line (`ALLOW_ROOT`).
    pub fn write_config(&self, extra_channels: &[&str]) {
        let callback = free_port();
        let mut channels = String::new();
        for name in ["town-square", "research", "ops"]
            .iter()
            .chain(extra_channels)
        {
            channels.push_str(&format!("\n[[channels]]\nname = \"{name}\"\n"));
        }
        let text = format!(
            r#"[deployment]
operator_timezone = "Europe/Berlin"
main_channel = "town-square"
state_dir = "{state}"
resources_root = "{state}/resources"
plugins_root = "{root}/plugins"
runtime_dir = "{root}/run"
audit_dir = "{root}/audit"
workspaces_root = "{root}/workspaces"
homes_root = "{root}/homes"
# CI runs every test as root, and the daemon refuses root unless told
# (issue 21 item 5): the one place the suite says it needs root.
allow_root = true

[callbacks]
bind = "127.0.0.1:{callback}"
public_url = "http://127.0.0.1:{callback}"

[mattermost]
url = "{mattermost}"
team = "collegium"
team_display_name = "Collegium"

[mattermost.admin]
username = "{ADMIN}"
password = {{ value = "{ADMIN_PASSWORD}" }}

[models.demo]
provider = "openai-compatible"
model = "demo-model"
base_url = "{model}/v1"
context_window = 128000
{channels}
[[agents]]
username = "mira"
expertise = "Research on the open web."
prompt = "You research."
model = "demo"
grants = ["workspace"]

[[agents]]
username = "theo"
display_name = "Theo the Operator"
prompt = "You run operations."
model = "demo"
grants = ["ask"]
"#,
            state = self.state_dir().display(),
            root = self.dir.path().display(),
            mattermost = self.mattermost.url,
            model = self.model.url,
        );
        std::fs::write(&self.config, text).expect("write the configuration");
    }

    pub fn loaded(&self) -> collegium_control::config::LoadedConfig {
        collegium_control::config::load(&self.config).unwrap_or_else(|e| panic!("{}", e.report()))
    }

    /// Runs the provisioner in process.
    pub async fn provision(
        &self,
    ) -> Result<
        collegium_provision::mattermost::Outcome,
        collegium_provision::mattermost::ProvisionError,
    > {
        collegium_provision::mattermost::provision(&self.loaded()).await
    }

    /// The held credentials.
    pub fn credentials(&self) -> collegium_control::chat::credentials::Credentials {
        collegium_control::chat::credentials::load(&collegium_control::chat::credentials::path(
            &self.state_dir(),
        ))
        .expect("credentials")
    }

    /// The approval or question a prompt post carries. The daemon records
    /// the prompt's post id just after the post is made, so a test that has
    /// just seen the post polls for the row rather than racing that write.
    pub async fn decision_for_prompt(&self, post: &str) -> String {
        let store = collegium_control::store::Store::open(&self.state_dir().join("collegium.db"))
            .expect("store");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(id) = store.decision_for_prompt(post).expect("query") {
                return id;
            }
            assert!(
                Instant::now() < deadline,
                "no approval or question records the prompt post {post}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Installs the fixture toolset as the plugin `fixture` (§3.14): a
    /// directory under the plugins root holding a `serve` executable, which
    /// records every call asked of it in `record`.
    pub fn install_fixture_plugin(&self, record: &Path) -> PathBuf {
        self.install_plugin(
            "fixture",
            &format!(
                "#!/bin/sh\nexec '{}' --record '{}' \"$@\"\n",
                binary("collegium-fixture-toolset").display(),
                record.display()
            ),
        )
    }

    /// Installs the example plugin `bookmark` (§3.14) as a deployment
    /// would: its binary as the directory's `serve`, beside a copy of the
    /// crate's `skills/`.
    pub fn install_bookmark_plugin(&self) -> PathBuf {
        let dir = self.install_plugin(
            "bookmark",
            &format!(
                "#!/bin/sh\nexec '{}' \"$@\"\n",
                binary("collegium-plugin-bookmark").display()
            ),
        );
        let skills = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/bookmark/skills");
        copy_tree(&skills, &dir.join("skills"));
        dir
    }

    /// Installs the plugin `echo`, written against the proto types without
    /// the SDK (tests/proto-plugin).
    pub fn install_proto_plugin(&self) -> PathBuf {
        self.install_plugin(
            "echo",
            &format!(
                "#!/bin/sh\nexec '{}' \"$@\"\n",
                binary("collegium-proto-plugin").display()
            ),
        )
    }

    /// Puts the agents' homes and workspaces under `roots` (a directory
    /// agents may pass through: the harness's own becomes the
    /// configuration's, closed to them, once the host is provisioned) and
    /// names `nobody` the daemon's user, as the shell's deployments need.
    pub fn agent_roots_at(&self, roots: &Path) {
        std::fs::create_dir_all(roots).expect("roots");
        let here = self.dir.path().display().to_string();
        let text = std::fs::read_to_string(&self.config).expect("config");
        let text = text
            .replacen(
                &format!("workspaces_root = \"{here}/workspaces\""),
                &format!("workspaces_root = \"{}/workspaces\"", roots.display()),
                1,
            )
            .replacen(
                &format!("homes_root = \"{here}/homes\""),
                &format!("homes_root = \"{}/homes\"", roots.display()),
                1,
            )
            .replacen(
                "[deployment]\n",
                "[deployment]\ndaemon_user = \"nobody\"\n",
                1,
            );
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Moves the configuration into a directory of its own, `etc/`, as a
    /// host with plugin users needs it: the provisioner closes the
    /// configuration's directory to them, and by default the harness keeps
    /// every other directory beside its configuration file.
    pub fn config_in_its_own_dir(&mut self) {
        let dir = self.dir.path().join("etc");
        std::fs::create_dir_all(&dir).expect("the configuration's directory");
        let moved = dir.join("collegium.toml");
        std::fs::rename(&self.config, &moved).expect("move the configuration");
        self.config = moved;
    }

    /// Installs a plugin whose `serve` is `script`.
    pub fn install_plugin(&self, namespace: &str, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.dir.path().join("plugins").join(namespace);
        std::fs::create_dir_all(&dir).expect("plugin directory");
        let serve = dir.join("serve");
        std::fs::write(&serve, script).expect("serve");
        std::fs::set_permissions(&serve, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        dir
    }

    /// Sets deployment limits (`debounce_window_ms = 0`, …) in the
    /// configuration.
    pub fn limits(&self, lines: &str) {
        let mut text = std::fs::read_to_string(&self.config).expect("config");
        text.push_str(&format!("\n[limits]\n{lines}\n"));
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Runs the plugin `namespace` as the OS user `user`.
    pub fn run_plugin_as(&self, namespace: &str, user: &str) {
        let mut text = std::fs::read_to_string(&self.config).expect("config");
        text.push_str(&format!("\n[plugins.{namespace}]\nuser = \"{user}\"\n"));
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Grants @theo the mail toolset with a mailbox announced in ~ops. No
    /// mail worker serves it here, so the daemon would refuse to boot on
    /// it; provisioning still reads it (§3.1: an agent is put where its
    /// mail is announced).
    pub fn grant_theo_mail(&self) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        let text = text.replacen("grants = [\"ask\"]", "grants = [\"ask\", \"mail\"]", 1);
        let text = format!(
            "{text}\n[agents.settings.mail.mailbox]\naddress = \"ops@example.com\"\nannounce_channel = \"ops\"\n\n\
             [agents.settings.mail.mailbox.imap]\nhost = \"imap.example.com\"\nport = 993\nusername = \"ops@example.com\"\npassword = {{ file = \"/dev/null\" }}\n\n\
             [agents.settings.mail.mailbox.smtp]\nhost = \"smtp.example.com\"\nport = 587\nusername = \"ops@example.com\"\npassword = {{ file = \"/dev/null\" }}\n"
        );
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Gives @mira her own `[agents.settings.NAMESPACE]`, `lines` its keys.
    pub fn mira_settings(&self, namespace: &str, lines: &str) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        let theo = "\n[[agents]]\nusername = \"theo\"";
        let text = text.replacen(
            theo,
            &format!("\n[agents.settings.{namespace}]\n{lines}\n{theo}"),
            1,
        );
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Sets the deployment's `[settings.NAMESPACE]`, `lines` its keys.
    pub fn deployment_settings(&self, namespace: &str, lines: &str) {
        let mut text = std::fs::read_to_string(&self.config).expect("config");
        text.push_str(&format!("\n[settings.{namespace}]\n{lines}\n"));
        std::fs::write(&self.config, text).expect("write config");
    }

    /// Replaces @mira's grants.
    pub fn grant_mira(&self, grants: &[&str]) {
        let text = std::fs::read_to_string(&self.config).expect("config");
        let list = grants
            .iter()
            .map(|g| format!("\"{g}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let text = text.replacen("grants = [\"workspace\"]", &format!("grants = [{list}]"), 1);
        std::fs::write(&self.config, text).expect("write config");
    }

    /// The provisioned team, as the admin reads it.
    pub async fn team(&self) -> mattermost_wire::model::Team {
        self.admin
            .team_by_name("collegium")
            .await
            .expect("lookup")
            .expect("the team is provisioned")
    }

    /// Whether the team exists yet.
    pub async fn has_team(&self) -> bool {
        self.admin
            .team_by_name("collegium")
            .await
            .expect("lookup")
            .is_some()
    }

    /// A user by username, as the admin reads it.
    pub async fn user(&self, username: &str) -> mattermost_wire::model::User {
        self.admin
            .user_by_username(username)
            .await
            .expect("lookup")
            .unwrap_or_else(|| panic!("no user @{username}"))
    }

    /// The daemon, started as an operator starts it.
    pub fn daemon(&self) -> Daemon {
        self.daemon_from(Command::new(binary("collegium")))
    }

    /// The daemon, started by `launcher` (such as `faketime`), which runs it
    /// with the arguments an operator gives.
    pub fn daemon_from(&self, mut launcher: Command) -> Daemon {
        if launcher.get_program() != binary("collegium").as_os_str() {
            launcher.arg(binary("collegium"));
        }
        // A group of its own: a launcher such as `faketime` forks the daemon
        // rather than exec it, and killing the launcher alone would leave
        // the daemon running after the test (Drop kills the whole group).
        std::os::unix::process::CommandExt::process_group(&mut launcher, 0);
        let mut child = launcher
            .args(["run", "--config"])
            .arg(&self.config)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn collegium");
        let stderr = child.stderr.take().expect("stderr");
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        Daemon { child, lines }
    }

    /// The daemon run to its end: its exit code and everything it logged.
    /// A daemon that does not end within a minute is killed and the test
    /// fails, rather than waiting on a boot that was not refused.
    pub fn daemon_refusal(&self) -> (Option<i32>, String) {
        let mut child = Command::new(binary("collegium"))
            .args(["run", "--config"])
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn collegium");
        let mut stderr = child.stderr.take().expect("stderr");
        let (send, logged) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = std::io::Read::read_to_end(&mut stderr, &mut text);
            let _ = send.send(String::from_utf8_lossy(&text).into_owned());
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                // A process the daemon started shares its stderr: one that
                // outlived it would hold the pipe open.
                let text = logged
                    .recv_timeout(Duration::from_secs(10))
                    .unwrap_or_else(|_| {
                        panic!("the daemon ended ({status}), and something it started still holds its stderr open")
                    });
                return (status.code(), text);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the daemon was still running after a minute: its boot was not refused");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Harness {
    /// Removes the deployment's nftables table, where the host provisioner
    /// made one: a table left behind would go on rejecting a shared agent
    /// user (`cg-mira`) on a port a later test may use.
    fn drop(&mut self) {
        if !nix::unistd::geteuid().is_root() {
            return;
        }
        let table = collegium_control::host::reach::table_name(&self.state_dir());
        let _ = Command::new("nft")
            .args(["delete", "table", "inet", &table])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A daemon process and its JSON log lines.
pub struct Daemon {
    pub child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

fn parsed(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|_| json!({"message": line}))
}

impl Daemon {
    /// Reads log lines until one whose message contains `needle`, returning
    /// every line seen.
    pub fn wait_for(&mut self, needle: &str) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            let Ok(line) = self.lines.recv_timeout(left) else {
                break;
            };
            let value = parsed(&line);
            let found = value["message"]
                .as_str()
                .is_some_and(|m| m.contains(needle));
            seen.push(value);
            if found {
                return seen;
            }
        }
        panic!("no log line containing {needle:?}; saw {seen:#?}");
    }

    /// The lines logged since the last read, without waiting.
    pub fn logged(&mut self) -> Vec<Value> {
        self.lines.try_iter().map(|l| parsed(&l)).collect()
    }

    pub fn terminate(&mut self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill");
        assert!(status.success());
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Ok(group) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(group),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace binary, built beside this test (`cargo test --workspace`
/// builds every binary first).
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target directory");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace` (tests/run does)",
        path.display()
    );
    path
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Copies the directory `from` to `to`, files and subdirectories.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the copy");
    for entry in std::fs::read_dir(from).expect("read the directory") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

/// Fails the test unless it runs as root. The tests that make OS users,
/// namespaces, cgroups or nftables rules need it, and CI runs the suite as
/// root: returning early as anyone else would pass a test that checked
/// nothing.
pub fn require_root() {
    assert!(
        nix::unistd::geteuid().is_root(),
        "this test needs root (OS users, namespaces, cgroups): run the README's test command as root, as CI does"
    );
}
