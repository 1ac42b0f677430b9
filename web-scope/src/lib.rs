//! The address policy both web routes judge every request by (§3.4 "The one
//! compensating control is scope"): `web::fetch`'s HTTP client and the egress
//! proxy Chromium goes through. Only http(s) URLs on the public internet are
//! opened, unless the deployment declared its own network browsable; hosts
//! the deployment closed stay closed either way.
//!
//! A URL is judged by [`Scope::judge_url`] (scheme, closed host, a literal
//! address); a name is resolved once by [`Scope::resolve`], every answer
//! judged, and only those answers are connected to.

mod http_client;
mod own_addresses;
mod refusal;
mod resolver;
mod rules;
mod scope;
mod settings;

pub use http_client::{
    MAX_REDIRECTS, ScopedResolve, client_builder, redirect_policy, unfollowed_redirect,
};
pub use own_addresses::{OwnAddressesError, own_addresses};
pub use refusal::{Refusal, ResolutionProblem, UrlProblem};
pub use resolver::{Lookup, Resolver, ResolverSetupError};
/// The bare classifier, for the fuzz harness's property "nothing forbidden is
/// ever judged global" (fuzz/harness); callers judge through [`Scope`].
#[doc(hidden)]
pub use rules::classify;
pub use rules::{AddressRule, Embedding, Forbidden};
pub use scope::{Scope, Target, TargetHost};
pub use settings::{ClosedHost, ScopeSettings, SettingsError};
