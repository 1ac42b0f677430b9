//! The load test (issue 21). CI runs one minute of the issue's load; the
//! ten-minute run whose figures `docs/load.md` records is
//! `COLLEGIUM_LOAD_MINUTES=10 cargo test -p load -- --nocapture` after
//! `cargo build --workspace --bins`.

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
    // `default` runs under the deployment's default budget, whose windows
    // grow for the whole run (docs/load.md).
    match std::env::var("COLLEGIUM_LOAD_CONTEXT_BUDGET").as_deref() {
        Ok("default") => profile.context_budget_tokens = None,
        Ok(tokens) => {
            profile.context_budget_tokens = Some(
                tokens
                    .parse()
                    .expect("COLLEGIUM_LOAD_CONTEXT_BUDGET is a number of tokens or `default`"),
            )
        }
        Err(_) => {}
    }
    let report = load::run(&profile).await;
    println!("{report}");
    let failures = report.failures();
    assert!(failures.is_empty(), "{report}");
}
