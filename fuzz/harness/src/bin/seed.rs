//! `cargo run -p collegium-fuzz-harness --bin seed`: writes each target's
//! seed inputs into `fuzz/corpus/<target>/seed-*`, from the tests' own
//! fixtures where that is mechanical (configurations, skills, pages, mail
//! bodies, recorded provider streams, test PDFs) and from the project's own
//! types otherwise (every declared tool schema, every framework tool's wire
//! declaration, each Mattermost shape). Inputs the fuzzer found are kept
//! beside them; `fuzz/cmin` then keeps the corpus small. `storage_query`'s
//! seeds are written by hand: they are conditions against the harness's own
//! collection schema, which no test's collection spells.

use std::path::{Path, PathBuf};

use collegium_control::tools::framework::declarations;
use collegium_control::workers::declarations::framework_wire;
use collegium_proto::toolset::v1 as toolset;
use collegium_worker_kit::audit::{AuditLog, Outcome, Record};
use prost::Message;
use serde_json::json;

#[path = "../../../../worker-pdf/tests/support/deflate.rs"]
#[allow(dead_code)]
mod deflate;
#[path = "../../../../worker-pdf/tests/support/pdfs.rs"]
#[allow(dead_code)]
mod pdfs;

const SEP: u8 = collegium_fuzz_harness::SEPARATOR;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Seeds {
    dir: PathBuf,
    written: usize,
}

impl Seeds {
    fn of(target: &str) -> Self {
        let dir = root().join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&dir).expect("create the corpus directory");
        Self { dir, written: 0 }
    }

    fn put(&mut self, name: &str, bytes: impl AsRef<[u8]>) {
        let name: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        std::fs::write(self.dir.join(format!("seed-{name}")), bytes).expect("write a seed");
        self.written += 1;
    }

    fn files(&mut self, dir: &str, ext: &str, wrap: impl Fn(Vec<u8>) -> Vec<u8>) {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .collect();
        paths.sort();
        for path in paths {
            let bytes = std::fs::read(&path).expect("read a fixture");
            let name = path
                .file_name()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            self.put(&name, wrap(bytes));
        }
    }
}

impl Drop for Seeds {
    fn drop(&mut self) {
        eprintln!("{}: {} seeds", self.dir.display(), self.written);
    }
}

fn joined(parts: &[&[u8]]) -> Vec<u8> {
    parts.join(&SEP)
}

fn proto() {
    let mut s = Seeds::of("proto");
    let mut tools = Vec::new();
    for toolset in declarations() {
        for tool in &toolset.tools {
            if let Some(wire) = framework_wire(&toolset.namespace, &tool.name) {
                s.put(
                    &format!("tool-{}-{}", toolset.namespace, tool.name),
                    wire.encode_to_vec(),
                );
                tools.push(wire);
            }
        }
    }
    let described = toolset::DescribeResponse {
        protocol_version: collegium_proto::PROTOCOL_VERSION,
        namespace: "fixture".into(),
        sandbox: Some(toolset::Sandbox {
            effective_uid: 1000,
            effective_gid: 1000,
            no_new_privileges: true,
            landlock_abi: Some(3),
            command_cgroups: true,
            namespaces: vec!["pid".into(), "ipc".into()],
            bounds: vec!["processes=cgroup".into(), "memory=cgroup".into()],
            ..Default::default()
        }),
        tools: tools.into_iter().take(4).collect(),
        ..Default::default()
    };
    s.put("describe-response", described.encode_to_vec());
    let result = toolset::ToolResult {
        summary: "fetched".into(),
        outcome: Some(toolset::tool_result::Outcome::Success(toolset::Success {
            text: "the page".into(),
            ..Default::default()
        })),
        ..Default::default()
    };
    s.put("tool-result", result.encode_to_vec());
    let event = toolset::InvokeEvent {
        event: Some(toolset::invoke_event::Event::Result(result)),
    };
    s.put("invoke-event", event.encode_to_vec());
    let call = toolset::Call {
        agent: "mira".into(),
        tool: "web::fetch".into(),
        arguments_json: br#"{"url":"https://example.org"}"#.to_vec(),
        ..Default::default()
    };
    s.put("call", call.encode_to_vec());
    let record = collegium_proto::storage::v1::Record {
        id: "r1".into(),
        collection: "notes".into(),
        data_json: r#"{"a":1}"#.into(),
        ..Default::default()
    };
    s.put("storage-record", record.encode_to_vec());
    let page = collegium_proto::pdf::v1::PdfTextEvent {
        event: Some(collegium_proto::pdf::v1::pdf_text_event::Event::Page(
            collegium_proto::pdf::v1::Page {
                number: 1,
                text: "Page one".into(),
            },
        )),
    };
    s.put("pdf-page", page.encode_to_vec());
    let arrival = collegium_proto::mail::v1::Arrival {
        from: "Ana <ana@x.test>".into(),
        subject: "Budget".into(),
        ..Default::default()
    };
    s.put("mail-arrival", arrival.encode_to_vec());
}

fn mattermost_wire() {
    use mattermost_wire::model::*;
    let mut s = Seeds::of("mattermost_wire");
    let post = Post {
        id: "p1".into(),
        channel_id: "c1".into(),
        user_id: "u1".into(),
        message: "@mira look at `this` @channel".into(),
        ..Default::default()
    };
    let post_json = serde_json::to_string(&post).expect("a post serialises");
    s.put("post", &post_json);
    let posted = json!({
        "event": "posted",
        "data": {"post": post_json, "channel_type": "O", "mentions": "[\"u2\"]"},
        "broadcast": {"channel_id": "c1", "omit_users": null, "user_id": "", "team_id": ""},
        "seq": 3
    });
    s.put("ws-posted", posted.to_string());
    s.put(
        "ws-reaction",
        json!({"event": "reaction_added", "data": {"reaction": "{\"user_id\":\"u\",\"post_id\":\"p\",\"emoji_name\":\"+1\"}"}, "seq": 4}).to_string(),
    );
    s.put(
        "ws-hello",
        r#"{"event":"hello","data":{"server_version":"10.5.0"},"seq":0}"#,
    );
    s.put("ws-response", r#"{"status":"OK","seq_reply":1}"#);
    s.put(
        "ws-error",
        r#"{"status":"FAIL","seq_reply":2,"error":{"id":"api.web_socket_router.bad_seq.app_error","message":"bad","status_code":400}}"#,
    );
    macro_rules! shapes {
        ($($t:ident),+) => { $( s.put(stringify!($t), serde_json::to_vec(&$t::default()).expect("serialises")); )+ };
    }
    shapes!(
        PostList,
        User,
        Channel,
        ChannelMember,
        Team,
        Bot,
        FileInfo,
        Command,
        CommandResponse,
        SlackAttachment,
        Dialog,
        SubmitDialogRequest,
        PostActionIntegrationRequest
    );
}

fn mention() {
    let mut s = Seeds::of("mention");
    for (name, text) in [
        ("plain", "@mira can you look?"),
        ("punctuated", "Thanks @mira. And @ops-bot, @ana.lyst: done."),
        (
            "code",
            "`@mira` is code, ```\n@ops-bot\n``` too, but @x_1 is not",
        ),
        ("escaped", "\\@mira and &#64;mira and @mi\\ra"),
        (
            "link",
            "mail mira@example.org or see <https://x.test/@mira> [@mira](https://x)",
        ),
        ("emoji", ":smile:@mira:wave: @mira_ @mira- @MIRA"),
        ("wide", "@channel @all @here @mira"),
        (
            "nested",
            "> quoted @mira\n\n- list @ops-bot\n\n# heading @ana.lyst",
        ),
    ] {
        s.put(name, text);
    }
    s.put("attachment", joined(&[b"hi @mira", b"pretext @ops-bot"]));
}

/// The recorded streams of control/tests/recorded_streams.rs, as written
/// there: each `const NAME: &str = ...;` string.
fn sse() {
    let mut s = Seeds::of("sse");
    let source = std::fs::read_to_string(root().join("control/tests/recorded_streams.rs"))
        .expect("the recorded streams");
    let mut rest = source.as_str();
    while let Some(at) = rest.find("const ") {
        rest = &rest[at + 6..];
        let Some((name, after)) = rest.split_once(": &str = ") else {
            continue;
        };
        let stream = if let Some(raw) = after.strip_prefix("r#\"") {
            raw.split_once("\"#;").map(|(body, _)| body.to_string())
        } else if let Some(plain) = after.strip_prefix('"') {
            plain
                .split_once("\";\n")
                .map(|(body, _)| body.replace("\\\"", "\"").replace("\\\\", "\\"))
        } else {
            None
        };
        if let Some(stream) = stream {
            for (n, cut) in [0u8, 5, 16].into_iter().enumerate() {
                let mut bytes = vec![cut];
                bytes.extend_from_slice(stream.as_bytes());
                s.put(&format!("{}-{n}", name.to_lowercase()), bytes);
            }
        }
    }
    s.put(
        "leak-tags",
        b"\x00<tool_call>{\"name\":\"web__fetch\",\"arguments\":{}}</tool_call>",
    );
    s.put(
        "leak-bare",
        b"\x01{\"name\": \"memory__write\", \"arguments\": {\"key\": 1}}",
    );
    s.put(
        "leak-deepseek",
        "\x02<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>web__fetch",
    );
}

fn tool_arguments() {
    let mut s = Seeds::of("tool_arguments");
    let count = declarations()
        .iter()
        .flat_map(|t| &t.tools)
        .filter(|t| t.parameters.is_some())
        .count();
    for pick in 0..count.min(256) {
        let mut bytes = vec![pick as u8];
        bytes.extend_from_slice(br#"{"url":"https://example.org","key":"a","text":"b","count":3}"#);
        s.put(&format!("tool-{pick}"), bytes);
    }
    s.put("not-json", b"\x00{\"url\":");
    s.put("extra", b"\x01{\"unknown\": [1, 2, {\"x\": null}]}");
}

fn config() {
    let mut s = Seeds::of("config");
    s.files("tests/config/valid", "toml", |b| b);
    s.files("tests/config/invalid", "toml", |b| b);
}

fn mime(body: &[u8], html: bool) -> Vec<u8> {
    let kind = if html { "text/html" } else { "text/plain" };
    let mut out = format!(
        "From: Ana Lima <ana@harbour.test>\r\nTo: mira@mail.test\r\nSubject: Re: Ferry\r\n\
         Message-ID: <m1@harbour.test>\r\nDate: Tue, 3 Mar 2026 10:00:00 +0000\r\n\
         MIME-Version: 1.0\r\nContent-Type: {kind}; charset=utf-8\r\n\r\n"
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn mail() {
    let mut s = Seeds::of("mail");
    s.files("mail-thread/tests/golden", "txt", |b| {
        let mut out = vec![0];
        out.extend(mime(&b, false));
        out
    });
    s.files("mail-thread/tests/golden", "html", |b| {
        let mut out = vec![2];
        out.extend(mime(&b, true));
        out
    });
    s.put(
        "multipart",
        b"\x00From: Ben <ben@outside.test>\r\nSubject: Charts\r\nMIME-Version: 1.0\r\n\
          Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\n\
          The charts @channel.\r\n--b1\r\nContent-Type: application/pdf; name=\"c.pdf\"\r\n\
          Content-Disposition: attachment; filename=\"c.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n\
          AAAA\r\n--b1--\r\n",
    );
    s.put(
        "unknown-charset",
        b"\x01From: a@x.test\r\nSubject: hi\r\nContent-Type: text/plain; charset=x-klingon\r\n\r\nqapla\r\n",
    );
}

fn web_page() {
    let mut s = Seeds::of("web_page");
    s.files("web-page/tests/pages", "html", |b| {
        joined(&[&b, b"0f6a6b6c4f6a776e626669"])
    });
    s.put(
        "cfemail",
        joined(&[
            b"<p><a href=\"/cdn-cgi/l/email-protection#2a4b444b6a4f524b475a464f04495e\">[email&#160;protected]</a> \
              <span class=\"__cf_email__\" data-cfemail=\"2a4b444b6a4f524b475a464f04495e\">x</span></p>",
            b"2a4b444b6a4f524b475a464f04495e",
        ]),
    );
}

fn web_scope() {
    let mut s = Seeds::of("web_scope");
    for (name, url) in [
        ("public", "https://example.org/a?b#c"),
        ("loopback", "http://127.0.0.1:8080/"),
        ("hex-loopback", "http://0x7f.1/"),
        ("mapped", "http://[::ffff:10.0.0.1]/"),
        ("nat64", "http://[64:ff9b::a9fe:a9fe]/"),
        ("teredo", "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/"),
        ("sixtofour", "http://[2002:c0a8:0101::1]/"),
        ("metadata", "http://169.254.169.254/latest/meta-data/"),
        ("localhost", "http://api.localhost./"),
        ("closed", "https://www.CLOSED.example./"),
        ("idn", "https://xn--bcher-kva.example/"),
        ("authority", "example.org:443"),
        ("authority-v6", "[fd00:ec2::254]:443"),
        ("scheme", "file:///etc/passwd"),
    ] {
        s.put(name, url);
    }
}

fn audit() {
    let mut s = Seeds::of("audit");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("audit.log");
    let mut log = AuditLog::open(&path, "browser").expect("a log opens");
    for (n, outcome) in [Outcome::Success, Outcome::GrantRefused, Outcome::Failure]
        .into_iter()
        .enumerate()
    {
        log.append(Record {
            agent: "mira".into(),
            turn: format!("t{n}"),
            call: format!("c{n}"),
            tool: "web::fetch".into(),
            arguments_sha256: collegium_worker_kit::audit::digest(b"{}"),
            decision: String::new(),
            outcome,
            detail: String::new(),
            duration_ms: 12,
        })
        .expect("an append");
    }
    drop(log);
    let written = std::fs::read(&path).expect("the log");
    for selector in [0u8, 1, 2] {
        let mut bytes = vec![selector];
        bytes.extend_from_slice(&written);
        s.put(&format!("log-{selector}"), bytes);
    }
    s.put(
        "records",
        joined(&[
            b"\x05shell",
            b"mira",
            b"call-1",
            b"shell::run",
            b"{}",
            b"exit 1",
        ]),
    );
}

fn skill() {
    let mut s = Seeds::of("skill");
    for dir in [
        "control/skills/understanding-collegium",
        "control/skills/handing-work-to-a-peer",
        "tests/config/resources/skills/sourced-brief",
    ] {
        let text = std::fs::read(root().join(dir).join("SKILL.md")).expect("a SKILL.md");
        s.put(dir.rsplit('/').next().unwrap_or(dir), text);
    }
    s.put(
        "index",
        "---\ndescription: Write a brief.\ntools: [web::fetch]\n---\n# Steps\n\n1. Read.\n\n## References\n\n- `style.md` — house style\n- sources.md: which sources count\n\n## After\n\nDone.\n",
    );
}

fn references() {
    let mut s = Seeds::of("references");
    for (name, text) in [
        ("memory", "mab12cd"),
        ("memory-bracketed", "[MAB12CD34]"),
        ("bare", "ab12"),
        ("unit", "U-12"),
        ("unit-lower", " u-3 "),
        ("trigger", "[T-7]"),
        ("number", "42"),
    ] {
        s.put(name, text);
    }
}

fn callbacks() {
    let mut s = Seeds::of("callbacks");
    let form = b"token=the-command-token&user_id=u1&user_name=ana&channel_id=c1&text=units+mine\
        &trigger_id=t1&response_url=https%3A%2F%2Fchat.example.org%2Fhooks%2Fcommands%2Fabcdefghijklmnopqrstuvwxyz";
    let click = br#"{"user_id":"u1","channel_id":"c1","post_id":"p1","trigger_id":"t","context":{"action":"approve","approval":"d-1","signature":"00ff","choice":1}}"#;
    let dialog = br#"{"callback_id":"d-1","state":"ab","user_id":"u1","channel_id":"c1","cancelled":false,"submission":{"reason":"not now"}}"#;
    s.put("all", joined(&[form, click, dialog]));
    s.put(
        "help",
        joined(&[
            b"text=help&response_url=https://evil.test/hooks/commands/abcdefghijklmnopqrstuvwxyz",
            b"{}",
            b"{}",
        ]),
    );
}

fn webhook() {
    let mut s = Seeds::of("webhook");
    for (n, body) in [
        r#"{"agent":"mira","channel":"ops","sender":"ci","subject":"Build 7","reference":"b7","body":"failed"}"#,
        r#"{"agent":"mira","channel":"ops","sender":"@all","subject":"ping @here","body":"> @mira\n@channel"}"#,
        r#"{"agent":"mira","channel":"ops","sender":"ci"}"#,
        r#"{"agent":7,"channel":"ops","sender":"ci","subject":"x"}"#,
    ]
    .into_iter()
    .enumerate()
    {
        let mut bytes = vec![n as u8];
        bytes.extend_from_slice(body.as_bytes());
        s.put(&format!("body-{n}"), bytes);
    }
}

fn proxy() {
    let mut s = Seeds::of("proxy");
    for (n, (declared, request)) in [
        (0u8, "GET http://example.org/a?b HTTP/1.1\r\nHost: example.org\r\nProxy-Connection: keep-alive\r\n\r\n"),
        (0, "CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n"),
        (0, "GET http://127.0.0.1:8080/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET http://[::ffff:10.0.0.1]/ HTTP/1.1\r\n\r\n"),
        (1, "CONNECT localhost:8443 HTTP/1.1\r\n\r\n"),
        (0, "CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n"),
        (1, "POST http://169.254.169.254/latest HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"),
        (0, "GET /not-a-proxy-request HTTP/1.1\r\nHost: x\r\n\r\n"),
        (0, "GET https://closed.example/ HTTP/1.1\r\n\r\n"),
        (0, "GET http://example.org/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut bytes = vec![declared];
        bytes.extend_from_slice(request.as_bytes());
        s.put(&format!("request-{n}"), bytes);
    }
}

fn pdf() {
    let mut s = Seeds::of("pdf");
    s.put(
        "text-pages",
        pdfs::text_pages(&["Page one", "", "Page three"]),
    );
    s.put(
        "compressed",
        pdfs::compressed_text_pages(&["Compressed page"]),
    );
    s.put("scan", pdfs::scan(1));
    s.put(
        "not-a-pdf",
        b"%PDF-1.7\n1 0 obj << >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n",
    );
}

fn main() {
    proto();
    mattermost_wire();
    mention();
    sse();
    tool_arguments();
    config();
    mail();
    web_page();
    web_scope();
    audit();
    skill();
    references();
    callbacks();
    webhook();
    proxy();
    pdf();
}
