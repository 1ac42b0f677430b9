//! What a deployment decides about its browser sessions (§3.4 Browsing).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use collegium_web_page::CertificateProblem;
use futures::future::BoxFuture;
use url::Url;

/// Asked for a main-frame load that did not arrive: the egress proxy's
/// refusal of that address, if it refused it, in its own words (§3.4: a load
/// the policy stops is the refusal naming the address, not a page that failed
/// to load).
pub type RefusalFor = Arc<dyn Fn(&Url) -> Option<String> + Send + Sync>;

/// Asked where Chromium found a certificate's issuer untrusted: what the
/// fetch route's verifier finds wrong with the same site's certificate.
/// Chromium gives one error for a self-signed certificate, a chain sent
/// without its intermediates and an issuer nothing here trusts, and the
/// site is blamed only where the error establishes it (§3.4 certificates).
pub type CertificateCheck =
    Arc<dyn Fn(Url) -> BoxFuture<'static, Option<CertificateProblem>> + Send + Sync>;

#[derive(Clone)]
pub struct SessionsConfig {
    /// Debian's Chromium, named explicitly: nothing is detected or fetched.
    pub chromium: PathBuf,
    /// The egress proxy every request of the browser goes through (§3.4
    /// scope); `None` only where a test declares its own network open.
    pub proxy: Option<SocketAddr>,
    /// How many sessions may be live at once (§3.4: each holds a rendered page).
    pub live_cap: usize,
    /// A session no turn has acted in for this long is ended, should the
    /// turn's end never be reported.
    pub idle_timeout: Duration,
    /// The bound on waiting for a page to redraw from what an action started.
    pub settle_wait: Duration,
    pub refusal_for: RefusalFor,
    pub check_certificate: CertificateCheck,
    /// Run Chromium without its own sandbox when this process is root.
    /// Chromium refuses to start as root with its sandbox on; the worker
    /// never runs as root, so only tests, which run as root, set this.
    pub root_without_sandbox: bool,
}

impl SessionsConfig {
    /// A configuration with the defaults the worker uses.
    pub fn new(chromium: PathBuf, proxy: Option<SocketAddr>, live_cap: usize) -> Self {
        Self {
            chromium,
            proxy,
            live_cap,
            idle_timeout: Duration::from_secs(15 * 60),
            settle_wait: Duration::from_secs(5),
            refusal_for: Arc::new(|_| None),
            check_certificate: Arc::new(|_| Box::pin(async { None })),
            root_without_sandbox: false,
        }
    }
}

impl std::fmt::Debug for SessionsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionsConfig")
            .field("chromium", &self.chromium)
            .field("proxy", &self.proxy)
            .field("live_cap", &self.live_cap)
            .field("idle_timeout", &self.idle_timeout)
            .field("settle_wait", &self.settle_wait)
            .field("root_without_sandbox", &self.root_without_sandbox)
            .finish_non_exhaustive()
    }
}
