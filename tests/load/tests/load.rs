//! The load test (issue 21). CI runs one minute of the issue's load; the
//! ten-minute run whose figures `docs/load.md` records is
//! `COLLEGIUM_LOAD_MINUTES=10 cargo test --release -p load -- --nocapture`
//! after `cargo build --release --workspace --bins`.

#[tokio::test(flavor = "multi_thread")]
async fn issue_21_the_daemon_answers_every_addressed_post_under_load() {
    let minutes = std::env::var("COLLEGIUM_LOAD_MINUTES")
        .ok()
        .map(|m| {
            m.parse()
                .expect("COLLEGIUM_LOAD_MINUTES is a whole number of minutes")
        })
        .unwrap_or(1);
    let mut profile = load::Profile::issue(minutes);
    profile.context_budget_tokens = std::env::var("COLLEGIUM_LOAD_CONTEXT_BUDGET")
        .ok()
        .map(|t| t.parse().expect("COLLEGIUM_LOAD_CONTEXT_BUDGET is a number of tokens"));
    let report = load::run(&profile).await;
    println!("{report}");
    let failures = report.failures();
    assert!(failures.is_empty(), "{report}");
}
