//! The browser worker (ARCHITECTURE §4): `web::*` — browser sessions, one
//! plain fetch, search — with every request the worker makes, or lets
//! Chromium make, held to the deployment's address policy (§3.4).

pub mod session;
pub mod snapshot;
