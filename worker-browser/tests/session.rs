//! Browser sessions against real Chromium and pages served on loopback
//! (§3.4 Browsing). Chromium runs with no proxy: the pages are this test's
//! own network. As root (as tests run), Chromium runs without its sandbox,
//! which the test asks for explicitly.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use std::collections::HashMap;

use axum::Router;
use axum::extract::Query;
use axum::http::{HeaderMap, header};
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use collegium_worker_browser::session::{Action, Outcome, Sessions, SessionsConfig, group_members};
use collegium_worker_browser::snapshot::CONTROLS_SHOWN;

async fn serve() -> SocketAddr {
    let app = Router::new()
        .route(
            "/cookie/set",
            get(|| async {
                (
                    [(header::SET_COOKIE, "turn=one; Path=/")],
                    Html("<p>cookie set</p>"),
                )
            }),
        )
        .route(
            "/cookie/show",
            get(|headers: HeaderMap| async move {
                let cookie = headers
                    .get(header::COOKIE)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("no cookie")
                    .to_string();
                Html(format!("<p>cookie: {cookie}</p>"))
            }),
        )
        .route("/controls", get(|| async { Html(controls_page()) }))
        .route(
            "/menu",
            get(|| async {
                Html(
                    r#"<style>.sub { display: none } .menu:hover .sub { display: block }</style>
                    <nav><div class="menu"><span role="button">Products</span>
                      <ul class="sub"><li><a href="/widgets">Widgets</a></li></ul></div></nav>
                    <p>Welcome to the shop.</p>"#,
                )
            }),
        )
        .route(
            "/widgets",
            get(|| async {
                Html(r#"<h1>Widgets</h1><p>All our widgets.</p><img src="/photos/red-widget.png" alt="A red widget">"#)
            }),
        )
        .route("/growing", get(|| async { Html(growing_page()) }))
        .route(
            "/webrtc",
            get(|Query(query): Query<HashMap<String, String>>| async move {
                let port = query.get("port").cloned().unwrap_or_default();
                Html(format!(
                    r#"<p id="state">gathering</p><script>
const peer = new RTCPeerConnection({{ iceServers: [{{ urls: 'stun:127.0.0.1:{port}' }}] }});
peer.createDataChannel('probe');
peer.createOffer().then((offer) => peer.setLocalDescription(offer));
</script>"#
                ))
            }),
        )
        .route(
            "/later",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(400)).await;
                "the answer the script waited for"
            }),
        )
        .route(
            "/script",
            get(|| async {
                Html(
                    r#"<button onclick="fetch('/later').then((r) => r.text()).then((t) => { document.getElementById('out').textContent = t; })">Ask</button><p id="out">nothing yet</p>"#,
                )
            }),
        )
        .route(
            "/check",
            get(|| async {
                (
                    axum::http::StatusCode::FORBIDDEN,
                    Html(r#"<p>Checking your browser…</p><script>setTimeout(() => location.replace('/cleared'), 300)</script>"#),
                )
            }),
        )
        .route(
            "/form",
            get(|| async {
                Html(
                    r#"<label>Name <input id="name" value="old" oninput="document.getElementById('echo').textContent = 'typed: ' + this.value"></label>
                    <p id="echo">typed: nothing</p><input type="checkbox" id="agree"><label for="agree">I agree</label>
                    <button disabled>Send</button>"#,
                )
            }),
        )
        .route(
            "/local",
            get(|| async {
                Html(r#"<p><a href="file:///etc/passwd">Local file</a> <a href="/to-file">Redirected</a></p>"#)
            }),
        )
        .route(
            "/to-file",
            get(|| async {
                (
                    axum::http::StatusCode::FOUND,
                    [(header::LOCATION, "file:///etc/passwd")],
                    "",
                )
            }),
        )
        .route("/cleared", get(|| async { Html("<p>the page behind the check</p>") }))
        .route(
            "/select",
            get(|| async {
                Html(
                    r#"<label for="c">Country</label>
                    <select id="c"><option value="fr">France</option><option value="de">Germany</option>
                    <option value="nz">New Zealand</option><option value="nc">New Caledonia</option></select>"#,
                )
            }),
        )
        .route(
            "/stale",
            get(|| async {
                Html(
                    r#"<button onclick="document.getElementById('target').remove()">Remove the target</button>
                    <button id="target">Target</button>"#,
                )
            }),
        )
        .route(
            "/popup",
            get(|| async {
                Html(r#"<button onclick="window.open('/opened')">Open a tab</button>"#)
            }),
        )
        .route("/opened", get(|| async { Html("<p>a tab nothing asked for</p>") }))
        .route(
            "/pdfs",
            get(|| async { Html(r#"<p><a href="/report.pdf">The report</a></p>"#) }),
        )
        .route(
            "/report.pdf",
            get(|| async {
                (
                    [(header::CONTENT_TYPE, "application/pdf")],
                    "%PDF-1.4\n%%EOF\n",
                )
                    .into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind loopback");
    let address = listener.local_addr().expect("local address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    address
}

fn growing_page() -> String {
    let mut page = String::from("<main id=\"feed\">");
    for i in 0..120 {
        page.push_str(&format!(
            "<p>Story {i}: a paragraph of the feed that the model has read already.</p>"
        ));
    }
    page.push_str(
        r#"</main><button onclick="const p = document.createElement('p'); p.textContent = 'Story 120: the first story the model has not read.'; document.getElementById('feed').append(p)">Load more</button>"#,
    );
    page
}

fn controls_page() -> String {
    let mut page = String::from("<h1>Settings</h1><form>");
    for i in 0..300 {
        page.push_str(&format!(
            "<label>Setting {i} <input name=\"s{i}\"></label><br>"
        ));
    }
    page.push_str("</form>");
    page
}

fn sessions(cap: usize) -> Sessions {
    let mut config = SessionsConfig::new(PathBuf::from("/usr/bin/chromium"), None, cap);
    // Tests run as root, where Chromium will not start with its sandbox.
    config.root_without_sandbox = true;
    config.settle_wait = Duration::from_secs(3);
    Sessions::new(config)
}

fn all(_: &str) -> bool {
    true
}

fn none(_: &str) -> bool {
    false
}

async fn go(s: &Sessions, turn: &str, url: String) -> String {
    match s.act(turn, Action::Navigate { url }, &all).await {
        Outcome::Page(text) => text,
        other => panic!("navigation did not show a page: {other:?}"),
    }
}

/// The ref a line of the result gives the element described by `marker`:
/// `[Widgets][e7]` inline, or `- [e7] link "Widgets"` among the controls.
fn ref_of(text: &str, marker: &str) -> String {
    if let Some(at) = text.find(&format!("[{marker}][")) {
        let rest = &text[at + marker.len() + 3..];
        return rest[..rest.find(']').expect("ref closed")].to_string();
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("- [") && l.contains(marker))
        .unwrap_or_else(|| panic!("no control {marker} in:\n{text}"));
    line[3..line.find(']').expect("ref closed")].to_string()
}

fn refused(outcome: Outcome) -> String {
    match outcome {
        Outcome::Refused(text) => text,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn page(outcome: Outcome) -> String {
    match outcome {
        Outcome::Page(text) => text,
        other => panic!("expected a page, got {other:?}"),
    }
}

#[tokio::test]
async fn s3_4_a_cookie_from_turn_one_is_absent_in_turn_two() {
    let site = serve().await;
    let s = sessions(2);
    go(&s, "one", format!("http://{site}/cookie/set")).await;
    let shown = go(&s, "one", format!("http://{site}/cookie/show")).await;
    assert!(shown.contains("cookie: turn=one"), "{shown}");
    assert!(s.end("one").await);
    let shown = go(&s, "two", format!("http://{site}/cookie/show")).await;
    assert!(shown.contains("cookie: no cookie"), "{shown}");
    s.shutdown().await;
}

fn renderers(pgid: u32) -> usize {
    group_members(pgid as i32)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains("--type=renderer"))
                .unwrap_or(false)
        })
        .count()
}

/// A page's WebRTC sends no UDP, as the proxy carries none: its STUN
/// request to a listener on loopback never arrives (§3.4 scope). The lab
/// runs the same row behind the proxy (`tests/e2e/tests/ssrf_page.rs`).
#[tokio::test]
async fn s3_4_a_page_s_webrtc_sends_no_udp() {
    let stun = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = stun.local_addr().expect("address").port();
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/webrtc?port={port}")).await;
    assert!(text.contains("gathering"), "{text}");
    // STUN sends at once and retries for seconds: one datagram fails this.
    let mut buffer = [0u8; 2048];
    let arrived = tokio::time::timeout(Duration::from_secs(3), stun.recv_from(&mut buffer)).await;
    assert!(
        arrived.is_err(),
        "a STUN datagram reached loopback: {arrived:?}"
    );
    assert!(s.end("t").await);
}

/// The inodes of the sockets `pid` holds open.
fn socket_inodes(pid: i32) -> Vec<String> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.filter_map(|fd| {
        let target = std::fs::read_link(fd.ok()?.path()).ok()?;
        let target = target.to_str()?;
        Some(
            target
                .strip_prefix("socket:[")?
                .strip_suffix(']')?
                .to_string(),
        )
    })
    .collect()
}

/// The inodes of every listening TCP socket in this network namespace,
/// with the port each listens on.
fn listening_tcp() -> Vec<(String, String)> {
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(table).ok())
        .flat_map(|table| {
            table
                .lines()
                .skip(1)
                .filter_map(|line| {
                    let fields: Vec<&str> = line.split_whitespace().collect();
                    // local address, state (0A is LISTEN), inode
                    (fields.len() > 9 && fields[3] == "0A")
                        .then(|| (fields[9].to_string(), fields[1].to_string()))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// No process of a live browser listens on any port: its DevTools is a
/// pipe, so no local process (an agent's command among them) can find it
/// and drive another turn's browser (§3.4 scope; §6.4).
#[tokio::test]
async fn s3_4_a_live_browser_listens_on_no_port() {
    let site = serve().await;
    let s = sessions(1);
    go(&s, "t", format!("http://{site}/widgets")).await;
    let pid = s.browser_pid("t").expect("a browser runs");
    let members = group_members(pid as i32);
    assert!(members.len() > 1, "the browser and its renderer run");
    let command_line = std::fs::read(format!("/proc/{pid}/cmdline")).expect("cmdline");
    let command_line = String::from_utf8_lossy(&command_line);
    assert!(command_line.contains("--remote-debugging-pipe"));
    assert!(!command_line.contains("--remote-debugging-port"));
    let held: Vec<String> = members.iter().flat_map(|m| socket_inodes(*m)).collect();
    let listening: Vec<(String, String)> = listening_tcp()
        .into_iter()
        .filter(|(inode, _)| held.contains(inode))
        .collect();
    assert!(listening.is_empty(), "the browser listens at {listening:?}");
    // And the session still answers: its DevTools is the pipe.
    let text = go(&s, "t", format!("http://{site}/menu")).await;
    assert!(text.contains("Welcome to the shop."), "{text}");
    assert!(s.end("t").await);
}

#[tokio::test]
async fn s3_4_no_chromium_process_is_left_after_the_turn_ends() {
    let site = serve().await;
    let s = sessions(2);
    go(&s, "t", format!("http://{site}/widgets")).await;
    let pid = s.browser_pid("t").expect("a browser runs");
    assert!(
        renderers(pid) > 0,
        "the page has a renderer in the browser's group"
    );
    assert!(s.end("t").await);
    assert!(group_members(pid as i32).is_empty());
    assert_eq!(s.live(), 0);
}

#[tokio::test]
async fn s3_4_a_killed_browser_ends_only_its_session_and_the_next_navigate_starts_afresh() {
    let site = serve().await;
    let s = sessions(2);
    let text = go(&s, "t", format!("http://{site}/stale")).await;
    go(&s, "other", format!("http://{site}/widgets")).await;
    let pid = s.browser_pid("t").expect("a browser runs");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill the browser");
    let target = ref_of(&text, "Target");
    let stopped = refused(s.act("t", Action::Click { reference: target }, &all).await);
    assert!(
        stopped.contains("stopped") && stopped.contains("web::navigate starts a fresh one"),
        "{stopped}"
    );
    assert!(
        group_members(pid as i32).is_empty(),
        "no renderer outlives its browser"
    );
    let other = page(
        s.act(
            "other",
            Action::Navigate {
                url: format!("http://{site}/menu"),
            },
            &all,
        )
        .await,
    );
    assert!(other.contains("Welcome to the shop."), "{other}");
    let again = go(&s, "t", format!("http://{site}/widgets")).await;
    assert!(again.contains("All our widgets."), "{again}");
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_page_of_300_controls_is_bounded_with_the_rest_after_the_page() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/controls")).await;
    let (before, after) = text.split_once("\nThe page:\n").expect("a page section");
    let listed = before.lines().filter(|l| l.starts_with("- [")).count();
    assert_eq!(listed, CONTROLS_SHOWN, "{before}");
    assert!(before.contains(&format!(
        "{} more controls are listed after the page.",
        300 - CONTROLS_SHOWN
    )));
    assert!(after.contains("More controls:"));
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_hover_submenu_is_hidden_until_hovered() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/menu")).await;
    assert!(text.contains("must be revealed"), "{text}");
    let widgets = ref_of(&text, "link \"Widgets\"");
    let hidden = refused(
        s.act(
            "t",
            Action::Click {
                reference: widgets.clone(),
            },
            &all,
        )
        .await,
    );
    assert!(
        hidden.contains("hidden") && hidden.contains("web::hover"),
        "{hidden}"
    );
    let products = ref_of(&text, "Products");
    let shown = page(
        s.act(
            "t",
            Action::Hover {
                reference: products,
            },
            &all,
        )
        .await,
    );
    assert!(shown.contains(&format!("[Widgets][{widgets}]")), "{shown}");
    let landed = page(s.act("t", Action::Click { reference: widgets }, &all).await);
    assert!(
        landed.contains("All our widgets.") && landed.contains("/widgets"),
        "{landed}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_select_takes_a_label_and_refuses_an_absent_option_naming_near_ones() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/select")).await;
    let country = ref_of(&text, "drop-down \"Country\"");
    assert!(
        text.contains("options: \"France\", \"Germany\", \"New Zealand\", \"New Caledonia\""),
        "{text}"
    );
    let chosen = page(
        s.act(
            "t",
            Action::Select {
                reference: country.clone(),
                option: "Germany".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        chosen.contains("drop-down \"Country\" = \"Germany\""),
        "{chosen}"
    );
    let absent = refused(
        s.act(
            "t",
            Action::Select {
                reference: country.clone(),
                option: "new".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        absent.contains("\"New Zealand\", \"New Caledonia\""),
        "{absent}"
    );
    let filled = refused(
        s.act(
            "t",
            Action::Fill {
                reference: country,
                text: "Germany".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        filled.contains("drop-down") && filled.contains("web::select"),
        "{filled}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_ref_no_longer_on_the_page_is_refused_with_the_page_as_it_is() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/stale")).await;
    let target = ref_of(&text, "Target");
    let remove = ref_of(&text, "Remove the target");
    let after = page(s.act("t", Action::Click { reference: remove }, &all).await);
    assert!(!after.contains("Target]"), "{after}");
    let stale = refused(
        s.act(
            "t",
            Action::Click {
                reference: target.clone(),
            },
            &all,
        )
        .await,
    );
    assert!(
        stale.contains(&format!("{target} is no longer on the page")),
        "{stale}"
    );
    assert!(
        stale.contains("Remove the target"),
        "the page as it now is: {stale}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_tab_the_page_opens_is_closed_and_reported() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/popup")).await;
    let open = ref_of(&text, "Open a tab");
    assert!(
        text.contains(&format!("- [{open}] button \"Open a tab\"")),
        "a button has one ref, inline and among the controls: {text}"
    );
    let after = page(s.act("t", Action::Click { reference: open }, &all).await);
    assert!(
        after.contains(&format!("opened a tab for itself at http://{site}/opened")),
        "{after}"
    );
    assert!(
        after.contains(&format!("Address: http://{site}/popup")),
        "{after}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_turn_past_the_live_cap_is_refused_not_queued() {
    let site = serve().await;
    let s = sessions(1);
    go(&s, "first", format!("http://{site}/widgets")).await;
    let url = format!("http://{site}/widgets");
    let held = refused(
        s.act("second", Action::Navigate { url: url.clone() }, &all)
            .await,
    );
    assert!(
        held.contains("frees only when the turn holding it ends"),
        "{held}"
    );
    assert!(held.contains("web::fetch needs none"), "{held}");
    let unheld = refused(
        s.act("second", Action::Navigate { url: url.clone() }, &none)
            .await,
    );
    assert!(!unheld.contains("web::fetch"), "{unheld}");
    s.end("first").await;
    page(s.act("second", Action::Navigate { url }, &all).await);
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_pdf_link_is_refused_naming_web_fetch() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/pdfs")).await;
    let link = ref_of(&text, "The report");
    let pdf = refused(s.act("t", Action::Click { reference: link }, &all).await);
    assert!(
        pdf.contains(&format!(
            "http://{site}/report.pdf is not a web page but a PDF"
        )) && pdf.contains("web::fetch"),
        "{pdf}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_bad_addresses_are_refused_before_a_browser_starts() {
    let s = sessions(1);
    let unparsed = refused(
        s.act(
            "t",
            Action::Navigate {
                url: "not a url".into(),
            },
            &all,
        )
        .await,
    );
    assert!(unparsed.contains("is not a URL"), "{unparsed}");
    let file = refused(
        s.act(
            "t",
            Action::Navigate {
                url: "file:///etc/passwd".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        file.contains("only http and https") && file.contains("file:"),
        "{file}"
    );
    let click = refused(
        s.act(
            "u",
            Action::Click {
                reference: "e1".into(),
            },
            &all,
        )
        .await,
    );
    assert!(click.contains("no page open"), "{click}");
    assert_eq!(s.live(), 0, "no refused address took a session");
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_sessions_report_their_sandbox() {
    let s = sessions(1);
    assert_eq!(s.sandboxed(), !nix::unistd::geteuid().is_root());
    // The worker's gRPC service awaits an action on any runtime thread.
    fn sendable<T: Send>(_: &T) {}
    let action = s.act(
        "t",
        Action::Click {
            reference: "e1".into(),
        },
        &all,
    );
    sendable(&action);
    refused(action.await);
}

#[tokio::test]
async fn s3_4_images_are_their_alt_text_alone() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/widgets")).await;
    assert!(text.contains("A red widget"), "{text}");
    assert!(!text.contains("red-widget.png"), "{text}");
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_growing_page_says_where_it_first_differs() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/growing")).await;
    let more = ref_of(&text, "Load more");
    let grown = page(s.act("t", Action::Click { reference: more }, &all).await);
    let marker = "first differs from the previous snapshot at character ";
    let at = grown
        .find(marker)
        .unwrap_or_else(|| panic!("no difference said: {grown}"));
    let digits: String = grown[at + marker.len()..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let offset: usize = digits.parse().expect("an offset");
    let from: String = grown.chars().skip(offset).collect();
    assert!(
        from.starts_with("Story 120: the first story"),
        "at {offset}: {from}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_an_action_waits_for_the_requests_its_script_started() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/script")).await;
    let ask = ref_of(&text, "Ask");
    let after = page(s.act("t", Action::Click { reference: ask }, &all).await);
    assert!(
        after.contains("the answer the script waited for"),
        "{after}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_the_status_is_the_settled_documents_not_the_first_served() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/check")).await;
    assert!(
        text.contains(&format!("Address: http://{site}/cleared")),
        "{text}"
    );
    assert!(text.contains("Status: 200"), "{text}");
    assert!(text.contains("the page behind the check"), "{text}");
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_load_the_proxy_refused_reports_the_proxys_refusal() {
    // A port nothing listens on: the load fails as a refused one would.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let mut config = SessionsConfig::new(PathBuf::from("/usr/bin/chromium"), None, 1);
    config.root_without_sandbox = true;
    config.settle_wait = Duration::from_secs(3);
    config.refusal_for = std::sync::Arc::new(move |url: &url::Url| {
        (url.port() == Some(address.port())).then(|| {
            format!(
                "{} is refused: loopback is this machine (test refusal)",
                url
            )
        })
    });
    let s = Sessions::new(config);
    let text = refused(
        s.act(
            "t",
            Action::Navigate {
                url: format!("http://{address}/private"),
            },
            &all,
        )
        .await,
    );
    assert!(
        text.contains(&format!("http://{address}/private is refused")),
        "{text}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_fill_types_into_a_field_as_input_and_refuses_a_checkbox() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/form")).await;
    let name = ref_of(&text, "text field \"Name\"");
    let filled = page(
        s.act(
            "t",
            Action::Fill {
                reference: name,
                text: "Ada Lovelace".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        filled.contains("text field \"Name\" = \"Ada Lovelace\""),
        "{filled}"
    );
    assert!(filled.contains("typed: Ada Lovelace"), "{filled}");
    let agree = ref_of(&text, "checkbox \"I agree\"");
    let refused_fill = refused(
        s.act(
            "t",
            Action::Fill {
                reference: agree.clone(),
                text: "yes".into(),
            },
            &all,
        )
        .await,
    );
    assert!(
        refused_fill.contains("takes no typed text"),
        "{refused_fill}"
    );
    let ticked = page(s.act("t", Action::Click { reference: agree }, &all).await);
    assert!(
        ticked.contains("checkbox \"I agree\" (checked)"),
        "{ticked}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_a_file_link_or_redirect_is_refused_for_its_scheme() {
    let site = serve().await;
    let s = sessions(1);
    let text = go(&s, "t", format!("http://{site}/local")).await;
    let local = ref_of(&text, "Local file");
    let direct = refused(s.act("t", Action::Click { reference: local }, &all).await);
    assert!(
        direct.contains("`file:///etc/passwd` was refused")
            && direct.contains("only http and https"),
        "{direct}"
    );
    let text = go(&s, "t", format!("http://{site}/local")).await;
    let redirected = ref_of(&text, "Redirected");
    let via = refused(
        s.act(
            "t",
            Action::Click {
                reference: redirected,
            },
            &all,
        )
        .await,
    );
    assert!(
        via.contains("redirected to an address the browser does not open") && !via.contains("ERR_"),
        "{via}"
    );
    s.shutdown().await;
}

#[tokio::test]
async fn s3_4_idle_sessions_and_a_stopping_worker_leave_no_browser() {
    let site = serve().await;
    let mut config = SessionsConfig::new(PathBuf::from("/usr/bin/chromium"), None, 2);
    config.root_without_sandbox = true;
    config.idle_timeout = Duration::from_millis(500);
    let idle = Sessions::new(config);
    go(&idle, "t", format!("http://{site}/widgets")).await;
    let pid = idle.browser_pid("t").expect("a browser runs");
    // The reaper's own pace: polled, not timed.
    for _ in 0..100 {
        if idle.live() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(idle.live(), 0, "an idle session is ended");
    // The reaper takes the slot first and kills its browser after: the
    // processes go a moment after the count drops.
    for _ in 0..100 {
        if group_members(pid as i32).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        group_members(pid as i32).is_empty(),
        "the idle session's browser is gone"
    );

    let s = sessions(2);
    go(&s, "a", format!("http://{site}/widgets")).await;
    go(&s, "b", format!("http://{site}/widgets")).await;
    let pids = [s.browser_pid("a"), s.browser_pid("b")];
    s.shutdown().await;
    for pid in pids {
        assert!(group_members(pid.expect("a browser ran") as i32).is_empty());
    }
    assert_eq!(s.live(), 0);
}

#[tokio::test]
async fn s3_4_a_browser_that_will_not_start_is_a_failure_that_takes_no_session() {
    let mut config = SessionsConfig::new(PathBuf::from("/nonexistent/chromium"), None, 1);
    config.root_without_sandbox = true;
    let s = Sessions::new(config);
    let outcome = s
        .act(
            "t",
            Action::Navigate {
                url: "http://example.test/".into(),
            },
            &all,
        )
        .await;
    let Outcome::Failed(text) = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert!(
        text.contains("The browser could not be started") && text.contains("/nonexistent/chromium"),
        "{text}"
    );
    assert_eq!(s.live(), 0);
}
