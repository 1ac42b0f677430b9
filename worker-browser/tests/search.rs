//! web::search against the provider simulator over real HTTP on loopback
//! (§3.4): both wire formats, ranking, the key sent and nothing else,
//! throttling as a result, refused keys, silence and malformed answers as
//! failures that end the turn.

use std::time::Duration;

use collegium_proto::toolset::v1::tool_result::Outcome;
use collegium_worker_browser::search::{
    self, Hit, Provider, SearchError, SearchSettings, SettingsError,
};
use search_sim::{Config, Running, Scripted, SimHit};
use serde_json::json;

const BRAVE_KEY: &str = "brave-test-key-81c2";
const SEARXNG_KEY: &str = "searxng-test-key-5d0e";

async fn sim(config: Config) -> Running {
    search_sim::start("127.0.0.1:0".parse().expect("address"), config)
        .await
        .expect("start the simulator")
}

fn brave_config() -> Config {
    Config {
        brave_key: Some(BRAVE_KEY.into()),
        ..Config::default()
    }
}

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client")
}

fn settings(value: serde_json::Value) -> SearchSettings {
    let mut settings = SearchSettings::from_settings_json(&json!({ "search": value }))
        .expect("valid settings")
        .expect("a provider");
    // The hang test waits this long; every other answer comes at once.
    settings.timeout = Duration::from_secs(2);
    settings
}

fn brave(running: &Running, key: &str) -> SearchSettings {
    settings(json!({
        "provider": "brave",
        "api_key": {"value": key},
        "base_url": running.brave_endpoint(),
    }))
}

fn searxng(running: &Running) -> SearchSettings {
    settings(json!({"provider": "searxng", "base_url": running.url}))
}

fn three_hits() -> Vec<SimHit> {
    vec![
        SimHit::new(
            "Asynchronous Programming in Rust",
            "https://rust-lang.github.io/async-book/",
            "Learn async Rust: futures, tasks and executors.",
        ),
        SimHit::new(
            "Tokio's tutorial",
            "https://tokio.rs/tokio/tutorial",
            "Tokio is an async runtime for the Rust programming language & more.",
        ),
        SimHit::new(
            "async/await - Rust",
            "https://doc.rust-lang.org/std/keyword.async.html",
            "Returns a Future instead of blocking the current thread.",
        ),
    ]
}

fn plain(hits: &[SimHit]) -> Vec<Hit> {
    hits.iter()
        .map(|h| Hit::new(&h.title, &h.url, &h.snippet))
        .collect()
}

fn failure_text(error: &SearchError) -> String {
    assert!(error.ends_turn(), "{error} should end the turn");
    match error.outcome() {
        Outcome::Failure(failure) => failure.message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn refusal_text(error: &SearchError) -> String {
    assert!(
        !error.ends_turn(),
        "{error} should be a result the model reads"
    );
    match error.outcome() {
        Outcome::Refusal(refusal) => refusal.message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn s3_4_brave_returns_its_ranking_as_plain_text_with_only_the_key_sent() {
    let running = sim(brave_config()).await;
    running
        .sim
        .script("rust async", vec![Scripted::Results { hits: three_hits() }]);
    let settings = brave(&running, BRAVE_KEY);

    let hits = search::search(&client(), &settings, "rust async", 5)
        .await
        .expect("hits");
    // Brave's `<strong>` and HTML escapes are gone; the order is Brave's.
    assert_eq!(hits, plain(&three_hits()));

    let requests = running.sim.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/res/v1/web/search");
    assert_eq!(
        request.params,
        vec![
            ("q".into(), "rust async".into()),
            ("count".into(), "5".into())
        ]
    );
    assert_eq!(request.header("x-subscription-token"), Some(BRAVE_KEY));
    assert_eq!(request.header("accept"), Some("application/json"));
    let mut names = request.header_names();
    names.sort_unstable();
    assert_eq!(names, ["accept", "host", "x-subscription-token"]);

    let text = search::render(Provider::Brave, "rust async", &hits);
    assert!(text.starts_with("Brave Search: 3 results for \"rust async\", best first."));
    assert!(text.contains(
        "\n2. Tokio's tutorial\n   https://tokio.rs/tokio/tutorial\n   Tokio is an async runtime for the Rust programming language & more.\n"
    ));
    assert!(
        !text.contains("<strong>") && !text.contains("&#x27;"),
        "{text}"
    );
}

#[tokio::test]
async fn s3_4_searxng_keeps_the_first_hits_of_its_page_and_sends_no_key_when_none_is_set() {
    let running = sim(Config::default()).await;
    let mut hits = three_hits();
    hits.extend(three_hits());
    running.sim.script("rust", vec![Scripted::Results { hits }]);

    let found = search::search(&client(), &searxng(&running), "rust", 2)
        .await
        .expect("hits");
    assert_eq!(found, plain(&three_hits()[..2]));

    let request = &running.sim.requests()[0];
    assert_eq!(request.path, "/search");
    assert_eq!(
        request.params,
        vec![
            ("q".into(), "rust".into()),
            ("format".into(), "json".into())
        ]
    );
    let mut names = request.header_names();
    names.sort_unstable();
    assert_eq!(names, ["accept", "host"]);
}

#[tokio::test]
async fn s3_4_a_searxng_key_travels_as_a_bearer_token_and_a_missing_one_is_refused() {
    let running = sim(Config {
        searxng_key: Some(SEARXNG_KEY.into()),
        ..Config::default()
    })
    .await;
    running
        .sim
        .script("q", vec![Scripted::Results { hits: three_hits() }]);
    // An instance mounted beneath a path is searched beneath it.
    let keyed = settings(json!({
        "provider": "searxng",
        "base_url": format!("{}/searx/", running.url),
        "api_key": {"value": SEARXNG_KEY},
    }));
    let hits = search::search(&client(), &keyed, "q", 10)
        .await
        .expect("hits");
    assert_eq!(hits.len(), 3);
    let request = &running.sim.requests()[0];
    assert_eq!(request.path, "/searx/search");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {SEARXNG_KEY}").as_str())
    );

    let error = search::search(&client(), &searxng(&running), "q", 10)
        .await
        .expect_err("no key");
    assert!(matches!(error, SearchError::CredentialsRefused { status, .. } if status == 401));
    let text = failure_text(&error);
    assert!(
        text.starts_with("SearXNG refused the configured API key (401 Unauthorized)"),
        "{text}"
    );
}

#[tokio::test]
async fn s3_4_a_key_in_a_file_is_read_by_the_worker_when_it_searches() {
    let running = sim(brave_config()).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("brave.key");
    std::fs::write(&path, format!("{BRAVE_KEY}\n")).expect("write the key");
    let settings = settings(json!({
        "provider": "brave",
        "api_key": {"file": path},
        "base_url": running.brave_endpoint(),
    }));
    search::search(&client(), &settings, "anything", 3)
        .await
        .expect("searched");
    assert_eq!(
        running.sim.requests()[0].header("x-subscription-token"),
        Some(BRAVE_KEY)
    );

    std::fs::remove_file(&path).expect("remove the key");
    let error = SearchSettings::from_settings_json(&json!({"search": {
        "provider": "brave", "api_key": {"file": path}
    }}))
    .expect_err("the key is gone");
    assert!(matches!(error, SettingsError::Key(_)));
    assert!(matches!(error.outcome(), Outcome::Failure(_)));
}

#[tokio::test]
async fn s3_4_no_hits_are_said_plainly_on_both_wires() {
    let running = sim(brave_config()).await;
    let none = search::search(&client(), &brave(&running, BRAVE_KEY), "xyzzy plugh", 10)
        .await
        .expect("an answer");
    assert!(none.is_empty());
    let success = match search::outcome(Provider::Brave, "xyzzy plugh", &Ok(none)) {
        Outcome::Success(success) => success,
        other => panic!("expected a success, got {other:?}"),
    };
    assert_eq!(
        success.text,
        "Brave Search found no results for \"xyzzy plugh\"."
    );
    assert_eq!(
        success.replay_line.as_deref(),
        Some("[searched Brave Search for \"xyzzy plugh\": 0 results]")
    );

    let none = search::search(&client(), &searxng(&running), "xyzzy plugh", 10)
        .await
        .expect("an answer");
    assert_eq!(
        search::render(Provider::Searxng, "xyzzy plugh", &none),
        "SearXNG found no results for \"xyzzy plugh\"."
    );
}

#[tokio::test]
async fn s3_4_brave_throttling_is_a_result_naming_the_wait_of_the_exhausted_limit() {
    let running = sim(brave_config()).await;
    running.sim.script(
        "busy",
        vec![
            Scripted::Throttle {
                remaining: Some("0, 1000".into()),
                reset: Some("1, 1419704".into()),
                retry_after: None,
            },
            Scripted::Throttle {
                remaining: Some("1, 0".into()),
                reset: Some("1, 1419704".into()),
                retry_after: None,
            },
            Scripted::Results { hits: three_hits() },
        ],
    );
    let settings = brave(&running, BRAVE_KEY);

    let per_second = search::search(&client(), &settings, "busy", 10)
        .await
        .expect_err("throttled");
    assert!(matches!(
        per_second,
        SearchError::Throttled { retry_after: Some(after), .. } if after == Duration::from_secs(1)
    ));
    assert_eq!(
        refusal_text(&per_second),
        "web::search was refused: Brave Search is throttling this deployment's searches \
         (429 Too Many Requests); searching may resume in 1 second."
    );

    let per_month = search::search(&client(), &settings, "busy", 10)
        .await
        .expect_err("throttled");
    assert!(refusal_text(&per_month).ends_with("searching may resume in about 17 days."));

    // Throttling passes; the next search answers.
    let hits = search::search(&client(), &settings, "busy", 10)
        .await
        .expect("hits");
    assert_eq!(hits.len(), 3);
}

#[tokio::test]
async fn s3_4_searxng_throttling_reads_retry_after_or_says_it_gave_none() {
    let running = sim(Config::default()).await;
    running.sim.script(
        "busy",
        vec![
            Scripted::Throttle {
                remaining: None,
                reset: None,
                retry_after: Some("30".into()),
            },
            Scripted::Throttle {
                remaining: None,
                reset: None,
                retry_after: None,
            },
        ],
    );
    let settings = searxng(&running);
    let with = search::search(&client(), &settings, "busy", 10)
        .await
        .expect_err("throttled");
    assert!(refusal_text(&with).ends_with("searching may resume in 30 seconds."));
    let without = search::search(&client(), &settings, "busy", 10)
        .await
        .expect_err("throttled");
    assert!(
        refusal_text(&without).ends_with("it did not say when searching may resume."),
        "{without}"
    );
}

#[tokio::test]
async fn s3_4_a_refused_brave_key_ends_the_turn_in_brave_s_words_without_the_key() {
    let running = sim(brave_config()).await;
    let wrong = "wrong-key-4411";
    let error = search::search(&client(), &brave(&running, wrong), "q", 10)
        .await
        .expect_err("refused");
    let text = failure_text(&error);
    assert_eq!(
        text,
        "Brave Search refused the configured API key (401 Unauthorized: The provided \
         subscription token is invalid.); the operator must correct the key in this \
         agent's web settings"
    );
    assert!(!text.contains(wrong) && !format!("{error:?}").contains(wrong));
}

#[tokio::test]
async fn s3_4_searxng_with_json_disabled_is_named_as_its_configuration() {
    let running = sim(Config {
        searxng_json: false,
        ..Config::default()
    })
    .await;
    let error = search::search(&client(), &searxng(&running), "q", 10)
        .await
        .expect_err("forbidden");
    assert_eq!(
        failure_text(&error),
        "SearXNG refused the search (403 Forbidden): its JSON API is not enabled (the \
         instance's settings.yml must list `json` under `search.formats`)"
    );
}

#[tokio::test]
async fn s3_4_a_query_brave_refuses_is_a_result_the_model_can_rephrase() {
    let running = sim(brave_config()).await;
    let long = vec!["word"; 60].join(" ");
    let error = search::search(&client(), &brave(&running, BRAVE_KEY), &long, 10)
        .await
        .expect_err("refused");
    assert!(matches!(error, SearchError::QueryRejected { .. }));
    let text = refusal_text(&error);
    assert!(
        text.starts_with("web::search was refused: Brave Search refused this query (422 Unprocessable Entity: Unable to validate"),
        "{text}"
    );
}

#[tokio::test]
async fn s3_4_a_provider_that_never_answers_ends_the_turn() {
    let running = sim(brave_config()).await;
    running.sim.script("slow", vec![Scripted::Hang]);
    let error = search::search(&client(), &brave(&running, BRAVE_KEY), "slow", 10)
        .await
        .expect_err("no answer");
    assert_eq!(
        failure_text(&error),
        "Brave Search did not answer: no answer within 2 s"
    );
    assert_eq!(running.sim.requests().len(), 1);
}

#[tokio::test]
async fn s3_4_a_provider_that_refuses_connections_ends_the_turn() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("address");
    drop(listener);
    let settings = settings(json!({"provider": "searxng", "base_url": format!("http://{addr}")}));
    let error = search::search(&client(), &settings, "q", 10)
        .await
        .expect_err("refused");
    let text = failure_text(&error);
    assert!(
        text.starts_with("SearXNG did not answer: the connection failed"),
        "{text}"
    );
    assert!(!text.contains(&addr.to_string()), "{text}");
}

#[tokio::test]
async fn s3_4_a_server_error_is_a_provider_not_answering() {
    let running = sim(brave_config()).await;
    running
        .sim
        .script("q", vec![Scripted::Status { status: 503 }]);
    let error = search::search(&client(), &searxng(&running), "q", 10)
        .await
        .expect_err("503");
    assert_eq!(
        failure_text(&error),
        "SearXNG did not answer: it answered 503 Service Unavailable"
    );
    let error = search::search(&client(), &brave(&running, BRAVE_KEY), "q", 10)
        .await
        .expect_err("503");
    assert!(matches!(error, SearchError::Unanswered { .. }));
}

#[tokio::test]
async fn s3_4_a_wrong_base_url_is_named_as_one() {
    let running = sim(Config::default()).await;
    let settings = settings(json!({
        "provider": "searxng",
        "base_url": format!("{}/nowhere", running.url),
    }));
    let error = search::search(&client(), &settings, "q", 10)
        .await
        .expect_err("404");
    assert_eq!(
        failure_text(&error),
        "SearXNG answered 404 Not Found, which is not a search answer; check the \
         provider's `base_url` in this agent's web settings"
    );
}

#[tokio::test]
async fn s3_4_a_malformed_answer_ends_the_turn_naming_the_provider() {
    let running = sim(brave_config()).await;
    running.sim.script(
        "html",
        vec![Scripted::Malformed {
            body: "<html><body>Just a moment...</body></html>".into(),
            content_type: Some("text/html".into()),
        }],
    );
    running.sim.script(
        "shape",
        vec![Scripted::Malformed {
            body: r#"{"type": "search", "web": {"results": "none"}}"#.into(),
            content_type: None,
        }],
    );
    running.sim.script(
        "nourl",
        vec![Scripted::Malformed {
            body: r#"{"results": [{"title": "t"}]}"#.into(),
            content_type: None,
        }],
    );
    let brave = brave(&running, BRAVE_KEY);
    let html = search::search(&client(), &brave, "html", 10)
        .await
        .expect_err("malformed");
    assert!(
        failure_text(&html)
            .starts_with("Brave Search's answer is not a search response: it is not JSON"),
        "{html}"
    );
    let shape = search::search(&client(), &brave, "shape", 10)
        .await
        .expect_err("malformed");
    assert_eq!(
        failure_text(&shape),
        "Brave Search's answer is not a search response: `web.results` is not a list"
    );
    let nourl = search::search(&client(), &searxng(&running), "nourl", 10)
        .await
        .expect_err("malformed");
    assert_eq!(
        failure_text(&nourl),
        "SearXNG's answer is not a search response: result 1 has no `url`"
    );
}

#[tokio::test]
async fn s3_4_a_call_goes_from_settings_and_arguments_to_its_outcome() {
    let running = sim(brave_config()).await;
    running
        .sim
        .script("rust async", vec![Scripted::Results { hits: three_hits() }]);
    let web = json!({"search": {
        "provider": "brave",
        "api_key": {"value": BRAVE_KEY},
        "base_url": running.brave_endpoint(),
    }});

    let called = search::call(&client(), &web, r#"{"query": "rust async", "count": 2}"#).await;
    let Outcome::Success(success) = called.outcome else {
        panic!("expected a success, got {:?}", called.outcome);
    };
    assert!(
        success
            .text
            .starts_with("Brave Search: 2 results for \"rust async\"")
    );
    assert_eq!(called.summary, "\"rust async\": 2 results");
    assert_eq!(running.sim.requests()[0].param("count"), Some("2"));

    let called = search::call(&client(), &web, r#"{"query": "q", "api_key": "mine"}"#).await;
    assert!(matches!(called.outcome, Outcome::InvalidArguments(_)));

    let called = search::call(&client(), &json!({}), r#"{"query": "q"}"#).await;
    assert!(matches!(called.outcome, Outcome::Failure(_)));

    let called = search::call(
        &client(),
        &json!({"search": {"provider": "searxng"}}),
        r#"{"query": "q"}"#,
    )
    .await;
    let Outcome::Failure(failure) = called.outcome else {
        panic!("expected a failure");
    };
    assert!(
        failure.message.contains("give no `base_url`"),
        "{}",
        failure.message
    );
    // Nothing reached a provider but the one search.
    assert_eq!(running.sim.requests().len(), 1);
}
