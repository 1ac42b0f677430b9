//! The agents' reach rule (§6.4; ARCHITECTURE §4): one nftables table per
//! deployment (`collegium_control::host::reach::table_name`), with an
//! output-hook chain rejecting, with a TCP reset, any connection an agent's
//! uid opens to the callback port of this host. Nothing else is matched:
//! other users, other ports and other hosts' ports are as they were. The
//! whole table is replaced in one `nft` transaction, so no moment sees it
//! half made; a host already matching is left untouched, and a deployment
//! with no shell agent has no table.

use std::collections::BTreeSet;
use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use super::{HostError, Outcome};

/// Converges the table `table` to reject `uids`' connections to `ports`.
pub fn converge(
    table: &str,
    uids: &BTreeSet<u32>,
    ports: &BTreeSet<u16>,
    outcome: &mut Outcome,
) -> Result<(), HostError> {
    if uids.is_empty() || ports.is_empty() {
        // A host without nft holds no table to remove.
        let current = match current(table) {
            Err(HostError::NftMissing) => None,
            other => other?,
        };
        if current.is_some() {
            nft(&["delete", "table", "inet", table], None)?;
            outcome.changes.push(format!(
                "removed the nftables table inet {table}: no agent holds the shell"
            ));
        }
        return Ok(());
    }
    let current = current(table)?;
    let wanted = ruleset(table, uids, ports);
    if current.as_ref() == Some(&wanted) {
        return Ok(());
    }
    // Declared, deleted and made again in one transaction: whatever the
    // table held, it holds exactly this afterwards, and never less between.
    let family_table = json!({"family": "inet", "name": table});
    let mut batch = vec![
        json!({"table": family_table}),
        json!({"delete": {"table": family_table}}),
    ];
    batch.extend(wanted);
    let text = json!({"nftables": batch}).to_string();
    nft(&["-j", "-f", "-"], Some(text.as_bytes()))?;
    let list = |set: &mut dyn Iterator<Item = String>| set.collect::<Vec<_>>().join(", ");
    outcome.changes.push(format!(
        "{} the nftables table inet {table}: connections from the agents' uids {} to port {} of this host are rejected",
        if current.is_some() {
            "converged"
        } else {
            "created"
        },
        list(&mut uids.iter().map(u32::to_string)),
        list(&mut ports.iter().map(u16::to_string)),
    ));
    Ok(())
}

/// The table's contents as `nft -j` lists them, handles aside.
fn ruleset(table: &str, uids: &BTreeSet<u32>, ports: &BTreeSet<u16>) -> Vec<Value> {
    let at = |kind: &str, body: Value| {
        let mut body = body;
        body["family"] = json!("inet");
        body["table"] = json!(table);
        json!({ kind: body })
    };
    vec![
        json!({"table": {"family": "inet", "name": table}}),
        at(
            "set",
            json!({"name": "agents", "type": "uid", "elem": uids.iter().collect::<Vec<_>>()}),
        ),
        at(
            "set",
            json!({"name": "ports", "type": "inet_service", "elem": ports.iter().collect::<Vec<_>>()}),
        ),
        at(
            "chain",
            json!({"name": "output", "type": "filter", "hook": "output", "prio": 0, "policy": "accept"}),
        ),
        at(
            "rule",
            json!({"chain": "output", "expr": [
                {"match": {"op": "==", "left": {"meta": {"key": "skuid"}}, "right": "@agents"}},
                // This host's addresses only: the same port elsewhere is
                // the rest of the network, which stays as it is.
                {"match": {"op": "==", "left": {"fib": {"result": "type", "flags": ["daddr"]}}, "right": "local"}},
                {"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": "@ports"}},
                // A reset fails the agent's connect at once, as a closed
                // port would.
                {"reject": {"type": "tcp reset"}}
            ]}),
        ),
    ]
}

/// The table as it stands, handles removed and set elements sorted; none
/// where it does not exist.
fn current(table: &str) -> Result<Option<Vec<Value>>, HostError> {
    let output = nft_output(&["-j", "list", "table", "inet", table], None)?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        if stderr.contains("No such file or directory") {
            return Ok(None);
        }
        return Err(failed(&format!("listing the table inet {table}"), &output));
    }
    let listed: Value = serde_json::from_slice(&output.stdout).map_err(|e| HostError::Command {
        what: format!("reading nft's listing of the table inet {table}"),
        reason: e.to_string(),
    })?;
    let objects = listed["nftables"].as_array().cloned().unwrap_or_default();
    Ok(Some(
        objects
            .into_iter()
            .filter(|o| o.get("metainfo").is_none())
            .map(|mut object| {
                if let Some(body) = object.as_object_mut().and_then(|o| o.values_mut().next()) {
                    if let Some(body) = body.as_object_mut() {
                        body.remove("handle");
                    }
                    if let Some(elements) = body.get_mut("elem").and_then(Value::as_array_mut) {
                        elements.sort_by_key(|e| e.as_u64());
                    }
                }
                object
            })
            .collect(),
    ))
}

fn nft(args: &[&str], input: Option<&[u8]>) -> Result<(), HostError> {
    let output = nft_output(args, input)?;
    if output.status.success() {
        return Ok(());
    }
    Err(failed(&format!("nft {}", args.join(" ")), &output))
}

fn failed(what: &str, output: &Output) -> HostError {
    HostError::Command {
        what: what.to_string(),
        reason: String::from_utf8_lossy(&output.stderr).trim().to_string(),
    }
}

fn nft_output(args: &[&str], input: Option<&[u8]>) -> Result<Output, HostError> {
    let spawned = Command::new("nft")
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(HostError::NftMissing),
        Err(e) => {
            return Err(HostError::Command {
                what: "starting nft".into(),
                reason: e.to_string(),
            });
        }
    };
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // nft reads the whole batch before it answers; a write that fails
        // shows in its exit and its stderr.
        let _ = stdin.write_all(input);
    }
    child.wait_with_output().map_err(|e| HostError::Command {
        what: format!("nft {}", args.join(" ")),
        reason: e.to_string(),
    })
}
