//! The web toolset's deployment-wide policy (§3.4): each closed host must be
//! a host name, normalised as the browser worker judges it, so what the
//! worker enforces and what the daemon holds it to at the handshake are the
//! same list.

use crate::config::model::Config;
use crate::config::problems::{KeyPath, Problems};

pub fn check(config: &Config, problems: &mut Problems) {
    let Some(web) = &config.web else {
        return;
    };
    let key = KeyPath::root().key("web").key("closed_hosts");
    for (i, host) in web.closed_hosts.iter().enumerate() {
        if let Err(why) = closed_host(host) {
            problems.push(key.index(i), why);
        }
    }
}

/// A closed host as the browser worker compares it: lower case, without a
/// trailing dot, internationalised names in their ASCII form (WHATWG host
/// parsing, as the worker's own address policy parses a URL's host).
pub fn closed_host(written: &str) -> Result<String, String> {
    let trimmed = written.strip_suffix('.').unwrap_or(written);
    match url::Host::parse(trimmed) {
        Ok(url::Host::Domain(name)) if !name.is_empty() => Ok(name),
        Ok(url::Host::Domain(_)) | Err(_) => Err(format!(
            "`{written}` is not a host name; a closed host is a name such as `intranet.example` (its subdomains are closed with it, §3.4)"
        )),
        Ok(url::Host::Ipv4(_) | url::Host::Ipv6(_)) => Err(format!(
            "`{written}` is an address; a closed host is a name (its subdomains are closed with it, §3.4). Addresses of this machine and its own network are refused unless `own_network_browsable` is set"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::closed_host;

    #[test]
    fn s3_4_a_closed_host_is_normalised_as_the_worker_judges_it() {
        assert_eq!(
            closed_host("WIKI.Intranet.Test.").as_deref(),
            Ok("wiki.intranet.test")
        );
        assert_eq!(
            closed_host("bücher.example").as_deref(),
            Ok("xn--bcher-kva.example")
        );
        assert!(closed_host("10.0.0.1").is_err());
        assert!(closed_host("a b").is_err());
        assert!(closed_host("").is_err());
    }
}
