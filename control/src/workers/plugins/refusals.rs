//! A plugin's boot refusals (§3.14): what the conventions cover either loads
//! or stops the daemon from starting, each refusal naming the plugin and the
//! file or tool, and what to do instead. Nothing malformed is left out
//! silently. These are the pure checks; `super::start` runs them in order:
//! the layout before the process starts, the description once it answers.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::DescribeResponse;

use super::EXECUTABLE;
use crate::tools::names::is_segment;

/// Every framework namespace: no plugin may take one (§3.14), whether or
/// not this build serves it yet.
pub const RESERVED: &[&str] = &[
    "builtins",
    "results",
    "skills",
    "triggers",
    "workspace",
    "shell",
    "web",
    "mail",
    "memory",
    "conversations",
    "tasks",
    "ask",
];

/// Whether `namespace` belongs to the framework.
pub fn is_reserved(namespace: &str) -> bool {
    RESERVED.contains(&namespace)
}

/// Each directory under the plugins root that takes a framework namespace:
/// a grant of that name reaches the framework's toolset, so the plugin
/// would never load, and nothing is left out silently (§3.14).
pub fn reserved_dirs(plugins_root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(plugins_root) else {
        return Vec::new();
    };
    let mut refusals: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            is_reserved(&name).then(|| {
                format!(
                    "{}: `{name}` is a framework namespace (reserved: {}); rename the plugin's directory, and grant it by its new name (§3.14)",
                    e.path().display(),
                    RESERVED.join(", ")
                )
            })
        })
        .collect();
    refusals.sort();
    refusals
}

/// The plugin's executable, where its directory holds one that can run;
/// else why not, naming the file and the fix.
pub fn layout(plugins_root: &Path, namespace: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    if is_reserved(namespace) {
        return Err(format!(
            "`{namespace}` is a framework namespace (reserved: {}); rename the directory {} and its grants (§3.14)",
            RESERVED.join(", "),
            plugins_root.join(namespace).display()
        ));
    }
    if !is_segment(namespace) {
        return Err(format!(
            "the directory name `{namespace}` is not a namespace (lowercase letters, digits, `_` and `-`, starting with a letter, no `__`); rename {}",
            plugins_root.join(namespace).display()
        ));
    }
    let dir = plugins_root.join(namespace);
    if !dir.is_dir() {
        return Err(format!(
            "there is no plugin directory {}; install the plugin there, or take `{namespace}` out of the grants",
            dir.display()
        ));
    }
    let executable = dir.join(EXECUTABLE);
    let meta = std::fs::metadata(&executable).map_err(|e| {
        format!(
            "{} cannot be read ({e}); a plugin directory holds its executable under the name `{EXECUTABLE}`",
            executable.display()
        )
    })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(format!(
            "{} is not an executable file; `chmod +x` it",
            executable.display()
        ));
    }
    Ok(executable)
}

/// Every skill directory under the plugin's `skills/` parses in the §3.5
/// layout, assigned or not: one that does not refuses boot, naming its file.
pub fn skills(plugins_root: &Path, namespace: &str) -> Vec<String> {
    let dir = plugins_root.join(namespace).join("skills");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    found.sort();
    let mut refusals = Vec::new();
    for path in found {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !path.is_dir() {
            refusals.push(format!(
                "{} is not a skill directory; `skills/` holds one directory per skill (§3.5)",
                path.display()
            ));
        } else if !is_segment(&name) {
            refusals.push(format!(
                "{}: `{name}` is not a skill name (lowercase letters, digits, `_` and `-`)",
                path.display()
            ));
        } else if let Err(error) = crate::skills::read(&format!("{namespace}::{name}"), &path) {
            refusals.push(error.to_string());
        }
    }
    refusals
}

/// What a plugin's description claims that it may not, or states wrongly:
/// one refusal a problem, each naming the tool or field and the fix.
pub fn described(described: &DescribeResponse) -> Vec<String> {
    let mut refusals = Vec::new();
    if let Some(refusal) = protocol(described) {
        refusals.push(refusal);
    }
    let mut seen = BTreeSet::new();
    for tool in &described.tools {
        let name = &tool.name;
        if !is_segment(name) {
            refusals.push(format!(
                "the tool name `{name}` is malformed: a tool segment is lowercase letters, digits, `_` and `-`, starting with a letter, never `__` or `::` (§3.4)"
            ));
            continue;
        }
        if !seen.insert(name.as_str()) {
            refusals.push(format!(
                "tools.{name}: declared twice; one tool per name (§3.4)"
            ));
        }
        if crate::workers::declarations::gate(tool.gate).is_none() {
            refusals.push(format!(
                "tools.{name}: states no gate; declare a render (it stops for a person) or explicitly that it does not gate (§3.14)"
            ));
        }
        if tool.budget_exempt {
            refusals.push(format!(
                "tools.{name}: claims to be exempt from the action budget, which only a framework toolset may be (§3.4, §5.3); drop the claim"
            ));
        }
        if tool.core {
            refusals.push(format!(
                "tools.{name}: claims to be a core tool, in every agent's tool set; a plugin cannot contribute one (§3.4), its tools are granted"
            ));
        }
    }
    if let Err(refusal) = settings_schema(&described.settings_schema_json) {
        refusals.push(refusal);
    }
    // Collection schemas (§3.14) are the storage host's to check, where the
    // plugin's storage is bound to its namespace: see `super::start`.
    refusals
}

/// The protocol range the plugin declares holds this daemon's version.
fn protocol(described: &DescribeResponse) -> Option<String> {
    let (min, max) = (
        described.min_protocol_version,
        described.max_protocol_version,
    );
    if min == 0 && max == 0 {
        // No range declared: the handshake holds `protocol_version` alone.
        return None;
    }
    if min > max {
        return Some(format!(
            "protocol range: it declares {min}..={max}, which is empty; declare the lowest version it speaks first"
        ));
    }
    (!(min..=max).contains(&PROTOCOL_VERSION)).then(|| {
        format!(
            "protocol range: it speaks versions {min} to {max}, and this daemon speaks {PROTOCOL_VERSION}; build the plugin against an SDK that speaks version {PROTOCOL_VERSION}"
        )
    })
}

/// A settings schema a plugin declares compiles: nothing malformed is taken
/// for "any settings" (§3.14). An empty one declares no settings.
pub fn settings_schema(text: &str) -> Result<(), String> {
    if text.trim().is_empty() {
        return Ok(());
    }
    let schema: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("its settings schema is not JSON: {e}"))?;
    jsonschema::validator_for(&schema)
        .map(drop)
        .map_err(|e| format!("its settings schema is not a JSON Schema: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use collegium_proto::toolset::v1::{Gate, ToolDeclaration};

    fn tool(name: &str) -> ToolDeclaration {
        ToolDeclaration {
            name: name.into(),
            gate: Gate::None as i32,
            ..ToolDeclaration::default()
        }
    }

    fn describing(tools: Vec<ToolDeclaration>) -> DescribeResponse {
        DescribeResponse {
            protocol_version: PROTOCOL_VERSION,
            namespace: "bookmark".into(),
            tools,
            ..DescribeResponse::default()
        }
    }

    #[test]
    fn s3_14_the_reserved_namespaces_are_the_frameworks_own() {
        let registry = crate::tools::Registry::framework();
        for toolset in registry.toolsets() {
            assert!(is_reserved(&toolset.namespace), "{}", toolset.namespace);
        }
        for namespace in RESERVED {
            assert!(registry.is_reserved(namespace), "{namespace}");
        }
    }

    #[test]
    fn s3_14_a_well_formed_description_is_not_refused() {
        assert!(described(&describing(vec![tool("save"), tool("list")])).is_empty());
    }

    #[test]
    fn s3_14_each_claim_a_plugin_may_not_make_is_refused_naming_the_tool() {
        let mut gateless = tool("save");
        gateless.gate = Gate::Unspecified as i32;
        let mut exempt = tool("list");
        exempt.budget_exempt = true;
        let mut core = tool("now");
        core.core = true;
        let refusals = described(&describing(vec![
            gateless,
            exempt,
            core,
            tool("Bad Name"),
            tool("a__b"),
            tool("remove"),
            tool("remove"),
        ]));
        let expected = [
            "tools.save: states no gate; declare a render",
            "tools.list: claims to be exempt from the action budget",
            "tools.now: claims to be a core tool",
            "the tool name `Bad Name` is malformed",
            "the tool name `a__b` is malformed",
            "tools.remove: declared twice",
        ];
        assert_eq!(refusals.len(), expected.len(), "{refusals:#?}");
        for (refusal, wanted) in refusals.iter().zip(expected) {
            assert!(refusal.starts_with(wanted), "{refusal:?} vs {wanted:?}");
        }
    }

    #[test]
    fn s9_a_protocol_range_without_this_daemons_version_is_refused() {
        let mut d = describing(vec![tool("save")]);
        d.min_protocol_version = PROTOCOL_VERSION + 1;
        d.max_protocol_version = PROTOCOL_VERSION + 3;
        let refusals = described(&d);
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with(&format!(
                "protocol range: it speaks versions {} to {}, and this daemon speaks {PROTOCOL_VERSION}",
                PROTOCOL_VERSION + 1,
                PROTOCOL_VERSION + 3
            )),
            "{refusals:?}"
        );
        d.min_protocol_version = PROTOCOL_VERSION;
        assert!(described(&d).is_empty());
        d.min_protocol_version = 5;
        d.max_protocol_version = 2;
        assert!(described(&d)[0].contains("which is empty"));
    }

    #[test]
    fn s3_14_a_settings_schema_that_does_not_compile_is_refused() {
        let mut d = describing(vec![tool("save")]);
        d.settings_schema_json = "{\"type\": 7}".into();
        let refusals = described(&d);
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with("its settings schema is not a JSON Schema"),
            "{refusals:?}"
        );
    }

    fn root() -> tempfile::TempDir {
        tempfile::tempdir().expect("tempdir")
    }

    #[test]
    fn s3_14_a_reserved_or_missing_plugin_is_refused_naming_the_path() {
        use std::os::unix::fs::PermissionsExt;
        let root = root();
        let refusal = layout(root.path(), "memory").expect_err("reserved");
        assert!(
            refusal.starts_with("`memory` is a framework namespace"),
            "{refusal}"
        );
        let refusal = layout(root.path(), "bookmark").expect_err("missing");
        assert!(
            refusal.starts_with(&format!(
                "there is no plugin directory {}",
                root.path().join("bookmark").display()
            )),
            "{refusal}"
        );
        let dir = root.path().join("bookmark");
        std::fs::create_dir(&dir).expect("dir");
        let refusal = layout(root.path(), "bookmark").expect_err("no executable");
        assert!(
            refusal.starts_with(&format!("{} cannot be read", dir.join("serve").display())),
            "{refusal}"
        );
        std::fs::write(dir.join("serve"), "#!/bin/sh\n").expect("serve");
        std::fs::set_permissions(dir.join("serve"), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
        let refusal = layout(root.path(), "bookmark").expect_err("not executable");
        assert!(refusal.contains("is not an executable file"), "{refusal}");
        std::fs::set_permissions(dir.join("serve"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        assert_eq!(
            layout(root.path(), "bookmark").expect("laid out"),
            dir.join("serve")
        );
    }

    #[test]
    fn s3_14_a_plugin_directory_taking_a_framework_namespace_is_refused() {
        let root = root();
        std::fs::create_dir_all(root.path().join("memory")).expect("dir");
        std::fs::create_dir_all(root.path().join("bookmark")).expect("dir");
        let refusals = reserved_dirs(root.path());
        assert_eq!(refusals.len(), 1, "{refusals:?}");
        assert!(
            refusals[0].starts_with(&format!(
                "{}: `memory` is a framework namespace",
                root.path().join("memory").display()
            )),
            "{refusals:?}"
        );
    }

    #[test]
    fn s3_5_a_malformed_plugin_skill_is_refused_assigned_or_not() {
        let root = root();
        let skills = root.path().join("bookmark").join("skills");
        std::fs::create_dir_all(skills.join("saving-bookmarks")).expect("dir");
        std::fs::write(
            skills.join("saving-bookmarks").join("SKILL.md"),
            "no frontmatter here\n",
        )
        .expect("skill");
        std::fs::write(skills.join("stray.md"), "").expect("stray");
        let refusals = skills_of(root.path());
        assert_eq!(refusals.len(), 2, "{refusals:#?}");
        assert!(
            refusals[0].starts_with(&format!(
                "{}:",
                skills.join("saving-bookmarks").join("SKILL.md").display()
            )),
            "{refusals:#?}"
        );
        assert!(
            refusals[1].contains("stray.md is not a skill directory"),
            "{refusals:#?}"
        );
    }

    fn skills_of(root: &Path) -> Vec<String> {
        skills(root, "bookmark")
    }
}
