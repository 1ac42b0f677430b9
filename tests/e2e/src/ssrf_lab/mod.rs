//! The SSRF lab (§3.4, the SSRF matrix): two network namespaces joined by a
//! veth and nothing else. The worker runs in one; the other holds the test
//! hosts on global addresses, a honeypot on every forbidden address and a
//! scripted DNS server, so no packet leaves the machine even if the address
//! policy is wrong. Attempts are made only through [`Attempt`], which the lab
//! hands out for a process or thread it has checked is inside.
//!
//! Root only: creating namespaces needs it.

mod attempt;
mod dns;
mod enter;
mod hits;
mod ip;
mod isolation;
mod names;
pub mod plan;
mod settle;
mod site;

use std::ffi::OsStr;
use std::net::{IpAddr, SocketAddr, SocketAddrV6};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

pub use attempt::{Attempt, Inside};
pub use dns::{Answer, Asked, ZONE, Zone};
pub use hickory_server::proto::rr::RecordType;
pub use hits::{Hit, Transport};
pub use isolation::Isolation;
pub use site::{Reply, Served, Site};

use hits::Hits;
use ip::ip;
use names::Names;
use plan::{
    EMBEDDING_IN_NET, FORBIDDEN_IN_NET, FORBIDDEN_IN_WORKER, HONEYPOT_TCP_PORTS, HONEYPOT_UDP_PORT,
    LINK, LINK_LOCAL, LINK_V4_PREFIX, LINK_V6_PREFIX, NAMESERVER, NET_V4, NET_V6, UDP_ONLY_IN_NET,
    WORKER_V4, WORKER_V6,
};
use site::Requests;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error(
        "the SSRF lab creates network namespaces, which needs root; this test runs as uid {uid}"
    )]
    NotRoot { uid: u32 },
    #[error("`ip {command}` failed: {message}")]
    Ip { command: String, message: String },
    #[error("could not enter the network namespace {namespace}: {message}")]
    Enter { namespace: String, message: String },
    #[error("could not bind {addr} in the lab: {message}")]
    Bind { addr: SocketAddr, message: String },
    #[error("could not write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("the lab's runtime could not start: {0}")]
    Runtime(std::io::Error),
    #[error("the lab's DNS server answers only names under `{ZONE}.`; `{name}` is not")]
    NotInZone { name: String },
    #[error("the lab has no test host addresses left")]
    HostsExhausted,
    #[error("refused to run an SSRF attempt from {what} outside the lab: {why}")]
    Outside { what: String, why: String },
    #[error("the honeypots' hits could not be read whole: {why}")]
    Unsettled { why: String },
    #[error("the lab's worker namespace is not isolated from the host: {why}")]
    NotIsolated { why: String },
}

/// Which of the lab's two namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ns {
    /// Where the worker runs: loopback, the link, its own global addresses.
    Worker,
    /// The rest of the world: test hosts, honeypots, DNS.
    Net,
}

/// A honeypot: a listener on a forbidden address that nothing should reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Honeypot {
    pub ns: Ns,
    pub transport: Transport,
    pub at: SocketAddr,
}

/// A test host: a scripted site on global addresses in the net namespace,
/// port 80, named in the lab's DNS.
#[derive(Debug, Clone)]
pub struct TestHost {
    /// Its DNS name, when it has one.
    pub name: Option<String>,
    /// Where it listens.
    pub addrs: Vec<SocketAddr>,
    requests: Requests,
    connections: Hits,
}

impl TestHost {
    /// Every request it answered, in order.
    pub fn requests(&self) -> Vec<Served> {
        self.requests.all()
    }

    /// Every connection it accepted.
    pub fn connections(&self) -> Vec<Hit> {
        self.connections.all()
    }

    /// `http://NAME/path`, or by its first address when it has no name.
    pub fn url(&self, path: &str) -> String {
        match (&self.name, self.addrs.first()) {
            (Some(name), _) => format!("http://{name}{path}"),
            (None, Some(addr)) => format!("http://{addr}{path}"),
            (None, None) => format!("http://unbound.invalid{path}"),
        }
    }
}

/// A running lab. Dropping it stops its servers and removes its namespaces
/// and their `/etc/netns` entries.
pub struct Lab {
    names: Names,
    runtime: Option<tokio::runtime::Runtime>,
    dns: Option<hickory_server::Server<dns::Scripted>>,
    zone: Zone,
    hits: Hits,
    honeypots: Vec<Honeypot>,
    hosted: std::sync::Mutex<Vec<IpAddr>>,
    next_host: AtomicU8,
}

impl std::fmt::Debug for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lab")
            .field("worker", &self.names.worker)
            .field("net", &self.names.net)
            .finish_non_exhaustive()
    }
}

impl Lab {
    /// Builds the namespaces, the link, the honeypots and the DNS server,
    /// after removing what labs of killed test runs left behind.
    pub fn start() -> Result<Self, LabError> {
        let uid = nix::unistd::geteuid();
        if !uid.is_root() {
            return Err(LabError::NotRoot { uid: uid.as_raw() });
        }
        names::remove_stale();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ssrf-lab")
            .enable_all()
            .build()
            .map_err(LabError::Runtime)?;
        // Built before anything is created, so an error part-way drops it
        // and so removes whatever was made.
        let mut lab = Self {
            names: names::fresh(),
            runtime: Some(runtime),
            dns: None,
            zone: Zone::default(),
            hits: Hits::default(),
            honeypots: Vec::new(),
            hosted: std::sync::Mutex::new(Vec::new()),
            next_host: AtomicU8::new(10),
        };
        lab.build_namespaces()?;
        lab.write_resolv_conf()?;
        lab.start_honeypots()?;
        lab.start_dns()?;
        Ok(lab)
    }

    fn build_namespaces(&self) -> Result<(), LabError> {
        let (w, n) = (self.names.worker.as_str(), self.names.net.as_str());
        ip(&["netns", "add", w])?;
        ip(&["netns", "add", n])?;
        // Both ends are made in their namespaces: the host's never holds
        // either, even for a moment.
        ip(&[
            "link", "add", "name", LINK, "netns", w, "type", "veth", "peer", "name", LINK, "netns",
            n,
        ])?;
        let worker_v4 = format!("{WORKER_V4}/{LINK_V4_PREFIX}");
        let worker_v6 = format!("{WORKER_V6}/{LINK_V6_PREFIX}");
        let net_v4 = format!("{NET_V4}/{LINK_V4_PREFIX}");
        let net_v6 = format!("{NET_V6}/{LINK_V6_PREFIX}");
        let link_local = format!("{LINK_LOCAL}/64");
        let commands: [&[&str]; 9] = [
            &["-n", w, "link", "set", "lo", "up"],
            &["-n", n, "link", "set", "lo", "up"],
            &["-n", w, "addr", "add", &worker_v4, "dev", LINK],
            // nodad: an address waiting out duplicate detection cannot be
            // bound, and nothing else is on the link to duplicate it.
            &["-n", w, "addr", "add", &worker_v6, "dev", LINK, "nodad"],
            &["-n", n, "addr", "add", &net_v4, "dev", LINK],
            &["-n", n, "addr", "add", &net_v6, "dev", LINK, "nodad"],
            &["-n", n, "addr", "add", &link_local, "dev", LINK, "nodad"],
            &["-n", w, "link", "set", LINK, "up"],
            &["-n", n, "link", "set", LINK, "up"],
        ];
        for args in commands {
            ip(args)?;
        }
        self.add_to_net_loopback(IpAddr::V4(NAMESERVER))?;
        for addr in FORBIDDEN_IN_NET.into_iter().chain(EMBEDDING_IN_NET) {
            self.add_to_net_loopback(addr)?;
        }
        // Everything not the worker's own goes over the link: the forbidden
        // ranges reach their honeypots, the test hosts their servers.
        ip(&[
            "-n",
            w,
            "route",
            "add",
            "default",
            "via",
            &NET_V4.to_string(),
        ])?;
        ip(&[
            "-n",
            w,
            "-6",
            "route",
            "add",
            "default",
            "via",
            &NET_V6.to_string(),
        ])?;
        Ok(())
    }

    fn add_to_net_loopback(&self, addr: IpAddr) -> Result<(), LabError> {
        let n = self.names.net.as_str();
        match addr {
            IpAddr::V4(_) => ip(&["-n", n, "addr", "add", &format!("{addr}/32"), "dev", "lo"]),
            IpAddr::V6(_) => ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("{addr}/128"),
                "dev",
                "lo",
                "nodad",
            ]),
        }
        .map(drop)
    }

    /// `ip netns exec` mounts this over `/etc/resolv.conf`, so a worker run
    /// there resolves through the lab's DNS server.
    fn write_resolv_conf(&self) -> Result<(), LabError> {
        let dir = names::etc(&self.names.worker);
        let path = dir.join("resolv.conf");
        let write = || -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            std::fs::write(&path, format!("nameserver {NAMESERVER}\n"))
        };
        write().map_err(|source| LabError::Write {
            path: path.clone(),
            message: source.to_string(),
        })
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Taken only in drop, after which no method runs.
        self.runtime
            .as_ref()
            .expect("the lab's runtime lives as long as the lab")
    }

    fn start_honeypots(&mut self) -> Result<(), LabError> {
        let net_link = self.link_index(Ns::Net)?;
        let mut places: Vec<(Ns, IpAddr, u32)> = Vec::new();
        places.extend(
            FORBIDDEN_IN_NET
                .iter()
                .chain(&EMBEDDING_IN_NET)
                .map(|a| (Ns::Net, *a, 0)),
        );
        places.push((Ns::Net, IpAddr::V6(LINK_LOCAL), net_link));
        places.extend(FORBIDDEN_IN_WORKER.iter().map(|a| (Ns::Worker, *a, 0)));
        for (ns, addr, scope) in places {
            for port in HONEYPOT_TCP_PORTS {
                let at = scoped(addr, port, scope);
                self.serve(
                    ns,
                    at,
                    Site::honeypot(at),
                    self.hits.clone(),
                    Requests::default(),
                )?;
                self.honeypots.push(Honeypot {
                    ns,
                    transport: Transport::Tcp,
                    at,
                });
            }
            self.udp_honeypot(ns, scoped(addr, HONEYPOT_UDP_PORT, scope))?;
        }
        for addr in UDP_ONLY_IN_NET {
            let scope = if addr.is_ipv6() { net_link } else { 0 };
            self.udp_honeypot(Ns::Net, scoped(addr, HONEYPOT_UDP_PORT, scope))?;
        }
        Ok(())
    }

    fn udp_honeypot(&mut self, ns: Ns, at: SocketAddr) -> Result<(), LabError> {
        let socket = enter::bind_udp(&self.handle(ns), at)?;
        let _entered = self.runtime().enter();
        let socket = tokio::net::UdpSocket::from_std(socket).map_err(|e| LabError::Bind {
            addr: at,
            message: e.to_string(),
        })?;
        self.runtime()
            .spawn(site::sink_udp(socket, self.hits.clone()));
        self.honeypots.push(Honeypot {
            ns,
            transport: Transport::Udp,
            at,
        });
        Ok(())
    }

    fn start_dns(&mut self) -> Result<(), LabError> {
        let at = SocketAddr::new(IpAddr::V4(NAMESERVER), 53);
        let udp = enter::bind_udp(&self.net_handle(), at)?;
        let tcp = self.bind_tcp_in(Ns::Net, at)?;
        let bind_error = |e: std::io::Error| LabError::Bind {
            addr: at,
            message: e.to_string(),
        };
        let _entered = self.runtime().enter();
        let mut server = hickory_server::Server::new(dns::Scripted(self.zone.clone()));
        server.register_socket(tokio::net::UdpSocket::from_std(udp).map_err(bind_error)?);
        server.register_listener(
            tokio::net::TcpListener::from_std(tcp).map_err(bind_error)?,
            Duration::from_secs(5),
            64 * 1024,
        );
        self.dns = Some(server);
        Ok(())
    }

    /// Serves `site` at `addr` inside `ns` on the lab's runtime.
    fn serve(
        &self,
        ns: Ns,
        addr: SocketAddr,
        site: Site,
        hits: Hits,
        requests: Requests,
    ) -> Result<(), LabError> {
        let listener = self.bind_tcp_in(ns, addr)?;
        let _entered = self.runtime().enter();
        let listener = tokio::net::TcpListener::from_std(listener).map_err(|e| LabError::Bind {
            addr,
            message: e.to_string(),
        })?;
        self.runtime()
            .spawn(site::serve(listener, Arc::new(site), hits, requests));
        Ok(())
    }

    /// The index of the link's end in `ns`, the scope of its link-local
    /// addresses.
    fn link_index(&self, ns: Ns) -> Result<u32, LabError> {
        enter::within(&self.handle(ns), || nix::net::if_::if_nametoindex(LINK))?.map_err(|errno| {
            LabError::Enter {
                namespace: self.ns_name(ns).to_string(),
                message: format!("no {LINK}: {}", errno.desc()),
            }
        })
    }

    pub fn worker_ns(&self) -> &str {
        &self.names.worker
    }

    pub fn net_ns(&self) -> &str {
        &self.names.net
    }

    fn ns_name(&self, ns: Ns) -> &str {
        match ns {
            Ns::Worker => &self.names.worker,
            Ns::Net => &self.names.net,
        }
    }

    fn handle(&self, ns: Ns) -> PathBuf {
        names::handle(self.ns_name(ns))
    }

    pub(crate) fn worker_handle(&self) -> PathBuf {
        self.handle(Ns::Worker)
    }

    pub(crate) fn net_handle(&self) -> PathBuf {
        self.handle(Ns::Net)
    }

    /// The file `ip netns exec` puts in place of `/etc/resolv.conf` for the
    /// worker namespace.
    pub fn resolv_conf(&self) -> PathBuf {
        names::etc(&self.names.worker).join("resolv.conf")
    }

    /// The lab's DNS server, for a resolver configured in code.
    pub fn nameserver(&self) -> SocketAddr {
        SocketAddr::new(IpAddr::V4(NAMESERVER), 53)
    }

    /// The scripted zone `test.`.
    pub fn dns(&self) -> &Zone {
        &self.zone
    }

    /// Where the honeypots listen.
    pub fn honeypots(&self) -> &[Honeypot] {
        &self.honeypots
    }

    /// Every honeypot connection and datagram since the lab started, once
    /// every honeypot has taken in what reached it.
    pub fn honeypot_hits(&self) -> Result<Vec<Hit>, LabError> {
        settle::settle(self)?;
        Ok(self.hits.all())
    }

    /// Every address the lab itself holds, in either namespace.
    pub fn addresses(&self) -> Vec<IpAddr> {
        let mut addrs = vec![
            IpAddr::V4(NET_V4),
            IpAddr::V6(NET_V6),
            IpAddr::V4(NAMESERVER),
            IpAddr::V6(LINK_LOCAL),
        ];
        addrs.extend(FORBIDDEN_IN_NET);
        addrs.extend(EMBEDDING_IN_NET);
        addrs.extend(FORBIDDEN_IN_WORKER);
        addrs.extend(
            self.hosted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter(),
        );
        addrs
    }

    /// A TCP listener bound at `addr` inside `ns`; the test process stays
    /// where it is, and the socket stays in the lab.
    pub fn bind_tcp_in(&self, ns: Ns, addr: SocketAddr) -> Result<std::net::TcpListener, LabError> {
        enter::bind_tcp(&self.handle(ns), addr)
    }

    /// A UDP socket bound at `addr` inside `ns`.
    pub fn bind_udp_in(&self, ns: Ns, addr: SocketAddr) -> Result<std::net::UdpSocket, LabError> {
        enter::bind_udp(&self.handle(ns), addr)
    }

    /// Runs `work` on a thread inside `ns` (to probe or set up; an SSRF
    /// attempt goes through [`Lab::attempt_in_worker`]).
    pub fn within<T: Send>(&self, ns: Ns, work: impl FnOnce() -> T + Send) -> Result<T, LabError> {
        enter::within(&self.handle(ns), work)
    }

    /// A test host named `name` (under `test.`): `site` on port 80 of fresh
    /// global addresses, IPv4 and IPv6, in the net namespace, with DNS
    /// answering both.
    pub fn host(&self, name: &str, site: Site) -> Result<TestHost, LabError> {
        let mut host = self.host_unnamed(site)?;
        let addrs: Vec<IpAddr> = host.addrs.iter().map(SocketAddr::ip).collect();
        self.zone.set(name, &addrs)?;
        host.name = Some(name.trim_end_matches('.').to_ascii_lowercase());
        Ok(host)
    }

    /// A test host on fresh global addresses with no DNS name.
    pub fn host_unnamed(&self, site: Site) -> Result<TestHost, LabError> {
        let n = self.next_host.fetch_add(1, Ordering::Relaxed);
        if n == u8::MAX {
            return Err(LabError::HostsExhausted);
        }
        let addrs = [IpAddr::V4(plan::host_v4(n)), IpAddr::V6(plan::host_v6(n))];
        for addr in addrs {
            self.add_to_net_loopback(addr)?;
            self.hosted
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push(addr);
        }
        let sockets: Vec<SocketAddr> = addrs.iter().map(|a| SocketAddr::new(*a, 80)).collect();
        self.serve_at_all(Ns::Net, &sockets, site)
    }

    /// `site` served at `addr` inside `ns`: a loopback page in the worker
    /// namespace, say, which the own-network declaration lets through.
    pub fn serve_at(&self, ns: Ns, addr: SocketAddr, site: Site) -> Result<TestHost, LabError> {
        self.serve_at_all(ns, &[addr], site)
    }

    fn serve_at_all(&self, ns: Ns, addrs: &[SocketAddr], site: Site) -> Result<TestHost, LabError> {
        let host = TestHost {
            name: None,
            addrs: addrs.to_vec(),
            requests: Requests::default(),
            connections: Hits::default(),
        };
        for addr in addrs {
            self.serve(
                ns,
                *addr,
                site.clone(),
                host.connections.clone(),
                host.requests.clone(),
            )?;
        }
        Ok(host)
    }

    /// `ip netns exec WORKER program`: a process in the worker namespace,
    /// resolving through the lab's DNS server. Make attempts from it with
    /// [`Lab::attempt`].
    pub fn command_in_worker(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", &self.names.worker])
            .arg(program);
        command
    }

    /// An attempt from process `pid`, refused unless that process is in the
    /// worker namespace. A process just spawned by
    /// [`Lab::command_in_worker`] is waited for while it enters.
    pub fn attempt(&self, pid: u32) -> Result<Attempt<'_>, LabError> {
        attempt::check_process(pid, &self.worker_handle())?;
        Ok(Attempt::new(self, Inside::Process(pid)))
    }

    /// Runs `work` on a thread inside the worker namespace, with the attempt
    /// it makes; refused if the thread is not inside. Sockets the work
    /// opens (a tokio runtime it builds included) are in the lab; a
    /// resolver it builds must be pointed at [`Lab::nameserver`], since
    /// this process's `/etc/resolv.conf` is the host's.
    pub fn attempt_in_worker<T: Send>(
        &self,
        work: impl FnOnce(&Attempt<'_>) -> T + Send,
    ) -> Result<T, LabError> {
        let worker = self.worker_handle();
        enter::within(&worker, || {
            attempt::check_thread(&worker)?;
            Ok(work(&Attempt::new(self, Inside::Thread)))
        })?
    }

    /// Checks that the worker namespace has no route to the host's own
    /// network.
    pub fn check_isolated(&self) -> Result<Isolation, LabError> {
        isolation::check(self)
    }
}

fn scoped(addr: IpAddr, port: u16, scope: u32) -> SocketAddr {
    match addr {
        IpAddr::V6(v6) if scope != 0 => SocketAddr::V6(SocketAddrV6::new(v6, port, 0, scope)),
        _ => SocketAddr::new(addr, port),
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        drop(self.dns.take());
        if let Some(runtime) = self.runtime.take() {
            // Dropping a runtime may not block inside another (a
            // #[tokio::test]); there its tasks end in the background.
            if tokio::runtime::Handle::try_current().is_ok() {
                runtime.shutdown_background();
            } else {
                runtime.shutdown_timeout(Duration::from_secs(2));
            }
        }
        names::remove(&self.names.worker);
        names::remove(&self.names.net);
    }
}
