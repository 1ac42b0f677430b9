//! The handshake check (ARCHITECTURE §4): a worker that reports a missing
//! tool, another schema, an extra capability, no no-new-privileges or any
//! other difference is refused, naming the worker and the field.

use collegium_control::tools::{Gate, Host, ToolDeclaration, ToolsetDeclaration, ToolsetKind};
use collegium_control::workers::capabilities::{CAP_KILL, CAP_SETGID, CAP_SETUID};
use collegium_control::workers::handshake::{HandshakeRefused, SandboxExpectation, compare};
use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1 as wire;
use collegium_worker_kit::audit::digest;
use serde_json::json;

fn schema() -> serde_json::Value {
    json!({"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}})
}

fn declared() -> ToolsetDeclaration {
    ToolsetDeclaration {
        namespace: "shell".into(),
        kind: ToolsetKind::Framework,
        host: Host::Worker("shell".into()),
        tools: vec![ToolDeclaration {
            name: "run".into(),
            description: "Runs a command.".into(),
            gate: Gate::Approval,
            retryable: false,
            budget_exempt: false,
            concurrent: false,
            supersedable: false,
            requires_settings: Vec::new(),
            parameters: Some(schema()),
        }],
        settings_schema: json!({"type": "object"}),
        skills: Vec::new(),
    }
}

fn expectation() -> SandboxExpectation {
    SandboxExpectation {
        uid: 0,
        gid: 0,
        allowed_capabilities: CAP_SETUID | CAP_SETGID | CAP_KILL,
        landlock_floor: Some(4),
        command_cgroups: true,
        command_namespaces: &["pid", "mount", "ipc"],
        command_bounds: collegium_control::workers::handshake::SHELL_BOUNDS,
    }
}

/// What a correctly confined shell worker reports.
fn described() -> wire::DescribeResponse {
    let text = serde_json::to_string(&schema()).expect("json");
    wire::DescribeResponse {
        protocol_version: PROTOCOL_VERSION,
        build_version: "0.1.0".into(),
        namespace: "shell".into(),
        sandbox: Some(wire::Sandbox {
            effective_uid: 0,
            effective_gid: 0,
            cap_permitted: CAP_SETUID | CAP_SETGID | CAP_KILL,
            cap_effective: CAP_SETUID | CAP_SETGID | CAP_KILL,
            cap_bounding: CAP_SETUID | CAP_SETGID | CAP_KILL,
            no_new_privileges: true,
            landlock_abi: Some(6),
            command_cgroups: true,
            namespaces: vec!["pid".into(), "mount".into(), "ipc".into()],
            bounds: vec![
                "processes=rlimit".into(),
                "memory=rlimit".into(),
                "file_size=rlimit".into(),
                "home=measured".into(),
            ],
            ..wire::Sandbox::default()
        }),
        tools: vec![wire::ToolDeclaration {
            name: "run".into(),
            description: "Runs a command.".into(),
            parameters_schema_sha256: digest(text.as_bytes()),
            parameters_schema_json: text,
            gate: wire::Gate::Approval as i32,
            ..wire::ToolDeclaration::default()
        }],
        ..wire::DescribeResponse::default()
    }
}

/// The gaps, as `field: problem` lines.
fn gaps(described: &wire::DescribeResponse) -> Vec<String> {
    compare(&declared(), &expectation(), described)
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn arch4_a_worker_that_matches_has_no_gaps() {
    assert_eq!(gaps(&described()), Vec::<String>::new());
}

#[test]
fn arch4_a_missing_tool_is_named() {
    let mut d = described();
    d.tools.clear();
    assert_eq!(
        gaps(&d),
        ["tools.run: missing: the worker does not serve it"]
    );
}

#[test]
fn arch4_an_extra_tool_is_named() {
    let mut d = described();
    let mut extra = d.tools[0].clone();
    extra.name = "run_as_root".into();
    d.tools.push(extra);
    assert_eq!(
        gaps(&d),
        ["tools.run_as_root: served, but not declared by this daemon"]
    );
}

#[test]
fn arch4_a_different_schema_is_named() {
    let mut d = described();
    let text = json!({"type": "object"}).to_string();
    d.tools[0].parameters_schema_sha256 = digest(text.as_bytes());
    d.tools[0].parameters_schema_json = text;
    assert_eq!(
        gaps(&d),
        ["tools.run.parameters_schema_json: differs from the schema this daemon declares"]
    );
}

#[test]
fn arch4_a_schema_hash_that_does_not_match_its_schema_is_named() {
    let mut d = described();
    d.tools[0].parameters_schema_sha256 = digest(b"something else");
    assert_eq!(
        gaps(&d),
        ["tools.run.parameters_schema_sha256: does not match the schema sent with it"]
    );
}

#[test]
fn arch4_an_extra_capability_is_named_by_its_name() {
    let mut d = described();
    let sandbox = d.sandbox.as_mut().expect("sandbox");
    sandbox.cap_effective |= 1 << 21;
    sandbox.cap_bounding |= 1 << 12;
    assert_eq!(
        gaps(&d),
        [
            "sandbox.cap_effective: holds CAP_SYS_ADMIN",
            "sandbox.cap_bounding: holds CAP_NET_ADMIN"
        ]
    );
}

#[test]
fn arch4_a_missing_no_new_privileges_is_named() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").no_new_privileges = false;
    assert_eq!(
        gaps(&d),
        ["sandbox.no_new_privileges: not set: what the worker executes could gain privileges"]
    );
}

#[test]
fn arch4_a_landlock_abi_below_the_floor_or_none_is_named() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").landlock_abi = Some(3);
    assert_eq!(
        gaps(&d),
        ["sandbox.landlock_abi: ABI 3, below the floor of 4"]
    );
    d.sandbox.as_mut().expect("sandbox").landlock_abi = None;
    assert!(gaps(&d)[0].contains("applies no Landlock ruleset"));
}

#[test]
fn s6_1_a_worker_running_commands_without_their_own_cgroup_is_refused() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").command_cgroups = false;
    let found = gaps(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("sandbox.command_cgroups: ") && found[0].contains("--cgroup-root"),
        "the gap names the field and the fix: {}",
        found[0]
    );
}

#[test]
fn arch4_another_user_a_changed_declaration_or_an_unspecified_gate_is_named() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").effective_uid = 1000;
    d.tools[0].retryable = true;
    d.tools[0].requires_settings = vec!["allow".into()];
    assert_eq!(
        gaps(&d),
        [
            "sandbox.effective_uid: the worker runs as uid 1000, not 0",
            "tools.run.retryable: the worker declares true, the daemon false",
            "tools.run.requires_settings: the worker declares [\"allow\"], the daemon []",
        ]
    );
    let mut d = described();
    d.tools[0].gate = wire::Gate::Unspecified as i32;
    assert_eq!(
        gaps(&d),
        ["tools.run.gate: unspecified (0): a tool must state whether it stops for a person"]
    );
    d.tools[0].gate = wire::Gate::None as i32;
    assert_eq!(
        gaps(&d),
        ["tools.run.gate: the worker declares None, the daemon Approval"]
    );
}

#[test]
fn arch4_another_protocol_or_namespace_is_named() {
    let mut d = described();
    d.protocol_version = PROTOCOL_VERSION + 1;
    d.namespace = "web".into();
    let found = gaps(&d);
    assert!(found[0].starts_with("protocol_version: the worker speaks version"));
    assert_eq!(found[1], "namespace: the worker serves `web`, not `shell`");
}

#[test]
fn arch4_this_very_process_observed_is_judged() {
    // A real observation: the test process is not what a worker must be
    // unless it happens to run with no capabilities and no-new-privileges.
    let observed = collegium_worker_kit::sandbox::observe(None).expect("observe");
    let strict = SandboxExpectation {
        uid: observed.effective_uid,
        gid: observed.effective_gid,
        allowed_capabilities: 0,
        landlock_floor: None,
        command_cgroups: false,
        command_namespaces: &[],
        command_bounds: &[],
    };
    let mut d = described();
    d.sandbox = Some(observed.clone());
    let found: Vec<String> = compare(&declared(), &strict, &d)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found
            .iter()
            .any(|g| g.starts_with("sandbox.cap_effective: holds")),
        observed.cap_effective != 0,
        "{found:?}"
    );
    assert_eq!(
        found
            .iter()
            .any(|g| g.starts_with("sandbox.no_new_privileges")),
        !observed.no_new_privileges,
        "{found:?}"
    );
}

#[test]
fn arch4_the_refusal_names_the_worker_and_every_field() {
    let mut d = described();
    d.tools.clear();
    d.sandbox.as_mut().expect("sandbox").no_new_privileges = false;
    let refused = HandshakeRefused {
        worker: "shell".into(),
        gaps: compare(&declared(), &expectation(), &d),
    };
    assert_eq!(
        refused.to_string(),
        "worker `shell` does not match what this deployment expects:\n  \
         - sandbox.no_new_privileges: not set: what the worker executes could gain privileges\n  \
         - tools.run: missing: the worker does not serve it"
    );
}

#[test]
fn s6_1_a_worker_running_commands_without_their_own_namespaces_is_refused() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").namespaces = vec!["mount".into()];
    let found = gaps(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("sandbox.namespaces: ")
            && found[0].contains("pid, ipc namespace")
            && found[0].contains("user.max_user_namespaces"),
        "the gap names the field, what is missing and the fix: {}",
        found[0]
    );
    d.sandbox.as_mut().expect("sandbox").namespaces.clear();
    assert!(gaps(&d)[0].contains("pid, mount, ipc namespace"));
}

#[test]
fn s6_1_a_worker_reporting_no_bounds_on_its_commands_is_refused() {
    let mut d = described();
    d.sandbox.as_mut().expect("sandbox").bounds.clear();
    let found = gaps(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].starts_with("sandbox.bounds: ")
            && found[0].contains("processes, memory, file_size, home")
            && found[0].contains("run the shell worker of this build"),
        "the gap names the field, what is unbounded and the fix: {}",
        found[0]
    );
    // A bound named without its mechanism is no bound.
    d.sandbox.as_mut().expect("sandbox").bounds = vec![
        "processes=cgroup".into(),
        "memory=".into(),
        "file_size=rlimit".into(),
        "home=measured".into(),
    ];
    let found = gaps(&d);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].contains("command's memory,"), "{}", found[0]);
}
