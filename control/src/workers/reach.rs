//! The boot's check of what agents' users can reach (§6.4; ARCHITECTURE
//! §4). The shell worker, the one process that can become each agent's
//! user, tries every endpoint of the framework's as each of them at the
//! handshake; the daemon refuses to boot on any endpoint an agent reached,
//! any it could not tell about, and any it was not told about, naming the
//! agent, the endpoint and the fix.

use collegium_proto::toolset::v1::{DescribeResponse, Reach};

use super::handshake::Gap;
use crate::host::reach::Endpoint;

/// What the worker's report must show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReachExpectation {
    /// Each shell-holding agent, with its OS user.
    pub agents: Vec<(String, String)>,
    /// Every endpoint none of them may reach.
    pub endpoints: Vec<Endpoint>,
    /// The deployment's nftables table, named in the fix.
    pub table: String,
}

/// Every gap between the worker's report and `expected`.
pub fn gaps(expected: &ReachExpectation, described: &DescribeResponse) -> Vec<Gap> {
    let mut gaps = Vec::new();
    for (agent, user) in &expected.agents {
        let field = format!("agent_reach.{agent}");
        let Some(report) = described.agent_reach.iter().find(|r| &r.agent == agent) else {
            gaps.push(Gap {
                field,
                problem: format!(
                    "the worker did not report what {user} can reach; a shell worker as new as this daemon does"
                ),
            });
            continue;
        };
        for endpoint in &expected.endpoints {
            let shown = endpoint.to_string();
            let found = report.endpoints.iter().find(|e| e.endpoint == shown);
            let problem = match found {
                None => Some(format!(
                    "the worker did not try {shown} as {user}; a shell worker reading this configuration does"
                )),
                Some(found) => match Reach::try_from(found.reach).unwrap_or(Reach::Unspecified) {
                    Reach::Blocked => None,
                    Reach::Reached if matches!(endpoint, Endpoint::Directory(_)) => Some(format!(
                        "{user} can traverse {}, so @{agent}'s commands could read the framework's code and files there (§6.1); {}",
                        path_of(endpoint),
                        fix(endpoint, &expected.table)
                    )),
                    Reach::Unverified if matches!(endpoint, Endpoint::Directory(_)) => {
                        Some(format!(
                            "whether {user} can traverse {} is not known ({}); {}",
                            path_of(endpoint),
                            found.detail,
                            fix(endpoint, &expected.table)
                        ))
                    }
                    Reach::Reached => Some(format!(
                        "{user} reached {shown}, so @{agent}'s commands could too; {}",
                        fix(endpoint, &expected.table)
                    )),
                    Reach::Unverified => Some(format!(
                        "nothing listened at {shown} when the worker tried it as {user} ({}), so whether @{agent}'s commands can reach it is not known; {}",
                        found.detail,
                        fix(endpoint, &expected.table)
                    )),
                    Reach::Failed => Some(format!(
                        "the worker could not try {shown} as {user}: {}",
                        found.detail
                    )),
                    Reach::Unspecified => Some(format!(
                        "the worker reported no finding ({}) for {shown} as {user}",
                        found.reach
                    )),
                },
            };
            if let Some(problem) = problem {
                gaps.push(Gap {
                    field: field.clone(),
                    problem,
                });
            }
        }
    }
    gaps
}

/// The path a directory endpoint names, for the refusal's words.
fn path_of(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Directory(path) | Endpoint::Unix(path) => path.display().to_string(),
        Endpoint::Tcp(addr) => addr.to_string(),
    }
}

/// How the operator closes `endpoint` to agents.
fn fix(endpoint: &Endpoint, table: &str) -> String {
    match endpoint {
        Endpoint::Directory(path) => format!(
            "close it to agents' users: mode 0750, owned by root, its group one no agent's user is in (`chown root:collegium-app {0} && chmod 0750 {0}` for the app root; the plugins root's group is collegium-plugins, and `collegium-provision host --config FILE` converges it), as deploy/tmpfiles.d/collegium.conf makes them",
            path.display()
        ),
        Endpoint::Tcp(_) => format!(
            "run `collegium-provision host --config FILE` as root, which converges the nftables table `inet {table}` rejecting the agents' users' connections to the callback port (install the nftables package where `nft` is missing)"
        ),
        Endpoint::Unix(path) => format!(
            "the socket's directory {} must be closed to agents' users (mode 0750 or 0700, owned by root or the worker's user, agents in neither its owner nor its group); run `collegium-provision host --config FILE` as root, which converges the runtime directory",
            path.parent().unwrap_or(path).display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use collegium_proto::toolset::v1::{AgentReach, EndpointReach};

    fn expectation() -> ReachExpectation {
        ReachExpectation {
            agents: vec![("mira".into(), "cg-mira".into())],
            endpoints: vec![
                Endpoint::Tcp("127.0.0.1:8071".parse().expect("addr")),
                Endpoint::Unix("/run/collegium/shell/toolset.sock".into()),
            ],
            table: "collegium_0123".into(),
        }
    }

    fn report(tcp: Reach, unix: Reach) -> DescribeResponse {
        DescribeResponse {
            agent_reach: vec![AgentReach {
                agent: "mira".into(),
                endpoints: vec![
                    EndpointReach {
                        endpoint: "tcp 127.0.0.1:8071".into(),
                        reach: tcp as i32,
                        detail: "connected".into(),
                    },
                    EndpointReach {
                        endpoint: "unix /run/collegium/shell/toolset.sock".into(),
                        reach: unix as i32,
                        detail: "Permission denied".into(),
                    },
                ],
            }],
            ..DescribeResponse::default()
        }
    }

    #[test]
    fn s6_4_every_endpoint_blocked_for_every_agent_is_no_gap() {
        assert!(gaps(&expectation(), &report(Reach::Blocked, Reach::Blocked)).is_empty());
    }

    #[test]
    fn s6_4_a_reached_callback_port_names_the_agent_the_endpoint_and_the_fix() {
        let found = gaps(&expectation(), &report(Reach::Reached, Reach::Blocked));
        assert_eq!(found.len(), 1, "{found:?}");
        let text = found[0].to_string();
        assert!(
            text.starts_with("agent_reach.mira: cg-mira reached tcp 127.0.0.1:8071")
                && text.contains("collegium-provision host")
                && text.contains("inet collegium_0123"),
            "{text}"
        );
    }

    #[test]
    fn s6_4_a_socket_nothing_was_tried_on_or_nothing_was_said_of_is_a_gap() {
        let found = gaps(&expectation(), &report(Reach::Blocked, Reach::Unverified));
        assert!(
            found.len() == 1
                && found[0]
                    .problem
                    .contains("/run/collegium/shell must be closed"),
            "{found:?}"
        );
        let found = gaps(&expectation(), &report(Reach::Unspecified, Reach::Failed));
        assert_eq!(found.len(), 2, "{found:?}");
        let silent = gaps(&expectation(), &DescribeResponse::default());
        assert!(
            silent.len() == 1 && silent[0].problem.contains("did not report what cg-mira"),
            "{silent:?}"
        );
        let mut partial = report(Reach::Blocked, Reach::Blocked);
        partial.agent_reach[0].endpoints.pop();
        let found = gaps(&expectation(), &partial);
        assert!(
            found.len() == 1 && found[0].problem.contains("did not try unix"),
            "{found:?}"
        );
    }

    #[test]
    fn s6_1_a_traversable_app_root_names_the_agent_the_path_and_the_fix() {
        let expected = ReachExpectation {
            agents: vec![("mira".into(), "cg-mira".into())],
            endpoints: vec![Endpoint::Directory("/usr/lib/collegium".into())],
            table: "collegium_0123".into(),
        };
        let described = |reach: Reach, detail: &str| DescribeResponse {
            agent_reach: vec![AgentReach {
                agent: "mira".into(),
                endpoints: vec![EndpointReach {
                    endpoint: "directory /usr/lib/collegium".into(),
                    reach: reach as i32,
                    detail: detail.into(),
                }],
            }],
            ..DescribeResponse::default()
        };
        assert!(gaps(&expected, &described(Reach::Blocked, "Permission denied")).is_empty());
        let found = gaps(&expected, &described(Reach::Reached, "connected"));
        assert_eq!(found.len(), 1, "{found:?}");
        let text = found[0].to_string();
        assert!(
            text.starts_with(
                "agent_reach.mira: cg-mira can traverse /usr/lib/collegium, so @mira's commands could read"
            ) && text.contains("mode 0750")
                && text.contains("chown root:collegium-app /usr/lib/collegium"),
            "{text}"
        );
        let unknown = gaps(&expected, &described(Reach::Unverified, "Not a directory"));
        assert!(
            unknown.len() == 1
                && unknown[0].problem.starts_with(
                    "whether cg-mira can traverse /usr/lib/collegium is not known (Not a directory)"
                ),
            "{unknown:?}"
        );
    }
}
