//! The attempts that press on what a command may take and reach: the
//! bounds of issue 16 item 3 (§6.1) and the callback port of item 4
//! (§6.4), each set low or tried from a command as an agent would.

use super::{Attempt, Class, attempt};
use crate::expect::Expect;
use crate::scene::{Agent, Scene};

/// Item 3: each bound set low in the call's settings, so meeting it is
/// quick and nothing else of the agent's is starved (the process bound is
/// charged per user, but a command's own bound is what its namespace was
/// made with).
pub fn bounds(s: &Scene) -> Vec<Attempt> {
    use Class::Bounds as B;
    let big = s.paths.mira_home.join("past-the-file-bound.bin");
    let shown = big.display().to_string();
    vec![
        attempt(B, "a fork bomb, counted", r#"python3 -c "import os, time
n = 0
try:
    while n < 200:
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
        n += 1
except OSError as e:
    print(e)
print('HELD' if n < 48 else 'ESC' + 'APED', n)""#,
            "RLIMIT_NPROC, set before the command's user namespace is made (or pids.max where delegated); without it all 200 forks succeed. The other agent's, because under rlimits the bound is charged to the user's every process on the host, and this agent's other attempts run meanwhile",
            Expect::new().says("Resource temporarily unavailable").says("HELD").never("ESCAPED"))
            .settings(r#"{"max_processes": 48}"#)
            .by(Agent::Theo),
        attempt(B, "a memory hog", r#"python3 -c "b = bytearray(256 * 1024 * 1024); print('ALLOC' + 'ATED', len(b))""#,
            "RLIMIT_DATA (or memory.max where delegated); without it 256 MiB are taken",
            Expect::new().says("MemoryError").never("ALLOCATED"))
            .settings(r#"{"memory_mib": 64}"#),
        attempt(B, "a file written past the file-size bound", format!("head -c 3M /dev/zero > {shown}"),
            "RLIMIT_FSIZE: the writer is killed by SIGXFSZ and the result names the bound; without it 3 MiB land in the home",
            Expect::new().says("file-size bound").host("the file no larger than the bound", move |_| {
                let len = std::fs::metadata(&big).map(|m| m.len()).unwrap_or(0);
                if len <= 1024 * 1024 { Ok(()) } else { Err(format!("{len} bytes written")) }
            }))
            .settings(r#"{"max_file_mib": 1}"#),
        attempt(B, "the private TMPDIR, filled", "head -c 64M /dev/zero > \"$TMPDIR/fill\"; du -m \"$TMPDIR/fill\"",
            "the tmpfs is mounted with size= the memory bound; without it the command holds 64 MiB of the host's memory in it",
            Expect::new().says("No space left on device").never("64\t"))
            .settings(r#"{"memory_mib": 16}"#),
    ]
}

/// Item 4: the callback port, tried from a command; the host's nftables
/// rule rejects the agents' users' connections to it (the scene's listener
/// stands where the daemon's would).
pub fn reach(s: &Scene) -> Vec<Attempt> {
    use Class::Reach as R;
    let port = s.callback_port;
    let refused = "Connection refused";
    vec![
        attempt(
            R,
            "the callback port, through bash's /dev/tcp",
            format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONN''ECTED"),
            "the provisioner's nftables rule (meta skuid, tcp dport, reject with tcp reset); without it the connect succeeds",
            Expect::new().says(refused).never("CONNECTED"),
        ),
        attempt(
            R,
            "the callback port, through python",
            format!(
                "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port})); print(\"CONN\" + \"ECTED\")'"
            ),
            "the same rule, whatever program connects",
            Expect::new()
                .says("ConnectionRefusedError")
                .never("CONNECTED"),
        ),
        attempt(
            R,
            "a connection flood on the callback port",
            format!(
                "n=0; for i in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && n=$((n+1)); done; echo open=$n"
            ),
            "the same rule: no connection is ever opened to hold the daemon's descriptors",
            Expect::new().stdout("open=0\n"),
        ),
        attempt(
            R,
            "the callback port, as the other agent",
            format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONN''ECTED"),
            "the rule holds every shell agent's uid",
            Expect::new().says(refused).never("CONNECTED"),
        )
        .by(Agent::Theo),
    ]
}
