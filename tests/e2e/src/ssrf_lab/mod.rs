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
mod error;
mod hits;
mod honeypots;
mod host;
mod ip;
mod isolation;
mod names;
pub mod plan;
mod settle;
mod site;
mod wiring;

use std::ffi::OsStr;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

pub use attempt::{Attempt, Inside};
pub use dns::{Answer, Asked, ZONE, Zone};
pub use error::LabError;
pub use hickory_server::proto::rr::RecordType;
pub use hits::{Hit, Transport};
pub use host::TestHost;
pub use isolation::Isolation;
pub use site::{Reply, Served, Site};

use hits::Hits;
use names::Names;
use plan::{
    EMBEDDING_IN_NET, FORBIDDEN_IN_NET, FORBIDDEN_IN_WORKER, LINK, LINK_LOCAL, NAMESERVER, NET_V4,
    NET_V6,
};
use site::Requests;

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

    fn runtime(&self) -> &tokio::runtime::Runtime {
        // Taken only in drop, after which no method runs.
        self.runtime
            .as_ref()
            .expect("the lab's runtime lives as long as the lab")
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
