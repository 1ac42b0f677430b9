//! `collegium config check` against the example deployment, the valid
//! configurations and one invalid configuration per refusal
//! (`tests/config/invalid/`, indexed in `docs/config-refusals.md`). Each
//! invalid file states its expected problems in `# expect:` lines; the check
//! must report exactly those, so a file proves one refusal and nothing else.

use std::path::{Path, PathBuf};
use std::process::Command;

use collegium_control::config::{self, LoadError};

fn repo() -> PathBuf {
    Path::new(
        &*std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").into()),
    )
    .join("..")
}

fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn rendered_problems(error: &LoadError) -> Vec<String> {
    match error {
        LoadError::Invalid { problems, .. } => problems.iter().map(ToString::to_string).collect(),
        other => vec![other.to_string()],
    }
}

#[test]
fn the_example_deployment_and_every_valid_config_pass() {
    let mut files = vec![repo().join("deploy/examples/collegium.toml")];
    files.extend(toml_files(&repo().join("tests/config/valid")));
    for file in files {
        if let Err(error) = config::load(&file) {
            panic!(
                "{} should pass:\n{:#?}",
                file.display(),
                rendered_problems(&error)
            );
        }
    }
}

#[test]
fn every_invalid_config_fails_with_exactly_its_expected_problems() {
    let files = toml_files(&repo().join("tests/config/invalid"));
    assert!(files.len() >= 40, "the refusal corpus went missing");
    for file in files {
        let text = std::fs::read_to_string(&file).expect("read");
        let expected: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("# expect: "))
            .collect();
        assert!(
            !expected.is_empty(),
            "{} states no `# expect:` line",
            file.display()
        );
        let error = match config::load(&file) {
            Ok(_) => panic!("{} passed, but should be refused", file.display()),
            Err(error) => error,
        };
        let problems = rendered_problems(&error);
        assert_eq!(
            problems.len(),
            expected.len(),
            "{}: expected {expected:#?}\ngot {problems:#?}",
            file.display()
        );
        for want in &expected {
            assert!(
                problems.iter().any(|p| p.contains(want)),
                "{}: no problem contains {want:?}; got {problems:#?}",
                file.display()
            );
        }
    }
}

#[test]
fn the_refusal_index_lists_every_invalid_config_and_nothing_else() {
    let index = std::fs::read_to_string(repo().join("docs/config-refusals.md")).expect("index");
    let files = toml_files(&repo().join("tests/config/invalid"));
    for file in &files {
        let name = file
            .file_name()
            .expect("name")
            .to_string_lossy()
            .to_string();
        assert!(
            index.contains(&format!("`{name}`")),
            "docs/config-refusals.md does not list {name}"
        );
    }
    let listed = index.matches(".toml`").count();
    assert_eq!(
        listed,
        files.len(),
        "the index lists files that do not exist"
    );
}

fn collegium(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_collegium"))
        .args(args)
        .output()
        .expect("run collegium")
}

#[test]
fn the_command_exits_zero_with_a_summary_and_one_with_every_problem() {
    let example = repo().join("deploy/examples/collegium.toml");
    let ok = collegium(&["config", "check", example.to_str().expect("utf-8")]);
    assert_eq!(ok.status.code(), Some(0));
    let summary = String::from_utf8(ok.stdout).expect("utf-8");
    assert!(summary.contains("agents (2):"), "{summary}");
    assert!(summary.contains("shell::run (approval)"), "{summary}");
    assert!(
        summary.lines().count() <= 24,
        "more than one screen:\n{summary}"
    );

    let invalid = repo().join("tests/config/invalid/every-structural-problem-at-once.toml");
    let bad = collegium(&["config", "check", invalid.to_str().expect("utf-8")]);
    assert_eq!(bad.status.code(), Some(1));
    let report = String::from_utf8(bad.stdout).expect("utf-8");
    assert!(report.contains("has 3 problems"), "{report}");
    assert!(report.contains("  limits.action_budget: "), "{report}");
    assert!(report.contains("  agents[0].grants[0]: "), "{report}");

    let missing = collegium(&["config", "check", "/nonexistent/collegium.toml"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stdout)
            .contains("cannot read /nonexistent/collegium.toml")
    );
}

#[test]
fn a_secret_is_never_printed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let valid = std::fs::read_to_string(repo().join("tests/config/valid/minimal.toml"))
        .expect("read")
        .replace(
            "../resources",
            &repo().join("tests/config/resources").display().to_string(),
        )
        .replace(
            "context_window = 128000\n",
            "context_window = 128000\napi_key = { value = \"sk-never-shown-1234\" }\n",
        );
    let ok_file = dir.path().join("ok.toml");
    std::fs::write(&ok_file, &valid).expect("write");
    let ok = collegium(&["config", "check", ok_file.to_str().expect("utf-8")]);
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    assert!(!String::from_utf8_lossy(&ok.stdout).contains("sk-never-shown"));

    // A refused file whose problem sits beside the secret still hides it.
    let bad_file = dir.path().join("bad.toml");
    std::fs::write(
        &bad_file,
        valid.replace("api_key = { value", "api_key = { env = \"X\", value"),
    )
    .expect("write");
    let bad = collegium(&["config", "check", bad_file.to_str().expect("utf-8")]);
    assert_eq!(bad.status.code(), Some(1));
    let report = String::from_utf8_lossy(&bad.stdout);
    assert!(report.contains("models.sim.api_key"), "{report}");
    assert!(!report.contains("sk-never-shown"), "{report}");
}

#[test]
fn the_schema_command_prints_a_json_schema_that_accepts_the_example() {
    let out = collegium(&["config", "schema"]);
    assert_eq!(out.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(schema["title"], "Config");
    let example: toml::Table = toml::from_str(
        &std::fs::read_to_string(repo().join("deploy/examples/collegium.toml")).expect("read"),
    )
    .expect("toml");
    let instance = serde_json::to_value(example).expect("json");
    let validator = jsonschema::validator_for(&schema).expect("schema compiles");
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// Where an agent browses, the check prints the browser worker's unit
/// drop-in matching the `[web]` table (issue 21, `docs/deployment.md`); where
/// none does, it prints none.
#[test]
fn s3_4_the_check_prints_the_browser_unit_s_drop_in_where_an_agent_browses() {
    let browsing = repo().join("tests/config/valid/skills-assigned.toml");
    let ok = collegium(&["config", "check", browsing.to_str().expect("utf-8")]);
    let out = String::from_utf8_lossy(&ok.stdout);
    assert_eq!(ok.status.code(), Some(0), "{out}");
    assert!(
        out.contains("collegium-worker-browser.service.d/collegium.conf"),
        "{out}"
    );
    assert!(
        out.contains("IPAddressDeny=169.254.0.0/16 fe80::/10 10.0.0.0/8"),
        "{out}"
    );
    let example = repo().join("deploy/examples/collegium.toml");
    let quiet = collegium(&["config", "check", example.to_str().expect("utf-8")]);
    assert!(!String::from_utf8_lossy(&quiet.stdout).contains("IPAddressDeny"));
}

/// Issue 21 item 1: the mail worker's unit hands its mailbox passwords over
/// as credentials. Every process that loads the configuration sees their
/// paths, and those ordered before that unit (the provisioner) or holding
/// credentials of their own (the daemon) must not refuse a file that exists
/// only inside the mail worker's unit; the mail worker, whose credentials
/// they are, still refuses one that is missing, naming the key.
#[test]
fn i21_1_another_units_credential_is_not_looked_for_and_the_units_own_is() {
    let file = repo().join("tests/config/valid/credentials-of-other-units.toml");
    let check = |credentials: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_collegium"));
        command.args(["config", "check", file.to_str().expect("utf-8")]);
        command.env_remove("CREDENTIALS_DIRECTORY");
        if let Some(dir) = credentials {
            command.env("CREDENTIALS_DIRECTORY", dir);
        }
        let output = command.output().expect("run collegium");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };

    let (code, summary) = check(None);
    assert_eq!(code, Some(0), "{summary}");
    assert!(
        summary.contains("key from collegium.service's credential sim"),
        "{summary}"
    );
    let (code, summary) = check(Some("/run/credentials/collegium.service"));
    assert_eq!(
        code,
        Some(1),
        "the daemon's own credential is looked for: {summary}"
    );
    assert!(
        summary.contains(
            "models.sim.api_key.file: /run/credentials/collegium.service/sim does not exist"
        ),
        "{summary}"
    );
    assert!(!summary.contains("mailbox"), "{summary}");

    let (code, report) = check(Some("/run/credentials/collegium-worker-mail.service"));
    assert_eq!(code, Some(1), "{report}");
    for server in ["imap", "smtp"] {
        assert!(
            report.contains(&format!(
                "agents[0].settings.mail.mailbox.{server}.password.file: /run/credentials/collegium-worker-mail.service/mailbox_ops does not exist"
            )),
            "{report}"
        );
    }
    assert!(!report.contains("models.sim.api_key"), "{report}");
}
