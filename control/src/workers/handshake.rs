//! The handshake check (ARCHITECTURE §4): what a worker reports of itself
//! against what the configuration and the declaration registry expect. Any
//! gap refuses boot, naming the worker and the field: a weaker sandbox never
//! serves a call, and a tool the daemon would describe one way and the
//! worker run another is never offered.

use std::collections::BTreeSet;

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{self as wire, DescribeResponse};
use collegium_worker_kit::audit::digest;

use super::{capabilities, declarations};
use crate::tools::registry::{Host, ToolDeclaration, ToolsetDeclaration};

/// How the worker must be confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxExpectation {
    pub uid: u32,
    pub gid: u32,
    /// Capabilities the worker may hold in any set; every other is a gap.
    /// Only the bounding set of a root worker is held to it: a non-root
    /// process with no-new-privileges cannot gain what its bounding set
    /// allows.
    pub allowed_capabilities: u64,
    /// The lowest Landlock ABI accepted, for a worker that confines with it.
    pub landlock_floor: Option<u32>,
    /// Whether each command the worker runs must get a cgroup of its own,
    /// for a worker that runs commands (§6.1).
    pub command_cgroups: bool,
    /// The namespaces each command the worker runs must get of its own,
    /// for a worker that runs commands (§6.1).
    pub command_namespaces: &'static [&'static str],
    /// What each command the worker runs must be bounded in (§6.1): each
    /// name must be reported as `name=mechanism`, whichever mechanism the
    /// host allows.
    pub command_bounds: &'static [&'static str],
}

impl SandboxExpectation {
    /// A worker that runs as its own unprivileged user: that uid and gid,
    /// no capability in any set, nothing it runs confined by it (§3.4).
    pub fn own_user(account: &nix::unistd::User) -> Self {
        Self {
            uid: account.uid.as_raw(),
            gid: account.gid.as_raw(),
            allowed_capabilities: 0,
            landlock_floor: None,
            command_cgroups: false,
            command_namespaces: &[],
            command_bounds: &[],
        }
    }
}

/// What a shell worker bounds each command in: its processes, its memory,
/// the size of a file it writes, and its agent's home (§6.1).
pub const SHELL_BOUNDS: &[&str] = &["processes", "memory", "file_size", "home"];

impl SandboxExpectation {
    /// What a toolset this process starts under its own user can be held to:
    /// this user, no capability beyond what this process could pass on (its
    /// bounding set), and no-new-privileges.
    pub fn of_this_process() -> Result<Self, collegium_worker_kit::sandbox::SandboxError> {
        let me = collegium_worker_kit::sandbox::observe(None)?;
        Ok(Self {
            uid: me.effective_uid,
            gid: me.effective_gid,
            allowed_capabilities: me.cap_bounding,
            landlock_floor: None,
            command_cgroups: false,
            command_namespaces: &[],
            command_bounds: &[],
        })
    }
}

/// One difference, as `field: what`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    pub field: String,
    pub problem: String,
}

impl std::fmt::Display for Gap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.problem)
    }
}

#[derive(Debug, thiserror::Error)]
#[error("worker `{worker}` does not match what this deployment expects:\n  - {}", .gaps.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n  - "))]
pub struct HandshakeRefused {
    pub worker: String,
    pub gaps: Vec<Gap>,
}

/// Every gap between `described` and the expectation; empty when it matches.
pub fn compare(
    expected: &ToolsetDeclaration,
    sandbox: &SandboxExpectation,
    described: &DescribeResponse,
) -> Vec<Gap> {
    let mut gaps = Vec::new();
    let mut gap = |field: &str, problem: String| {
        gaps.push(Gap {
            field: field.to_string(),
            problem,
        })
    };
    if described.protocol_version != PROTOCOL_VERSION {
        gap(
            "protocol_version",
            format!(
                "the worker speaks version {}, this daemon version {PROTOCOL_VERSION}",
                described.protocol_version
            ),
        );
    }
    if described.namespace != expected.namespace {
        gap(
            "namespace",
            format!(
                "the worker serves `{}`, not `{}`",
                described.namespace, expected.namespace
            ),
        );
    }
    match &described.sandbox {
        Some(reported) => compare_sandbox(sandbox, reported, &mut gap),
        None => gap("sandbox", "the worker reported no sandbox".into()),
    }
    compare_tools(expected, described, &mut gap);
    gaps
}

fn compare_sandbox(
    expected: &SandboxExpectation,
    reported: &wire::Sandbox,
    gap: &mut impl FnMut(&str, String),
) {
    if reported.effective_uid != expected.uid {
        gap(
            "sandbox.effective_uid",
            format!(
                "the worker runs as uid {}, not {}",
                reported.effective_uid, expected.uid
            ),
        );
    }
    if reported.effective_gid != expected.gid {
        gap(
            "sandbox.effective_gid",
            format!(
                "the worker runs as gid {}, not {}",
                reported.effective_gid, expected.gid
            ),
        );
    }
    let mut sets = vec![
        ("sandbox.cap_inheritable", reported.cap_inheritable),
        ("sandbox.cap_permitted", reported.cap_permitted),
        ("sandbox.cap_effective", reported.cap_effective),
        ("sandbox.cap_ambient", reported.cap_ambient),
    ];
    if expected.uid == 0 {
        sets.push(("sandbox.cap_bounding", reported.cap_bounding));
    }
    for (field, mask) in sets {
        let extra = mask & !expected.allowed_capabilities;
        if extra != 0 {
            gap(
                field,
                format!("holds {}", capabilities::names(extra).join(", ")),
            );
        }
    }
    if !reported.no_new_privileges {
        gap(
            "sandbox.no_new_privileges",
            "not set: what the worker executes could gain privileges".into(),
        );
    }
    if let Some(floor) = expected.landlock_floor {
        match reported.landlock_abi {
            Some(abi) if abi >= floor => {}
            Some(abi) => gap(
                "sandbox.landlock_abi",
                format!("ABI {abi}, below the floor of {floor}"),
            ),
            None => gap(
                "sandbox.landlock_abi",
                format!("the worker applies no Landlock ruleset; ABI {floor} or later is required"),
            ),
        }
    }
    if expected.command_cgroups && !reported.command_cgroups {
        gap(
            "sandbox.command_cgroups",
            "the worker runs commands without a cgroup of their own, so what a command starts could outlive it; mount a cgroup v2 hierarchy (a hybrid host has one at /sys/fs/cgroup/unified) or start the worker with --cgroup-root".into(),
        );
    }
    let missing = missing_namespaces(expected.command_namespaces, &reported.namespaces);
    if !missing.is_empty() {
        gap(
            "sandbox.namespaces",
            format!(
                "the worker runs commands without their own {} namespace, so a command could see other agents' processes, /proc or SysV IPC; allow unprivileged user namespaces (sysctl user.max_user_namespaces above 0, and no AppArmor or other policy refusing them to the agents' users)",
                missing.join(", ")
            ),
        );
    }
    let unbounded = missing_bounds(expected.command_bounds, &reported.bounds);
    if !unbounded.is_empty() {
        gap(
            "sandbox.bounds",
            format!(
                "the worker does not report bounding each command's {}, so one command could starve the host; run the shell worker of this build, which bounds each with a cgroup controller where the host delegates one and an rlimit or a measure where it does not",
                unbounded.join(", ")
            ),
        );
    }
}

/// The bounds `expected` names that `reported` gives no mechanism for.
fn missing_bounds<'a>(expected: &[&'a str], reported: &[String]) -> Vec<&'a str> {
    expected
        .iter()
        .copied()
        .filter(|name| {
            !reported.iter().any(|r| {
                r.split_once('=')
                    .is_some_and(|(what, how)| what == *name && !how.is_empty())
            })
        })
        .collect()
}

/// The namespaces `expected` names that `reported` does not.
fn missing_namespaces<'a>(expected: &[&'a str], reported: &[String]) -> Vec<&'a str> {
    expected
        .iter()
        .copied()
        .filter(|name| !reported.iter().any(|r| r == name))
        .collect()
}

fn compare_tools(
    expected: &ToolsetDeclaration,
    described: &DescribeResponse,
    gap: &mut impl FnMut(&str, String),
) {
    let served: BTreeSet<&str> = described.tools.iter().map(|t| t.name.as_str()).collect();
    // A framework worker is held to the tools this build serves of its
    // toolset; the rest of the declaration waits for its feature (A4).
    let required = |name: &str| match &expected.host {
        Host::Worker(class) => crate::tools::served::worker_serves(class, name),
        Host::Daemon | Host::Plugin => true,
    };
    for tool in expected.tools.iter().filter(|t| required(&t.name)) {
        if !served.contains(tool.name.as_str()) {
            gap(
                &format!("tools.{}", tool.name),
                "missing: the worker does not serve it".into(),
            );
        }
    }
    for reported in &described.tools {
        let field = format!("tools.{}", reported.name);
        let Some(declared) = expected.tool(&reported.name).filter(|t| required(&t.name)) else {
            gap(&field, "served, but not declared by this daemon".into());
            continue;
        };
        compare_tool(&field, declared, reported, gap);
    }
}

fn compare_tool(
    field: &str,
    declared: &ToolDeclaration,
    reported: &wire::ToolDeclaration,
    gap: &mut impl FnMut(&str, String),
) {
    match declarations::gate(reported.gate) {
        None => gap(
            &format!("{field}.gate"),
            format!(
                "unspecified ({}): a tool must state whether it stops for a person",
                reported.gate
            ),
        ),
        Some(gate) if gate != declared.gate => gap(
            &format!("{field}.gate"),
            format!(
                "the worker declares {gate:?}, the daemon {:?}",
                declared.gate
            ),
        ),
        Some(_) => {}
    }
    for (flag, worker, daemon) in [
        ("retryable", reported.retryable, declared.retryable),
        ("concurrent", reported.concurrent, declared.concurrent),
        ("supersedable", reported.supersedable, declared.supersedable),
    ] {
        if worker != daemon {
            gap(
                &format!("{field}.{flag}"),
                format!("the worker declares {worker}, the daemon {daemon}"),
            );
        }
    }
    if reported.requires_settings != declared.requires_settings {
        gap(
            &format!("{field}.requires_settings"),
            format!(
                "the worker declares {:?}, the daemon {:?}",
                reported.requires_settings, declared.requires_settings
            ),
        );
    }
    if reported.parameters_schema_sha256 != digest(reported.parameters_schema_json.as_bytes()) {
        gap(
            &format!("{field}.parameters_schema_sha256"),
            "does not match the schema sent with it".into(),
        );
    }
    match serde_json::from_str::<serde_json::Value>(&reported.parameters_schema_json) {
        Err(e) => gap(
            &format!("{field}.parameters_schema_json"),
            format!("not JSON: {e}"),
        ),
        Ok(schema) => {
            if declared.parameters.as_ref().is_some_and(|d| *d != schema) {
                gap(
                    &format!("{field}.parameters_schema_json"),
                    "differs from the schema this daemon declares".into(),
                );
            }
        }
    }
}

/// Where a restarted browser worker's address policy differs from the one
/// it was held to at boot (§3.4): a worker restarted with another policy
/// than the configuration's serves nothing, as one that boots with it.
pub fn web_scope_changes(held: &wire::WebScope, reported: Option<&wire::WebScope>) -> Vec<Gap> {
    let Some(reported) = reported else {
        return vec![Gap {
            field: "web_scope".into(),
            problem: "the restarted worker reports no address policy; at boot it did".into(),
        }];
    };
    let mut gaps = Vec::new();
    let mut differs = |field: &str, now: String, then: String| {
        if now != then {
            gaps.push(Gap {
                field: format!("web_scope.{field}"),
                problem: format!("the restarted worker reports {now}; at boot it was {then}"),
            });
        }
    };
    differs(
        "own_network_browsable",
        reported.own_network_browsable.to_string(),
        held.own_network_browsable.to_string(),
    );
    differs(
        "live_sessions",
        reported.live_sessions.to_string(),
        held.live_sessions.to_string(),
    );
    differs(
        "browser_sandbox",
        reported.browser_sandbox.to_string(),
        held.browser_sandbox.to_string(),
    );
    let hosts = |scope: &wire::WebScope| {
        let set: BTreeSet<&str> = scope.closed_hosts.iter().map(String::as_str).collect();
        format!("[{}]", set.into_iter().collect::<Vec<_>>().join(", "))
    };
    differs("closed_hosts", hosts(reported), hosts(held));
    gaps
}

#[cfg(test)]
mod web_scope_tests {
    use super::*;

    fn scope(own: bool, hosts: &[&str]) -> wire::WebScope {
        wire::WebScope {
            own_network_browsable: own,
            closed_hosts: hosts.iter().map(|h| (*h).to_string()).collect(),
            live_sessions: 4,
            browser_sandbox: true,
        }
    }

    #[test]
    fn s3_4_a_restarted_worker_with_the_boot_policy_matches() {
        let held = scope(false, &["intranet.test", "corp.test"]);
        let same = scope(false, &["corp.test", "intranet.test"]);
        assert!(web_scope_changes(&held, Some(&same)).is_empty());
    }

    #[test]
    fn s3_4_a_restarted_worker_with_another_policy_is_refused_naming_each_field() {
        let held = scope(false, &["intranet.test"]);
        let opened = scope(true, &[]);
        let gaps: Vec<String> = web_scope_changes(&held, Some(&opened))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            gaps,
            vec![
                "web_scope.own_network_browsable: the restarted worker reports true; at boot it was false",
                "web_scope.closed_hosts: the restarted worker reports []; at boot it was [intranet.test]",
            ]
        );
        assert_eq!(web_scope_changes(&held, None).len(), 1);
    }
}
