//! Who may use the proxy: this worker's own user alone, which its Chromium
//! runs as. The proxy listens on loopback, where every local process can
//! reach it; an agent's shell command must not borrow it to reach what the
//! scope lets the browser reach (§6.4: an agent's user never reaches what
//! the framework runs), nor a raw client open tunnels Chromium would not
//! (its unsafe ports). A TCP peer carries no credentials, so the owner of
//! the client's socket is read from the kernel's table of the calling
//! thread's network namespace.

use std::net::{IpAddr, SocketAddr};

/// The uid owning the TCP socket at `client` connected to `server`, if the
/// kernel lists it.
pub fn owner(client: SocketAddr, server: SocketAddr) -> Option<u32> {
    let (table, client, server) = match (client.ip(), server.ip()) {
        (IpAddr::V4(c), IpAddr::V4(s)) => (
            "/proc/thread-self/net/tcp",
            format!(
                "{:08X}:{:04X}",
                u32::from_ne_bytes(c.octets()),
                client.port()
            ),
            format!(
                "{:08X}:{:04X}",
                u32::from_ne_bytes(s.octets()),
                server.port()
            ),
        ),
        _ => return None,
    };
    let listed = std::fs::read_to_string(table).ok()?;
    find_owner(&listed, &client, &server)
}

/// The uid column of the row whose local address is `client` and remote
/// address is `server`.
fn find_owner(table: &str, client: &str, server: &str) -> Option<u32> {
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // sl, local_address, rem_address, st, tx:rx, tr:when, retrnsmt, uid
        (fields.len() > 7 && fields[1] == client && fields[2] == server)
            .then(|| fields[7].parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:A0F1 00000000:0000 0A 00000000:00000000 00:00000000 00000000   998        0 1001 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D431 0100007F:A0F1 01 00000000:00000000 00:00000000 00000000  1002        0 1002 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:D432 0100007F:A0F1 01 00000000:00000000 00:00000000 00000000   998        0 1003 1 0000000000000000 20 4 30 10 -1
";

    #[test]
    fn s6_4_the_client_socket_s_row_names_its_owner() {
        assert_eq!(
            find_owner(TABLE, "0100007F:D431", "0100007F:A0F1"),
            Some(1002)
        );
        assert_eq!(
            find_owner(TABLE, "0100007F:D432", "0100007F:A0F1"),
            Some(998)
        );
        assert_eq!(find_owner(TABLE, "0100007F:D433", "0100007F:A0F1"), None);
    }

    #[test]
    fn s6_4_this_process_s_own_connection_is_its_own() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let server = listener.local_addr().expect("address");
        let client = std::net::TcpStream::connect(server).expect("connect");
        let at = client.local_addr().expect("address");
        assert_eq!(owner(at, server), Some(nix::unistd::geteuid().as_raw()));
    }
}
