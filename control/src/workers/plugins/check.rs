//! `collegium config check` starts each granted plugin (§3.14): its
//! description is only known from its process, so the schema the agents'
//! merged settings are validated against, and every other boot refusal, are
//! found by starting it as the daemon would, then stopping it. The plugins
//! are started in a private directory of their own, so a check run beside a
//! running daemon never takes over its plugins' sockets.

use std::path::PathBuf;

use collegium_worker_kit::grant::GrantSigner;

use super::{PluginError, Purpose, start, ungranted};
use crate::config::LoadedConfig;

/// One plugin as the check found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub namespace: String,
    pub tools: usize,
    /// Its tools no agent is granted: a warning, never a refusal (§3.14).
    pub ungranted: Vec<String>,
    /// The user whose own unit runs it, where the check left it to the
    /// daemon's boot rather than take it from a running daemon.
    pub left_to_boot: Option<String>,
}

/// Starts every granted plugin under a throwaway key, holds it to every
/// boot refusal, and stops it again.
pub async fn check(loaded: &LoadedConfig) -> Result<Vec<Checked>, PluginError> {
    let scratch = scratch_dir();
    let mut isolated = loaded.clone();
    isolated.config.deployment.runtime_dir = scratch.join("run");
    isolated.config.deployment.audit_dir = scratch.join("audit");
    let signer = GrantSigner::generate("config-check");
    // A throwaway store: a plugin that writes while it starts writes here,
    // never into the deployment's (the check reads nothing of it).
    let store = scratch_store(&scratch).map_err(|reason| PluginError::Start {
        namespace: "(config check)".into(),
        reason,
    })?;
    let started = start(&isolated, &signer, &store, Purpose::Check).await;
    let outcome = match started {
        Ok(toolsets) => {
            let mut checked: Vec<Checked> = toolsets
                .running
                .iter()
                .map(|t| Checked {
                    namespace: t.declaration.namespace.clone(),
                    tools: t.declaration.tools.len(),
                    ungranted: ungranted(loaded, &t.declaration),
                    left_to_boot: None,
                })
                .collect();
            checked.extend(toolsets.left_to_boot.iter().map(|left| Checked {
                namespace: left.namespace.clone(),
                tools: 0,
                ungranted: Vec::new(),
                left_to_boot: Some(left.user.clone()),
            }));
            checked.sort_by(|a, b| a.namespace.cmp(&b.namespace));
            toolsets.stop().await;
            Ok(checked)
        }
        Err(error) => Err(error),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

fn scratch_store(scratch: &std::path::Path) -> Result<crate::store::StoreHandle, String> {
    std::fs::create_dir_all(scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let store = crate::store::Store::open(&scratch.join("check.db")).map_err(|e| e.to_string())?;
    crate::store::StoreHandle::spawn(store).map_err(|e| e.to_string())
}

/// A directory no other check or daemon uses.
fn scratch_dir() -> PathBuf {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    std::env::temp_dir().join(format!(
        "collegium-config-check-{}-{nanos}",
        std::process::id()
    ))
}

/// The check's summary lines, one a plugin.
pub fn summary(checked: &[Checked]) -> String {
    let left = checked.iter().filter(|p| p.left_to_boot.is_some()).count();
    let mut out = if left == 0 {
        format!(
            "plugins ({}), each started and its agents' settings checked against its schema:\n",
            checked.len()
        )
    } else {
        format!(
            "plugins ({}), each started and its agents' settings checked against its schema but {left} run by {}:\n",
            checked.len(),
            if left == 1 {
                "its own unit"
            } else {
                "their own units"
            }
        )
    };
    for plugin in checked {
        if let Some(user) = &plugin.left_to_boot {
            out.push_str(&format!(
                "  {}: not started by the check: collegium-plugin@{}.service runs it as {user}, and the daemon checks it when it boots\n",
                plugin.namespace, plugin.namespace
            ));
            continue;
        }
        out.push_str(&format!("  {}: {} tools", plugin.namespace, plugin.tools));
        if !plugin.ungranted.is_empty() {
            let tools: Vec<String> = plugin
                .ungranted
                .iter()
                .map(|t| format!("{}::{t}", plugin.namespace))
                .collect();
            out.push_str(&format!(
                " · warning: no agent is granted {} (§3.14)",
                tools.join(", ")
            ));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_14_the_check_says_which_plugins_it_left_to_their_units() {
        let text = summary(&[Checked {
            namespace: "bookmark".into(),
            tools: 0,
            ungranted: Vec::new(),
            left_to_boot: Some("collegium-plugin-bookmark".into()),
        }]);
        assert_eq!(
            text,
            "plugins (1), each started and its agents' settings checked against its schema but 1 run by its own unit:\n  bookmark: not started by the check: collegium-plugin@bookmark.service runs it as collegium-plugin-bookmark, and the daemon checks it when it boots\n"
        );
    }

    #[test]
    fn s3_14_the_checks_summary_warns_of_each_ungranted_tool() {
        let text = summary(&[Checked {
            namespace: "bookmark".into(),
            tools: 3,
            ungranted: vec!["remove".into()],
            left_to_boot: None,
        }]);
        assert_eq!(
            text,
            "plugins (1), each started and its agents' settings checked against its schema:\n  bookmark: 3 tools · warning: no agent is granted bookmark::remove (§3.14)\n"
        );
    }
}
