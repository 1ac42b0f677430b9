//! `web::fetch`'s client held to the scope (§3.4 "bound by the same URL
//! policy on every redirect hop, with the connection pinned to the address
//! that passed").

use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;

use crate::refusal::Refusal;
use crate::resolver::Resolver;
use crate::scope::Scope;

/// Redirects followed in a row before the next is refused.
pub const MAX_REDIRECTS: usize = 10;

/// A reqwest resolver that resolves once, judges every answer and hands
/// reqwest only the judged addresses, so the connection is pinned to them.
#[derive(Debug, Clone)]
pub struct ScopedResolve {
    scope: Arc<Scope>,
    resolver: Resolver,
}

impl ScopedResolve {
    /// A resolver judging by `scope`.
    pub fn new(scope: Arc<Scope>, resolver: Resolver) -> Self {
        Self { scope, resolver }
    }
}

impl Resolve for ScopedResolve {
    fn resolve(&self, name: Name) -> Resolving {
        let this = self.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            // reqwest sets the URL's port on each address itself.
            match this.scope.resolve(&this.resolver, &host, 0).await {
                Ok(addresses) => Ok(Box::new(addresses.into_iter()) as Addrs),
                Err(refusal) => Err(Box::new(refusal) as Box<dyn std::error::Error + Send + Sync>),
            }
        })
    }
}

/// Judges every redirect hop's URL (scheme, closed host, literal address)
/// and refuses the hop after `limit`; a hop's name is judged when the
/// [`ScopedResolve`] resolves it.
pub fn redirect_policy(scope: Arc<Scope>, limit: usize) -> Policy {
    Policy::custom(move |attempt| {
        if attempt.previous().len() > limit {
            let url = attempt.url().to_string();
            return attempt.error(Refusal::TooManyRedirects { url, limit });
        }
        match scope.judge_url(attempt.url().as_str()) {
            Ok(_) => attempt.follow(),
            Err(refusal) => attempt.error(refusal),
        }
    })
}

/// A client builder held to `scope`: no proxy from the environment (an
/// `HTTP_PROXY` would route around the policy), the judging resolver, and
/// the judging redirect policy.
///
/// A literal address in a URL never reaches a resolver, so call
/// [`Scope::judge_url`] on every URL before sending it with this client.
/// A refused hop or name comes back inside a `reqwest::Error`; recover it
/// with [`Refusal::find_in`]. A 3xx reqwest could not follow (a `file:`
/// `Location`) comes back as a response: judge it with
/// [`unfollowed_redirect`].
pub fn client_builder(scope: Arc<Scope>, resolver: Resolver) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .dns_resolver(ScopedResolve::new(scope.clone(), resolver))
        .redirect(redirect_policy(scope, MAX_REDIRECTS))
}

/// The refusal for a redirect reqwest left unfollowed. reqwest (through
/// tower-http) follows only a `Location` it can read as an http URI, and
/// hands back the 3xx itself for one such as `file:///etc/passwd` without
/// asking the redirect policy; the caller reports that hop as the refusal
/// it is (§3.4 "bound by the same URL policy on every redirect hop").
pub fn unfollowed_redirect(scope: &Scope, response: &reqwest::Response) -> Option<Refusal> {
    if !response.status().is_redirection() {
        return None;
    }
    let location = response.headers().get(reqwest::header::LOCATION)?;
    let location = String::from_utf8_lossy(location.as_bytes());
    let next = match response.url().join(&location) {
        Ok(next) => next.to_string(),
        Err(e) => {
            return Some(Refusal::Unparseable {
                input: location.into_owned(),
                problem: e.into(),
            });
        }
    };
    scope.judge_url(&next).err()
}
