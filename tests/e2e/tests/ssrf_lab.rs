//! The SSRF lab proves itself (§3.4, the SSRF matrix): test hosts, honeypots
//! and scripted DNS are reached from inside the worker namespace, the host's
//! own network is not, an attempt from outside is refused, and nothing of a
//! lab outlives it.

use std::collections::BTreeSet;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV6, TcpStream, UdpSocket};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use e2e::ssrf_lab::plan::{
    EMBEDDING_IN_NET, FORBIDDEN_IN_NET, HONEYPOT_UDP_PORT, LINK, LINK_LOCAL, UDP_ONLY_IN_NET,
    WORKER_V4, WORKER_V6,
};
use e2e::ssrf_lab::{Answer, Hit, Lab, LabError, Ns, RecordType, Reply, Site, Transport};

/// Runs `program args` inside the worker namespace to its end.
fn run_in_worker(lab: &Lab, program: &str, args: &[&str]) -> Output {
    lab.command_in_worker(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run {program} in the worker namespace: {e}"))
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Where each hit reached, for comparing sets.
/// Runs `command` (made by `Lab::command_in_worker`, reading a line before
/// it acts) so that the attempt is checked before it acts, as the matrix
/// checks the worker, and returns what it printed with what reached a
/// honeypot.
fn run_checked(lab: &Lab, command: &mut Command) -> (Output, Vec<Hit>) {
    let mut probe = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the probe");
    let attempt = lab
        .attempt(probe.id())
        .expect("the probe is inside the lab");
    probe
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"go\n")
        .expect("start the probe");
    let output = probe.wait_with_output().expect("the probe ends");
    let hits = attempt.honeypot_hits().expect("hits");
    (output, hits)
}

fn places(hits: &[Hit]) -> BTreeSet<(String, IpAddr, u16)> {
    hits.iter()
        .map(|h| (format!("{:?}", h.transport), h.addr, h.port))
        .collect()
}

#[test]
fn s3_4_a_test_host_is_served_by_name_over_both_families() {
    let lab = Lab::start().expect("start the lab");
    let host = lab
        .host(
            "public.test",
            Site::new().page("/", "<h1>the public page</h1>"),
        )
        .expect("a test host");
    for family in ["-4", "-6"] {
        let output = run_in_worker(
            &lab,
            "curl",
            &["-sS", "--max-time", "10", family, "http://public.test/"],
        );
        assert!(output.status.success(), "curl {family}: {}", text(&output));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "<h1>the public page</h1>"
        );
    }
    let requests = host.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests.iter().all(|r| r.method == "GET"
            && r.target == "/"
            && r.host.as_deref() == Some("public.test"))
    );
    let from: BTreeSet<IpAddr> = requests.iter().map(|r| r.from.ip()).collect();
    assert_eq!(
        from,
        BTreeSet::from([IpAddr::V4(WORKER_V4), IpAddr::V6(WORKER_V6)])
    );
    assert_eq!(lab.honeypot_hits().expect("hits"), Vec::new());
}

#[test]
fn s3_4_a_connect_to_10_0_0_1_from_a_checked_process_counts_one_honeypot_hit() {
    let lab = Lab::start().expect("start the lab");
    // The probe waits for a line before it connects.
    let (output, hits) = run_checked(
        &lab,
        lab.command_in_worker("python3").args([
            "-c",
            "import socket, sys\nsys.stdin.readline()\nsocket.create_connection(('10.0.0.1', 80), timeout=10).close()\nprint('connected')",
        ]),
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(
        (hits[0].transport, hits[0].addr, hits[0].port),
        (Transport::Tcp, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 80)
    );
    assert_eq!(hits[0].from.ip(), IpAddr::V4(WORKER_V4));
}

#[test]
fn s3_4_every_forbidden_address_has_a_honeypot_that_counts() {
    let lab = Lab::start().expect("start the lab");
    let (expected, hits) = lab
        .attempt_in_worker(|attempt| {
            let link = nix::net::if_::if_nametoindex(LINK).expect("the worker's link");
            let mut tcp: Vec<SocketAddr> = FORBIDDEN_IN_NET
                .iter()
                .chain(&EMBEDDING_IN_NET)
                .map(|a| SocketAddr::new(*a, 80))
                .collect();
            tcp.push(SocketAddr::V6(SocketAddrV6::new(LINK_LOCAL, 80, 0, link)));
            tcp.push("127.0.0.1:22".parse().expect("addr"));
            tcp.push("[::1]:8080".parse().expect("addr"));
            tcp.push(SocketAddr::new(IpAddr::V4(WORKER_V4), 443));
            tcp.push(SocketAddr::new(IpAddr::V6(WORKER_V6), 80));
            for at in &tcp {
                TcpStream::connect(at).unwrap_or_else(|e| panic!("connect to {at}: {e}"));
            }
            // The unspecified addresses are this host's loopback: their
            // honeypots count them.
            for unspecified in ["0.0.0.0:80", "[::]:80"] {
                TcpStream::connect(unspecified)
                    .unwrap_or_else(|e| panic!("connect to {unspecified}: {e}"));
            }
            tcp.push("127.0.0.1:80".parse().expect("addr"));
            tcp.push("[::1]:80".parse().expect("addr"));
            let mut udp: Vec<SocketAddr> = vec![
                SocketAddr::new(FORBIDDEN_IN_NET[0], HONEYPOT_UDP_PORT),
                SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), HONEYPOT_UDP_PORT),
            ];
            for addr in UDP_ONLY_IN_NET {
                let scope = if addr.is_ipv6() { link } else { 0 };
                udp.push(match addr {
                    IpAddr::V6(v6) => {
                        SocketAddr::V6(SocketAddrV6::new(v6, HONEYPOT_UDP_PORT, 0, scope))
                    }
                    IpAddr::V4(_) => SocketAddr::new(addr, HONEYPOT_UDP_PORT),
                });
            }
            for at in &udp {
                let any = if at.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" };
                let socket = UdpSocket::bind(any).expect("bind");
                socket.set_broadcast(true).expect("broadcast");
                socket
                    .send_to(b"stun", at)
                    .unwrap_or_else(|e| panic!("send to {at}: {e}"));
            }
            let expected: BTreeSet<_> = tcp
                .iter()
                .map(|a| ("Tcp".to_string(), a.ip(), a.port()))
                .chain(udp.iter().map(|a| ("Udp".to_string(), a.ip(), a.port())))
                .collect();
            (expected, attempt.honeypot_hits().expect("hits"))
        })
        .expect("an attempt inside the lab");
    assert_eq!(hits.len(), expected.len(), "one hit each: {hits:?}");
    assert_eq!(places(&hits), expected);
}

#[test]
fn s3_4_dns_answers_scripted_names_and_only_in_its_zone() {
    let lab = Lab::start().expect("start the lab");
    let zone = lab.dns();
    zone.set("private.test", &["10.0.0.1".parse().expect("addr")])
        .expect("script");
    zone.set(
        "both.test",
        &[
            "45.33.20.200".parse().expect("addr"),
            "127.0.0.1".parse().expect("addr"),
        ],
    )
    .expect("script");
    let private = run_in_worker(&lab, "getent", &["ahostsv4", "private.test"]);
    assert!(private.status.success(), "{}", text(&private));
    assert!(
        text(&private).starts_with("10.0.0.1 "),
        "{}",
        text(&private)
    );
    let both = run_in_worker(&lab, "getent", &["ahostsv4", "BOTH.Test."]);
    let listed: BTreeSet<&str> = String::from_utf8_lossy(&both.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|a| {
            if a == "45.33.20.200" {
                "global"
            } else if a == "127.0.0.1" {
                "loopback"
            } else {
                "other"
            }
        })
        .collect();
    assert_eq!(
        listed,
        BTreeSet::from(["global", "loopback"]),
        "{}",
        text(&both)
    );
    // An unscripted name is NXDOMAIN: getent's "not found".
    let unknown = run_in_worker(&lab, "getent", &["ahostsv4", "nothing.test"]);
    assert_eq!(unknown.status.code(), Some(2), "{}", text(&unknown));
    match zone.set("example.com", &[]) {
        Err(LabError::NotInZone { name }) => assert_eq!(name, "example.com"),
        other => panic!("a name outside test. was scripted: {other:?}"),
    }
    assert!(
        zone.asked()
            .iter()
            .any(|a| a.name == "both.test" && a.record_type == RecordType::A)
    );
}

#[test]
fn s3_4_a_rebinding_name_answers_global_then_loopback() {
    let lab = Lab::start().expect("start the lab");
    lab.dns()
        .script(
            "rebind.test",
            vec![
                Answer::new(["45.33.20.77".parse().expect("addr")]).ttl(0),
                Answer::new(["127.0.0.1".parse().expect("addr")]).ttl(0),
            ],
        )
        .expect("script");
    let first = run_in_worker(&lab, "getent", &["ahostsv4", "rebind.test"]);
    let second = run_in_worker(&lab, "getent", &["ahostsv4", "rebind.test"]);
    assert!(
        text(&first).starts_with("45.33.20.77 "),
        "first: {}",
        text(&first)
    );
    assert!(
        text(&second).starts_with("127.0.0.1 "),
        "second: {}",
        text(&second)
    );
    let asked = lab
        .dns()
        .asked()
        .into_iter()
        .filter(|a| a.name == "rebind.test" && a.record_type == RecordType::A)
        .count();
    assert_eq!(asked, 2);
}

#[test]
fn s3_4_the_worker_namespace_has_no_route_to_the_host() {
    let lab = Lab::start().expect("start the lab");
    let isolation = lab
        .check_isolated()
        .expect("the worker namespace is isolated");
    let expected = BTreeSet::from(["lo".to_string(), LINK.to_string()]);
    assert_eq!(isolation.worker_interfaces, expected);
    assert_eq!(isolation.net_interfaces, expected);
    assert!(
        !isolation.host_addrs_unreachable.is_empty(),
        "the host has no address but loopback to probe"
    );
    // And from a process in the worker namespace too.
    let host = isolation.host_addrs_unreachable[0];
    let url = match host {
        IpAddr::V4(v4) => format!("http://{v4}/"),
        IpAddr::V6(v6) => format!("http://[{v6}]/"),
    };
    let output = run_in_worker(&lab, "curl", &["-sS", "--max-time", "2", &url]);
    assert!(
        !output.status.success(),
        "{url} answered inside the lab: {}",
        text(&output)
    );
}

#[test]
fn s3_4_an_attempt_from_outside_the_lab_is_refused() {
    let lab = Lab::start().expect("start the lab");
    let mut outside = Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let refusal = lab
        .attempt(outside.id())
        .expect_err("a process on the host's network");
    let _ = outside.kill();
    let _ = outside.wait();
    assert!(matches!(refusal, LabError::Outside { .. }), "{refusal:?}");
    let message = refusal.to_string();
    assert!(
        message.contains("refused to run an SSRF attempt")
            && message.contains(&format!("process {}", outside.id()))
            && message.contains("not the lab's worker namespace"),
        "{message}"
    );
}

#[test]
fn s3_4_a_scripted_redirect_to_a_forbidden_address_reaches_its_honeypot() {
    // curl follows redirects with no address policy: what the honeypots
    // exist to catch.
    let lab = Lab::start().expect("start the lab");
    let host = lab
        .host(
            "redirect.test",
            Site::new().route(
                "/go",
                Reply::redirect(302, "http://169.254.169.254/latest/meta-data/"),
            ),
        )
        .expect("a test host");
    let output = run_in_worker(
        &lab,
        "curl",
        &["-sS", "-L", "--max-time", "10", "http://redirect.test/go"],
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "honeypot 169.254.169.254:80"
    );
    assert_eq!(host.requests().len(), 1);
    let hits = lab.honeypot_hits().expect("hits");
    assert_eq!(
        places(&hits),
        BTreeSet::from([(
            "Tcp".to_string(),
            "169.254.169.254".parse().expect("addr"),
            80
        )])
    );
}

#[test]
fn s3_4_dropping_the_lab_removes_its_namespaces() {
    let lab = Lab::start().expect("start the lab");
    let names = [lab.worker_ns().to_string(), lab.net_ns().to_string()];
    let resolv = lab.resolv_conf();
    assert!(resolv.exists());
    for name in &names {
        assert!(Path::new("/run/netns").join(name).exists(), "{name}");
    }
    drop(lab);
    let listed = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    for name in &names {
        assert!(
            !Path::new("/run/netns").join(name).exists(),
            "{name} is left"
        );
        assert!(
            !Path::new("/etc/netns").join(name).exists(),
            "/etc/netns/{name} is left"
        );
        assert!(!String::from_utf8_lossy(&listed.stdout).contains(name.as_str()));
    }
}

#[test]
fn s3_4_a_killed_run_s_namespaces_are_removed_at_the_next_start() {
    let mut ended = Command::new("true").spawn().expect("spawn true");
    ended.wait().expect("wait");
    let stale = format!("cglab-{}-0-worker", ended.id());
    let ip = |args: &[&str]| {
        assert!(
            Command::new("ip")
                .args(args)
                .status()
                .expect("ip")
                .success(),
            "ip {args:?}"
        );
    };
    ip(&["netns", "add", &stale]);
    std::fs::create_dir_all(Path::new("/etc/netns").join(&stale)).expect("stale /etc/netns entry");
    let lab = Lab::start().expect("start the lab");
    assert!(
        !Path::new("/run/netns").join(&stale).exists(),
        "{stale} is left"
    );
    assert!(!Path::new("/etc/netns").join(&stale).exists());
    // A live lab is not stale.
    assert!(Path::new("/run/netns").join(lab.worker_ns()).exists());
}

#[tokio::test]
async fn s3_4_an_async_test_serves_and_fetches_through_the_lab() {
    let lab = Lab::start().expect("start the lab");
    let host = lab
        .host_unnamed(Site::new().page("/page", "served"))
        .expect("a test host");
    let url = format!("http://{}/page", host.addrs[0]);
    let body = lab
        .attempt_in_worker(|_attempt| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime inside the lab");
            runtime.block_on(async {
                let client = reqwest::Client::builder()
                    .no_proxy()
                    .build()
                    .expect("client");
                client
                    .get(&url)
                    .send()
                    .await
                    .expect("fetch")
                    .text()
                    .await
                    .expect("body")
            })
        })
        .expect("an attempt inside the lab");
    assert_eq!(body, "served");
    // Loopback inside the worker namespace is the lab's, not the host's.
    let page = lab
        .serve_at(
            Ns::Worker,
            "127.0.0.1:8081".parse().expect("addr"),
            Site::new().page("/", "own network"),
        )
        .expect("a loopback page");
    let output = run_in_worker(
        &lab,
        "curl",
        &["-sS", "--max-time", "10", "http://127.0.0.1:8081/"],
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "own network",
        "{}",
        text(&output)
    );
    assert_eq!(page.requests().len(), 1);
}

#[test]
fn s3_4_a_caller_that_is_not_root_is_told_the_lab_needs_root() {
    if nix::unistd::geteuid().is_root() {
        // Run this very test again as `nobody`, which cannot make namespaces.
        let exe = std::env::current_exe().expect("this test binary");
        let output = Command::new(exe)
            .args([
                "--exact",
                "s3_4_a_caller_that_is_not_root_is_told_the_lab_needs_root",
                "--nocapture",
            ])
            .uid(65534)
            .gid(65534)
            .output()
            .expect("run as nobody");
        assert!(output.status.success(), "{}", text(&output));
        assert!(text(&output).contains("1 passed"), "{}", text(&output));
        return;
    }
    let refusal = Lab::start().expect_err("a lab without root");
    assert!(matches!(refusal, LabError::NotRoot { .. }));
    assert!(refusal.to_string().contains("needs root"), "{refusal}");
}

#[test]
fn s3_4_a_worker_run_as_its_own_user_is_inside_the_lab() {
    // As a worker runs: `ip netns exec` enters as root, then setpriv drops
    // to the worker's user; the process stays in the lab.
    let lab = Lab::start().expect("start the lab");
    let (output, hits) = run_checked(
        &lab,
        lab.command_in_worker("setpriv").args([
            "--reuid=nobody",
            "--regid=nogroup",
            "--clear-groups",
            "--",
            "sh",
            "-c",
            "read line; curl -sS --max-time 10 http://192.168.0.1:8080/ >/dev/null; id -u",
        ]),
    );
    assert!(output.status.success(), "{}", text(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "65534");
    assert_eq!(
        places(&hits),
        BTreeSet::from([(
            "Tcp".to_string(),
            "192.168.0.1".parse().expect("addr"),
            8080
        )])
    );
}
