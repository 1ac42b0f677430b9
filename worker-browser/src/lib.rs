//! The browser worker (ARCHITECTURE §4): `web::*` — browser sessions, one
//! plain fetch, search — with every request the worker makes, or lets
//! Chromium make, held to the deployment's address policy (§3.4).

pub mod call;
pub mod fetch;
pub mod page_actions;
pub mod proxy;
pub mod result;
pub mod search;
pub mod search_tool;
pub mod service;
pub mod session;
pub mod snapshot;
