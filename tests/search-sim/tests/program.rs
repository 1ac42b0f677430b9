//! The simulator as a program, scripted and read over its control routes,
//! as a test in another process (the e2e suite) drives it.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

struct Program {
    url: String,
    _child: tokio::process::Child,
}

async fn start(args: &[&str]) -> Program {
    let mut child = Command::new(env!("CARGO_BIN_EXE_search-sim"))
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn search-sim");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    BufReader::new(stdout)
        .read_line(&mut line)
        .await
        .expect("the listening line");
    let url = line
        .trim()
        .strip_prefix("search-sim listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Program { url, _child: child }
}

#[tokio::test]
async fn s3_4_scripted_over_http_it_answers_in_brave_s_shape_and_records_the_request() {
    let program = start(&["--brave-key", "k-1"]).await;
    let http = reqwest::Client::new();
    let scripted = http
        .post(format!("{}/_sim/script", program.url))
        .json(&json!({"query": "rust", "answers": [
            {"kind": "results", "hits": [
                {"title": "The Rust Book", "url": "https://doc.rust-lang.org/book/", "snippet": "Learn Rust's ownership."}
            ]}
        ]}))
        .send()
        .await
        .expect("script");
    assert_eq!(scripted.status(), 204);

    let answer = http
        .get(format!("{}/res/v1/web/search?q=rust&count=3", program.url))
        .header("X-Subscription-Token", "k-1")
        .send()
        .await
        .expect("search");
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.expect("json");
    assert_eq!(body["type"], "search");
    assert_eq!(body["query"]["original"], "rust");
    let result = &body["web"]["results"][0];
    assert_eq!(result["url"], "https://doc.rust-lang.org/book/");
    assert_eq!(
        result["description"],
        "Learn <strong>Rust</strong>&#x27;s ownership."
    );
    assert_eq!(result["meta_url"]["hostname"], "doc.rust-lang.org");

    let refused = http
        .get(format!("{}/res/v1/web/search?q=rust", program.url))
        .header("X-Subscription-Token", "wrong")
        .send()
        .await
        .expect("search");
    assert_eq!(refused.status(), 401);
    let body: Value = refused.json().await.expect("json");
    assert_eq!(body["error"]["code"], "SUBSCRIPTION_TOKEN_INVALID");

    let requests: Value = http
        .get(format!("{}/_sim/requests", program.url))
        .send()
        .await
        .expect("requests")
        .json()
        .await
        .expect("json");
    let requests = requests.as_array().expect("a list");
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0]["wire"], "brave");
    assert_eq!(
        requests[0]["params"],
        json!([["q", "rust"], ["count", "3"]])
    );
}

#[tokio::test]
async fn s3_4_searxng_answers_json_until_its_config_disables_it() {
    let program = start(&[]).await;
    let http = reqwest::Client::new();
    let search = || {
        http.get(format!("{}/search?q=anything&format=json", program.url))
            .send()
    };
    let answer = search().await.expect("search");
    assert_eq!(answer.status(), 200);
    let body: Value = answer.json().await.expect("json");
    assert_eq!(body["query"], "anything");
    assert_eq!(body["results"], json!([]));
    assert!(body["unresponsive_engines"].is_array());

    let config: Value = http
        .get(format!("{}/_sim/config", program.url))
        .send()
        .await
        .expect("config")
        .json()
        .await
        .expect("json");
    let mut config = config;
    config["searxng_json"] = json!(false);
    let set = http
        .put(format!("{}/_sim/config", program.url))
        .json(&config)
        .send()
        .await
        .expect("set config");
    assert_eq!(set.status(), 204);
    assert_eq!(search().await.expect("search").status(), 403);

    let cleared = http
        .delete(format!("{}/_sim/requests", program.url))
        .send()
        .await
        .expect("clear");
    assert_eq!(cleared.status(), 204);
    let requests: Value = http
        .get(format!("{}/_sim/requests", program.url))
        .send()
        .await
        .expect("requests")
        .json()
        .await
        .expect("json");
    assert_eq!(requests, json!([]));
}
