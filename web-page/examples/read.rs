//! Reads an HTML file as web::fetch would and prints the result: `cargo run --example read -- FILE URL [STATUS]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let body = std::fs::read(&args[1]).expect("the file reads");
    let url = url::Url::parse(&args[2]).expect("the URL parses");
    let status = args.get(3).map_or(200, |s| s.parse().expect("a status"));
    let response = collegium_web_page::Response {
        requested: &url,
        final_url: &url,
        status,
        content_type: Some("text/html; charset=utf-8"),
        headers: &[],
        body: &body,
        retried: None,
    };
    let fetched = collegium_web_page::classify(&response, &collegium_web_page::Reading::default());
    println!("{}", fetched.render(&|_: &str| true));
}
