//! web::search held to the address policy (§3.4): the search request goes
//! through the same policy as any fetch, so a provider on loopback or a
//! private network is refused until the own-network declaration lifts it.
//! The simulator listens on loopback, which the policy refuses by default.

use std::sync::Arc;

use collegium_proto::toolset::v1::tool_result::Outcome;
use collegium_web_scope::{Resolver, Scope, ScopeSettings};
use collegium_worker_browser::search::{self, SearchError, SearchSettings};
use search_sim::{Config, Scripted, SimHit};
use serde_json::json;

fn scope(own_network_browsable: bool) -> Arc<Scope> {
    Arc::new(
        Scope::new(
            ScopeSettings {
                own_network_browsable,
                closed_hosts: Vec::new(),
            },
            Vec::new(),
        )
        .expect("a scope"),
    )
}

fn scoped_client(scope: &Arc<Scope>) -> reqwest::Client {
    collegium_web_scope::client_builder(
        scope.clone(),
        Resolver::from_system().expect("the system resolver"),
    )
    .build()
    .expect("a client")
}

fn searxng_at(base_url: &str) -> serde_json::Value {
    json!({"search": {"provider": "searxng", "base_url": base_url}})
}

async fn simulator() -> search_sim::Running {
    let running = search_sim::start("127.0.0.1:0".parse().expect("address"), Config::default())
        .await
        .expect("the simulator");
    running.sim.script(
        "rust",
        vec![Scripted::Results {
            hits: vec![SimHit::new(
                "The Rust Book",
                "https://doc.rust-lang.org/book/",
                "Learn Rust.",
            )],
        }],
    );
    running
}

#[tokio::test]
async fn s3_4_a_provider_at_a_loopback_address_is_refused_naming_the_address() {
    let running = simulator().await;
    let scope = scope(false);
    let called = search::call_in_scope(
        &scoped_client(&scope),
        &scope,
        &searxng_at(&running.url),
        r#"{"query": "rust"}"#,
    )
    .await;
    let Outcome::Failure(failure) = called.outcome else {
        panic!("expected a failure, got {:?}", called.outcome);
    };
    assert!(
        failure
            .message
            .starts_with("the address policy refused SearXNG's address: 127.0.0.1"),
        "{}",
        failure.message
    );
    assert_eq!(called.summary, "\"rust\": address refused");
    assert!(
        running.sim.requests().is_empty(),
        "nothing reached the provider"
    );
}

#[tokio::test]
async fn s3_4_a_refusal_inside_the_scoped_client_is_the_reason_not_a_failed_connection() {
    let running = simulator().await;
    let scope = scope(false);
    // `localhost` is judged by the scoped client's resolver, not beforehand.
    let settings = SearchSettings::from_settings_json(&searxng_at(&format!(
        "http://localhost:{}",
        running.addr.port()
    )))
    .expect("settings")
    .expect("a provider");
    let error = search::search(&scoped_client(&scope), &settings, "rust", 5)
        .await
        .expect_err("refused");
    assert!(matches!(error, SearchError::OutOfScope { .. }), "{error}");
    assert!(error.ends_turn());
    assert!(
        running.sim.requests().is_empty(),
        "nothing reached the provider"
    );
}

#[tokio::test]
async fn s3_4_the_own_network_declaration_lets_a_self_hosted_searxng_answer() {
    let running = simulator().await;
    let scope = scope(true);
    let called = search::call_in_scope(
        &scoped_client(&scope),
        &scope,
        &searxng_at(&running.url),
        r#"{"query": "rust"}"#,
    )
    .await;
    let Outcome::Success(success) = called.outcome else {
        panic!("expected a success, got {:?}", called.outcome);
    };
    assert!(
        success
            .text
            .contains("1. The Rust Book\n   https://doc.rust-lang.org/book/")
    );
    assert_eq!(running.sim.requests().len(), 1);
}
