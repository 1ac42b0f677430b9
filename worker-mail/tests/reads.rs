//! The mail reads against a real Dovecot (§3.13, issue 18 "bad input"):
//! listed and opened through the worker's socket with signed grants, on
//! mail as it comes (plain, HTML only, with attachments, broken MIME, an
//! unknown charset, a 50 MB attachment, a header bomb).

mod support;

use collegium_proto::toolset::v1::tool_result::Outcome;
use serde_json::json;
use support::{Options, Rig, ids, plain, text};

fn html_only() -> Vec<u8> {
    b"From: Ana <ana@outside.test>\r\nTo: mira@mail.test\r\nSubject: Newsletter\r\nMessage-ID: <html-1@outside.test>\r\n\
      Content-Type: text/html; charset=utf-8\r\n\r\n<html><head><style>p{color:red}</style></head><body>\
      <script>steal()</script><p>The <b>tide</b> turns at noon.</p></body></html>\r\n"
        .to_vec()
}

fn with_attachment(size: usize) -> Vec<u8> {
    let mut message = b"From: Ben <ben@outside.test>\r\nTo: mira@mail.test\r\nSubject: Charts\r\n\
        Message-ID: <charts-1@outside.test>\r\nMIME-Version: 1.0\r\n\
        Content-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\n\
        The charts are attached.\r\n--b1\r\nContent-Type: application/pdf; name=\"charts.pdf\"\r\n\
        Content-Disposition: attachment; filename=\"charts.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n"
        .to_vec();
    // Base64 of `size` zero bytes, in lines of 76.
    let encoded = "A".repeat(size.div_ceil(3) * 4);
    for line in encoded.as_bytes().chunks(76) {
        message.extend_from_slice(line);
        message.extend_from_slice(b"\r\n");
    }
    message.extend_from_slice(b"--b1--\r\n");
    message
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_list_and_open_show_mail_as_it_comes() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(&plain(
        "Ana <ana@outside.test>",
        "Tide tables",
        "tides-1@outside.test",
        "High water is at 06:12 on Monday.",
    ));
    rig.seed(&html_only());
    rig.seed(&with_attachment(3000));
    rig.seed(
        b"From: Cy <cy@outside.test>\r\nTo: mira@mail.test\r\nSubject: Broken\r\nMessage-ID: <broken-1@outside.test>\r\n\
          Content-Type: multipart/mixed; boundary=\"zz\"\r\n\r\nThere are no parts here at all.\r\n",
    );
    rig.seed(
        b"From: Di <di@outside.test>\r\nTo: mira@mail.test\r\nSubject: Charset\r\nMessage-ID: <charset-1@outside.test>\r\n\
          Content-Type: text/plain; charset=x-klingon\r\n\r\nqapla\r\n",
    );
    let bomb: String = (0..3000)
        .map(|i| format!("X-Filler-{i}: {}\r\n", "y".repeat(40)))
        .collect();
    rig.seed(
        format!(
            "From: Ed <ed@outside.test>\r\nTo: mira@mail.test\r\nSubject: {}\r\nMessage-ID: <bomb-1@outside.test>\r\n{bomb}\r\nBody after the bomb.\r\n",
            "s".repeat(20_000)
        )
        .as_bytes(),
    );

    let listed = rig.invoke("list", json!({})).await;
    let listing = text(&listed).to_string();
    assert!(listing.contains("holds 6 messages"), "{listing}");
    let ids = ids(&listing);
    assert_eq!(ids.len(), 6, "{listing}");
    // Newest first: the tide tables, seeded first, come last.
    assert!(listing.rfind("subject: Tide tables") > listing.find("subject: Charset"));
    assert!(listing.contains("subject: Tide tables"), "{listing}");
    assert!(
        listing.contains("preview: High water is at 06:12 on Monday."),
        "{listing}"
    );
    assert!(listing.contains("attachments: yes"), "{listing}");
    let open = |id: &str| rig.invoke("open", json!({"message": id}));

    // The oldest is the plain message: whole body, no attachments stated.
    let tides = open(&ids[5]).await;
    let tides = text(&tides);
    assert!(tides.contains("From: Ana <ana@outside.test>"), "{tides}");
    assert!(tides.contains("Attachments: none."), "{tides}");
    assert!(
        tides.contains("\n\nHigh water is at 06:12 on Monday."),
        "{tides}"
    );

    // HTML only: read as text, scripts and styles gone.
    let html = open(&ids[4]).await;
    let html = text(&html);
    assert!(html.contains("tide"), "{html}");
    assert!(!html.contains("steal()"), "{html}");
    assert!(!html.contains("color:red"), "{html}");

    // Attachments described by name, type and size, never carried.
    let charts = open(&ids[3]).await;
    let charts = text(&charts);
    assert!(
        charts.contains("- charts.pdf (application/pdf, 3000 bytes)"),
        "{charts}"
    );
    assert!(!charts.contains("AAAA"), "{charts}");

    // Broken MIME and an unknown charset: read, and said.
    let broken = open(&ids[2]).await;
    assert!(
        text(&broken).contains("Could not be read:"),
        "{}",
        text(&broken)
    );
    let charset = open(&ids[1]).await;
    let charset = text(&charset);
    assert!(
        charset.contains("qapla") && charset.contains("x-klingon"),
        "{charset}"
    );

    // A header bomb: the subject cut and the cut said, the body whole.
    let bomb = open(&ids[0]).await;
    let bomb = text(&bomb);
    assert!(
        bomb.contains("The Subject header is 20000 characters long"),
        "{bomb}"
    );
    assert!(bomb.contains("header fields"), "{bomb}");
    assert!(bomb.contains("Body after the bomb."), "{bomb}");
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_50_mb_attachment_is_described_not_carried() {
    let rig = Rig::start(Options::default()).await;
    // 50 MiB, rounded up to whole base64 groups.
    let size = (50 * 1024 * 1024_usize).div_ceil(3) * 3;
    rig.seed(&with_attachment(size));
    let listing = rig.invoke("list", json!({"count": 5})).await;
    let listing = text(&listing).to_string();
    let id = ids(&listing).remove(0);
    let opened = rig.invoke("open", json!({"message": id})).await;
    let opened = text(&opened);
    assert!(
        opened.contains(&format!("- charts.pdf (application/pdf, {size} bytes)")),
        "{}",
        &opened[..opened.len().min(2000)]
    );
    assert!(
        opened.len() < 10_000,
        "the attachment's content was carried"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_imap_syntax_in_a_search_phrase_is_searched_as_text() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(&plain(
        "ana@outside.test",
        "Tides",
        "t-1@outside.test",
        "nothing special",
    ));
    rig.seed(&plain(
        "ben@outside.test",
        "Odd",
        "t-2@outside.test",
        "the string \") OR ALL (\" appears here",
    ));
    let hostile = rig
        .invoke("search", json!({"phrase": "\") OR ALL ("}))
        .await;
    let found = text(&hostile);
    assert!(found.starts_with("1 messages have"), "{found}");
    assert!(found.contains("subject: Odd"), "{found}");
    assert!(!found.contains("subject: Tides"), "{found}");
    let by_sender = rig.invoke("search", json!({"phrase": "ana@outside"})).await;
    assert!(text(&by_sender).contains("subject: Tides"));
    let none = rig
        .invoke("search", json!({"phrase": "zebra crossing"}))
        .await;
    assert!(text(&none).starts_with("No message"));
}

#[tokio::test(flavor = "multi_thread")]
async fn s3_13_a_conversation_states_its_count_and_stale_ids_are_refused() {
    let rig = Rig::start(Options::default()).await;
    rig.seed(&plain(
        "ana@outside.test",
        "Plan",
        "p-1@outside.test",
        "first",
    ));
    rig.seed(
        b"From: ben@outside.test\r\nTo: mira@mail.test\r\nSubject: Re: Plan\r\nMessage-ID: <p-2@outside.test>\r\n\
          In-Reply-To: <p-1@outside.test>\r\nReferences: <p-1@outside.test>\r\n\r\nsecond\r\n",
    );
    rig.seed(&plain(
        "cy@outside.test",
        "Unrelated",
        "u-1@outside.test",
        "other",
    ));
    rig.seed(
        b"From: ana@outside.test\r\nTo: mira@mail.test\r\nSubject: Re: Plan\r\nMessage-ID: <p-3@outside.test>\r\n\
          In-Reply-To: <p-2@outside.test>\r\nReferences: <p-1@outside.test> <p-2@outside.test>\r\n\r\nthird\r\n",
    );
    let listing = rig.invoke("list", json!({})).await;
    let ids = ids(text(&listing));
    // The newest, the third of the plan.
    let gathered = rig.invoke("conversation", json!({"message": ids[0]})).await;
    let gathered = text(&gathered);
    assert!(
        gathered.starts_with("This conversation holds 3 messages"),
        "{gathered}"
    );
    assert!(!gathered.contains("Unrelated"), "{gathered}");
    let from_middle = rig.invoke("conversation", json!({"message": ids[2]})).await;
    assert!(text(&from_middle).starts_with("This conversation holds 3 messages"));

    let (validity, uid) = ids[0].split_once('.').expect("an id");
    let stale = format!("{}.{uid}", validity.parse::<u32>().expect("number") + 1);
    let refused = rig.invoke("open", json!({"message": stale})).await;
    assert!(
        matches!(&refused.outcome, Some(Outcome::Refusal(r)) if r.message.contains("list or search again")),
        "{refused:?}"
    );
    let content = rig
        .invoke(
            "open",
            json!({"message": ids[0], "attachment": "charts.pdf"}),
        )
        .await;
    assert!(
        matches!(&content.outcome, Some(Outcome::Refusal(r)) if r.message.contains("never return their content")),
        "{content:?}"
    );
    let unknown = rig.invoke("list", json!({"folder": "Sent"})).await;
    assert!(
        matches!(unknown.outcome, Some(Outcome::InvalidArguments(_))),
        "{unknown:?}"
    );
}
