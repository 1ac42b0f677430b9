//! Free loopback ports for a server this crate starts: the kernel picks
//! each, and the listener is closed just before the server binds it.

use std::net::{Ipv4Addr, SocketAddr, TcpListener};

pub fn free() -> std::io::Result<SocketAddr> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
    listener.local_addr()
}
