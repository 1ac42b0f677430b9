//! The honeypots: a listener on every forbidden address (§3.4, the SSRF
//! matrix), counting what reaches it.

use std::net::{IpAddr, SocketAddr, SocketAddrV6};

use super::hits::Transport;
use super::plan::{
    EMBEDDING_IN_NET, FORBIDDEN_IN_NET, FORBIDDEN_IN_WORKER, HONEYPOT_TCP_PORTS, HONEYPOT_UDP_PORT,
    LINK_LOCAL, UDP_ONLY_IN_NET,
};
use super::site::{self, Requests, Site};
use super::{Honeypot, Lab, LabError, Ns, enter};

impl Lab {
    pub(super) fn start_honeypots(&mut self) -> Result<(), LabError> {
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
}

fn scoped(addr: IpAddr, port: u16, scope: u32) -> SocketAddr {
    match addr {
        IpAddr::V6(v6) if scope != 0 => SocketAddr::V6(SocketAddrV6::new(v6, port, 0, scope)),
        _ => SocketAddr::new(addr, port),
    }
}
