//! What each agent's user can reach of the framework's (§6.4; ARCHITECTURE
//! §4): the daemon's callback address and every worker's socket
//! (`collegium_control::host::reach`). The daemon cannot become an agent's
//! user; this worker can. At each handshake it runs the launcher as each
//! agent, confined exactly as a command is but execing nothing, which
//! connects to each endpoint in process and reports what each connect met.
//!
//! A refused connect means the same thing to the agent whether the
//! provisioner's nftables rule rejected it or nothing listens, so the
//! worker first connects to each TCP endpoint itself: its user is not an
//! agent's, the rule lets it through, and so a refusal the agent meets
//! where the worker's own connect got through is the rule's. The probe runs
//! at the handshake, not at the worker's start: only then is the daemon's
//! callback listener bound (it binds before it handshakes) and every plugin
//! serving. A handshake after the worker restarts probes again.

use std::io::ErrorKind;
use std::path::Path;
use std::time::Duration;

use collegium_control::host::reach::Endpoint;
use collegium_proto::toolset::v1::{EndpointReach, Reach};
use serde::{Deserialize, Serialize};

use crate::request::LaunchRequest;
use crate::run::{Ending, Then, run_then};

/// How long one connect may take. A local listener answers at once; a
/// rule that drops rather than rejects is what this waits out.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// How long one agent's whole probe may take.
const PROBE_DEADLINE: Duration = Duration::from_secs(20);

/// What the launcher's reach mode reads on stdin.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ReachRequest {
    /// The agent, as a command of its is launched; its command is empty
    /// and never run.
    pub launch: LaunchRequest,
    pub endpoints: Vec<Endpoint>,
}

/// One connect (or walk through a directory), as the agent's user made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    pub endpoint: Endpoint,
    pub connected: bool,
    /// The error's number, where the connect failed with one.
    pub errno: Option<i32>,
    /// The error's words ("connected" where it did not fail).
    pub error: String,
}

/// Tries each endpoint from this process (the launcher's, confined as the
/// agent), closing each connection at once.
pub fn attempt_all(endpoints: &[Endpoint]) -> Vec<Attempt> {
    endpoints
        .iter()
        .map(|endpoint| {
            let result = match endpoint {
                Endpoint::Tcp(addr) => {
                    std::net::TcpStream::connect_timeout(addr, CONNECT_TIMEOUT).map(drop)
                }
                Endpoint::Unix(path) => std::os::unix::net::UnixStream::connect(path).map(drop),
                Endpoint::Directory(path) => traverse(path),
            };
            match result {
                Ok(()) => Attempt {
                    endpoint: endpoint.clone(),
                    connected: true,
                    errno: None,
                    error: "connected".into(),
                },
                Err(error) => Attempt {
                    endpoint: endpoint.clone(),
                    connected: false,
                    errno: error.raw_os_error(),
                    error: error.to_string(),
                },
            }
        })
        .collect()
}

/// Walks through `path` as this process's user: a lookup of `.` inside it
/// needs search permission on it and on every directory above, which the
/// kernel decides, ACLs included (§6.1). Neither Landlock (it has no right
/// for a path walk) nor the command's user namespace (it maps the agent's
/// own uid and gid, and nothing else) changes that decision.
fn traverse(path: &Path) -> std::io::Result<()> {
    let mut inside = path.as_os_str().to_owned();
    inside.push("/.");
    std::fs::symlink_metadata(inside).map(drop)
}

/// What the worker's own connect to a TCP endpoint met: `Ok` where
/// something listens.
pub type Control = Result<(), String>;

/// The worker's own connects, one per TCP endpoint, made as itself.
pub async fn controls(endpoints: &[Endpoint]) -> Vec<(Endpoint, Control)> {
    let mut found = Vec::new();
    for endpoint in endpoints {
        if let Endpoint::Tcp(addr) = endpoint {
            let control =
                match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr))
                    .await
                {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(error)) => Err(error.to_string()),
                    Err(_) => Err(format!("no answer within {} s", CONNECT_TIMEOUT.as_secs())),
                };
            found.push((endpoint.clone(), control));
        }
    }
    found
}

/// One agent's report: the launcher run in its reach mode as `agent`, each
/// endpoint judged against the worker's own connects.
pub async fn probe(
    launcher: &Path,
    agent: &LaunchRequest,
    endpoints: &[Endpoint],
    controls: &[(Endpoint, Control)],
) -> Vec<EndpointReach> {
    let failed = |detail: String| {
        endpoints
            .iter()
            .map(|endpoint| EndpointReach {
                endpoint: endpoint.to_string(),
                reach: Reach::Failed as i32,
                detail: detail.clone(),
            })
            .collect()
    };
    let finished = match run_then(
        launcher,
        Then::Reach(endpoints),
        agent,
        None,
        PROBE_DEADLINE,
    )
    .await
    {
        Ok(finished) => finished,
        Err(error) => return failed(error.to_string()),
    };
    match &finished.ending {
        Ending::Exited(0) => {}
        Ending::Refused(reason) => {
            return failed(format!("the launcher could not confine itself: {reason}"));
        }
        other => {
            return failed(format!(
                "the launcher ended {other:?}: {}",
                String::from_utf8_lossy(&finished.stderr.bytes).trim()
            ));
        }
    }
    let attempts: Vec<Attempt> = match serde_json::from_slice(&finished.stdout.bytes) {
        Ok(attempts) => attempts,
        Err(error) => return failed(format!("the launcher's report is not readable: {error}")),
    };
    endpoints
        .iter()
        .map(|endpoint| {
            let attempt = attempts.iter().find(|a| &a.endpoint == endpoint);
            let control = controls.iter().find(|(e, _)| e == endpoint).map(|(_, c)| c);
            let (reach, detail) = match attempt {
                Some(attempt) => judge(attempt, control),
                None => (Reach::Failed, "the launcher did not try it".to_string()),
            };
            EndpointReach {
                endpoint: endpoint.to_string(),
                reach: reach as i32,
                detail,
            }
        })
        .collect()
}

/// What an agent's connect means. A connect is reached wherever it got
/// through. Over TCP, a failure is the rule's where the worker's own connect
/// got through, and tells nothing where it did not. To a Unix socket, a
/// path the agent's user may not open is closed to it whether or not
/// anything listens; one it may open but where nothing answers would let it
/// in once something does.
pub fn judge(attempt: &Attempt, control: Option<&Control>) -> (Reach, String) {
    if attempt.connected {
        return (Reach::Reached, "connected".into());
    }
    let error = &attempt.error;
    match (&attempt.endpoint, control) {
        (Endpoint::Tcp(_), Some(Ok(()))) => (
            Reach::Blocked,
            format!("{error}, where the worker's own connect got through"),
        ),
        (Endpoint::Tcp(_), Some(Err(control))) => (
            Reach::Unverified,
            format!("{error}; the worker's own connect: {control}"),
        ),
        (Endpoint::Tcp(_), None) => (
            Reach::Unverified,
            format!("{error}; the worker did not connect itself"),
        ),
        (Endpoint::Directory(_), _) => {
            let kind = attempt
                .errno
                .map(|n| std::io::Error::from_raw_os_error(n).kind());
            match kind {
                Some(ErrorKind::PermissionDenied) => (Reach::Blocked, error.clone()),
                // Nothing is there to traverse: a deployment that keeps its
                // binaries elsewhere (a development checkout) has no app
                // root, and only root could make one under a root-owned
                // parent. Said in the detail, never refused.
                Some(ErrorKind::NotFound) => (
                    Reach::Blocked,
                    format!("{error}: there is nothing to traverse"),
                ),
                _ => (Reach::Unverified, error.clone()),
            }
        }
        (Endpoint::Unix(_), _) => {
            let kind = attempt
                .errno
                .map(|n| std::io::Error::from_raw_os_error(n).kind());
            match kind {
                Some(ErrorKind::PermissionDenied) => (Reach::Blocked, error.clone()),
                _ => (Reach::Unverified, error.clone()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(endpoint: Endpoint, errno: Option<i32>) -> Attempt {
        Attempt {
            connected: errno.is_none(),
            error: errno.map_or("connected".into(), |n| {
                std::io::Error::from_raw_os_error(n).to_string()
            }),
            endpoint,
            errno,
        }
    }

    fn tcp() -> Endpoint {
        Endpoint::Tcp("127.0.0.1:8071".parse().expect("addr"))
    }

    fn unix() -> Endpoint {
        Endpoint::Unix("/run/collegium/shell/toolset.sock".into())
    }

    #[test]
    fn s6_4_a_refusal_is_the_rules_only_where_something_listens() {
        let refused = attempt(tcp(), Some(nix::libc::ECONNREFUSED));
        assert_eq!(judge(&refused, Some(&Ok(()))).0, Reach::Blocked);
        let (reach, detail) = judge(&refused, Some(&Err("Connection refused".into())));
        assert_eq!(reach, Reach::Unverified);
        assert!(detail.contains("the worker's own connect"), "{detail}");
        assert_eq!(judge(&refused, None).0, Reach::Unverified);
        assert_eq!(
            judge(&attempt(tcp(), None), Some(&Ok(()))).0,
            Reach::Reached
        );
    }

    #[test]
    fn s6_4_a_socket_is_closed_only_where_its_path_is() {
        assert_eq!(
            judge(&attempt(unix(), Some(nix::libc::EACCES)), None).0,
            Reach::Blocked
        );
        assert_eq!(
            judge(&attempt(unix(), Some(nix::libc::ECONNREFUSED)), None).0,
            Reach::Unverified
        );
        assert_eq!(
            judge(&attempt(unix(), Some(nix::libc::ENOENT)), None).0,
            Reach::Unverified
        );
        assert_eq!(judge(&attempt(unix(), None), None).0, Reach::Reached);
    }

    #[test]
    fn s6_1_a_directory_is_closed_where_its_walk_is_denied_or_it_is_absent() {
        let dir = || Endpoint::Directory("/usr/lib/collegium".into());
        assert_eq!(judge(&attempt(dir(), None), None).0, Reach::Reached);
        assert_eq!(
            judge(&attempt(dir(), Some(nix::libc::EACCES)), None).0,
            Reach::Blocked
        );
        let (reach, detail) = judge(&attempt(dir(), Some(nix::libc::ENOENT)), None);
        assert_eq!(reach, Reach::Blocked);
        assert!(detail.contains("nothing to traverse"), "{detail}");
        assert_eq!(
            judge(&attempt(dir(), Some(nix::libc::ENOTDIR)), None).0,
            Reach::Unverified
        );
    }

    #[test]
    fn s6_1_a_walk_through_a_directory_is_tried_inside_it() {
        let root = tempfile::tempdir().expect("tempdir");
        let attempts = attempt_all(&[
            Endpoint::Directory(root.path().to_path_buf()),
            Endpoint::Directory(root.path().join("absent")),
        ]);
        assert!(attempts[0].connected, "{attempts:?}");
        assert_eq!(attempts[1].errno, Some(nix::libc::ENOENT), "{attempts:?}");
    }
}
