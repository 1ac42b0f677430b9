//! `collegium audit show` over a log the real writer wrote and a store the
//! real `Store` methods filled, as the daemon fills it (issue 21 item 7).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use collegium_worker_kit::audit::{AuditLog, Outcome, Record, digest};
use serde_json::{Value, json};

use super::filter::{Filter, parse_outcome, parse_time};
use super::show::{Show, ShowError, show};
use crate::store::decisions::NewDecision;
use crate::store::worker_calls::{AuditAnchor, CallEnd, NewWorkerCall};
use crate::store::{ChannelKind, NewTurn, ObservedChannel, Store, TraceKind, TurnCause, TurnEvent};

struct Call {
    agent: &'static str,
    tool: &'static str,
    /// What the model wrote, as the trace keeps it.
    arguments: Value,
    /// What the worker hashed; the same unless the test breaks it.
    hashed: Value,
    /// `(decision id, who approved)` for a gated call.
    approved_by: Option<&'static str>,
    outcome: Outcome,
    detail: &'static str,
}

/// Three calls on worker `mail`, each recorded as the daemon records it:
/// turn, approval (prompted, decided), trace result, dispatch and anchor.
fn calls() -> Vec<Call> {
    vec![
        Call {
            agent: "theo",
            tool: "mail::send",
            arguments: json!({"to": "ana@example.com", "subject": "Q3"}),
            hashed: json!({"to": "ana@example.com", "subject": "Q3"}),
            approved_by: Some("ana"),
            outcome: Outcome::Success,
            detail: "",
        },
        Call {
            agent: "theo",
            tool: "mail::read",
            arguments: json!({"folder": "INBOX"}),
            hashed: json!({"folder": "INBOX"}),
            approved_by: None,
            outcome: Outcome::Success,
            detail: "",
        },
        Call {
            agent: "mira",
            tool: "mail::send",
            arguments: json!({"to": "bo@example.com"}),
            // The store's arguments are not what the worker was given.
            hashed: json!({"to": "eve@example.com"}),
            approved_by: Some("bo"),
            outcome: Outcome::Failure,
            detail: "the server said 550",
        },
    ]
}

struct Fixture {
    _dir: tempfile::TempDir,
    log: PathBuf,
    store: PathBuf,
    dir: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let log_path = dir.path().join("mail.audit.jsonl");
    let store_path = dir.path().join("collegium.db");
    let store = Store::open(&store_path).expect("store");
    store
        .record_channel(&ObservedChannel {
            id: "chan-1".into(),
            name: "town-square".into(),
            display_name: "Town Square".into(),
            kind: ChannelKind::Open,
        })
        .expect("channel");
    let mut log = AuditLog::open(&log_path, "mail").expect("log");
    for (n, call) in calls().into_iter().enumerate() {
        let n = n + 1;
        let turn = format!("turn-{n}");
        let worker_call = format!("{turn}/call_{n}");
        store
            .open_turn(&NewTurn {
                id: turn.clone(),
                agent: call.agent.into(),
                channel_id: "chan-1".into(),
                boot_id: "boot".into(),
                started_at: 1_800_000_000_000,
                cause: TurnCause::Post,
                answers_post_id: None,
                depth: 0,
                chain_root: turn.clone(),
                chain_length: 1,
                model: "m".into(),
            })
            .expect("turn");
        let decision = call.approved_by.map(|by| {
            let id = format!("decision-{n}");
            store
                .open_decision(&NewDecision {
                    id: id.clone(),
                    turn_id: turn.clone(),
                    call_id: format!("call_{n}"),
                    agent: call.agent.into(),
                    channel_id: "chan-1".into(),
                    kind: "approval".into(),
                    tool: Some(call.tool.into()),
                    payload: call.arguments.to_string(),
                    choices: Vec::new(),
                    requested_at: 1_800_000_000_100,
                })
                .expect("decision");
            store
                .set_prompt_post(&id, &format!("prompt-{n}"))
                .expect("prompt");
            assert!(
                store
                    .decide(&id, "approved", by, None, 1_800_000_060_000)
                    .expect("decide")
            );
            id
        });
        let hashed = digest(&serde_json::to_vec(&call.hashed).expect("json"));
        store
            .record_dispatch(&NewWorkerCall {
                call_id: worker_call.clone(),
                turn_id: turn.clone(),
                agent: call.agent.into(),
                worker: "mail".into(),
                tool: call.tool.into(),
                arguments_sha256: hashed.clone(),
                decision_id: decision.clone(),
                retryable: false,
                dispatched_at: 1_800_000_061_000,
            })
            .expect("dispatched");
        let anchor = log
            .append(Record {
                agent: call.agent.into(),
                turn: turn.clone(),
                call: worker_call.clone(),
                tool: call.tool.into(),
                arguments_sha256: hashed,
                decision: decision.unwrap_or_default(),
                outcome: call.outcome,
                detail: call.detail.into(),
                duration_ms: 12,
            })
            .expect("append");
        store
            .record_call_end(
                &worker_call,
                CallEnd::Success,
                Some(&AuditAnchor {
                    seq: anchor.seq,
                    hash: anchor.hash,
                }),
                None,
                1_800_000_061_012,
            )
            .expect("anchor");
        store
            .append_event(&TurnEvent {
                turn_id: turn.clone(),
                seq: 0,
                at: 1_800_000_061_013,
                kind: TraceKind::Result,
                call_id: Some(format!("call_{n}")),
                tool: Some(call.tool.into()),
                arguments: Some(call.arguments.to_string()),
                content: Some("done".into()),
                detail: None,
            })
            .expect("trace");
    }
    Fixture {
        log: log_path,
        store: store_path,
        dir: dir.path().to_path_buf(),
        _dir: dir,
    }
}

fn request(f: &Fixture, filter: Filter, json: bool) -> Show {
    Show {
        file: f.log.clone(),
        anchored: Some((f.store.clone(), "mail".into())),
        config: None,
        filter,
        json,
    }
}

/// `(stdout, the notes)` of a run that succeeded.
fn run(request: &Show) -> (String, String) {
    let (mut out, mut note) = (Vec::new(), Vec::new());
    show(request, &mut out, &mut note).expect("show");
    (
        String::from_utf8(out).expect("utf-8"),
        String::from_utf8(note).expect("utf-8"),
    )
}

fn lines_of(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with('#')).collect()
}

#[test]
fn i21_7_each_call_says_who_approved_it_when_where_with_a_link() {
    let f = fixture();
    let (out, note) = run(&request(&f, Filter::default(), false));
    assert!(note.is_empty(), "{note}");
    let mut said = out.lines();
    let header = said.next().expect("header");
    assert!(header.contains("3 lines from worker 'mail'"), "{out}");
    assert!(header.contains("line 3 is the one"), "{out}");
    assert!(
        said.next().expect("timezone").contains("Times are in UTC"),
        "{out}"
    );
    let lines = lines_of(&out);
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines[0].starts_with("#1  "), "{out}");
    assert!(
        lines[0].contains("  theo  mail::send  success  12 ms  "),
        "{out}"
    );
    assert!(
        lines[0].contains(r#"{"subject":"Q3","to":"ana@example.com"}"#),
        "the arguments from the trace: {out}"
    );
    assert!(
        lines[0].contains(
            "approved by @ana at 2027-01-15 08:01:00.000 UTC in ~town-square /_redirect/pl/prompt-1"
        ),
        "{out}"
    );
    assert!(
        lines[1].contains("mail::read") && lines[1].ends_with("ungated"),
        "{out}"
    );
    assert!(
        lines[2].contains("do not hash to the log's arguments_sha256"),
        "a trace that disagrees with the log is said: {out}"
    );
    assert!(lines[2].ends_with("— the server said 550"), "{out}");
    assert_eq!(out.lines().last(), Some("3 of 3 lines shown."), "{out}");
}

#[test]
fn i21_7_each_filter_narrows_and_the_count_names_it() {
    let f = fixture();
    let shown = |filter: Filter| {
        let (out, _) = run(&request(&f, filter, false));
        (
            lines_of(&out).len(),
            out.lines().last().unwrap_or("").to_string(),
        )
    };
    let (n, closing) = shown(Filter {
        agent: Some("mira".into()),
        ..Filter::default()
    });
    assert_eq!(
        (n, closing.as_str()),
        (1, "1 of 3 lines shown (--agent mira).")
    );
    let (n, _) = shown(Filter {
        tool: Some("mail::read".into()),
        ..Filter::default()
    });
    assert_eq!(n, 1);
    let (n, _) = shown(Filter {
        tool: Some("mail".into()),
        ..Filter::default()
    });
    assert_eq!(n, 3, "a namespace takes all its tools");
    let (n, _) = shown(Filter {
        outcome: Some(parse_outcome("failure").expect("outcome")),
        ..Filter::default()
    });
    assert_eq!(n, 1);
    // The writer stamps lines with the time they were written: today.
    let today = chrono::Utc::now().date_naive();
    let day = |d: chrono::NaiveDate| parse_time(&d.to_string()).expect("date");
    let (n, _) = shown(Filter {
        since: Some(day(today)),
        until: Some(day(today)),
        ..Filter::default()
    });
    assert_eq!(n, 3);
    let (n, closing) = shown(Filter {
        since: Some(day(today.succ_opt().expect("tomorrow"))),
        ..Filter::default()
    });
    assert_eq!(n, 0, "{closing}");
    assert!(
        closing.starts_with("0 of 3 lines shown (--since "),
        "{closing}"
    );
    let (n, _) = shown(Filter {
        until: Some(day(today.pred_opt().expect("yesterday"))),
        ..Filter::default()
    });
    assert_eq!(n, 0);
}

#[test]
fn i21_7_a_tampered_line_is_refused_before_anything_is_shown() {
    let f = fixture();
    let text = std::fs::read_to_string(&f.log).expect("read");
    std::fs::write(&f.log, text.replacen("\"theo\"", "\"mira\"", 1)).expect("tamper");
    let (mut out, mut note) = (Vec::new(), Vec::new());
    let refused =
        show(&request(&f, Filter::default(), false), &mut out, &mut note).expect_err("refused");
    assert!(matches!(refused, ShowError::Verify(_)), "{refused}");
    let said = refused.to_string();
    assert!(said.contains("line 1: "), "{said}");
    assert!(said.contains("Nothing is shown"), "{said}");
    assert!(
        out.is_empty() && note.is_empty(),
        "nothing before the refusal"
    );

    // Cut off the end: the store's anchor is past the log's last line.
    let f = fixture();
    let text = std::fs::read_to_string(&f.log).expect("read");
    let kept: Vec<&str> = text.lines().take(2).collect();
    std::fs::write(&f.log, format!("{}\n", kept.join("\n"))).expect("truncate");
    let (mut out, mut note) = (Vec::new(), Vec::new());
    let refused =
        show(&request(&f, Filter::default(), true), &mut out, &mut note).expect_err("refused");
    assert!(refused.to_string().contains("line 3: missing"), "{refused}");
    assert!(out.is_empty() && note.is_empty());
}

/// The documented `--json` fields (docs/audit.md), exactly.
const FIELDS: &[&str] = &[
    "seq",
    "time",
    "worker",
    "agent",
    "turn",
    "call",
    "tool",
    "outcome",
    "duration_ms",
    "detail",
    "arguments_sha256",
    "arguments_lookup",
    "arguments",
    "arguments_match",
    "decision",
    "approval_lookup",
    "approval",
];

const APPROVAL_FIELDS: &[&str] = &[
    "kind",
    "outcome",
    "decided_by",
    "requested_at",
    "decided_at",
    "channel_id",
    "channel_name",
    "channel_display_name",
    "prompt_post_id",
    "permalink",
];

fn keys(value: &Value) -> BTreeSet<String> {
    value
        .as_object()
        .expect("an object")
        .keys()
        .cloned()
        .collect()
}

#[test]
fn i21_7_json_is_one_object_a_line_with_the_documented_fields_and_only_them() {
    let f = fixture();
    let (out, note) = run(&request(&f, Filter::default(), true));
    assert!(
        note.contains("3 lines from worker 'mail'"),
        "the report goes aside: {note}"
    );
    assert!(note.contains("3 of 3 lines shown."), "{note}");
    let objects: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(objects.len(), 3, "{out}");
    let fields: BTreeSet<String> = FIELDS.iter().map(ToString::to_string).collect();
    let approval_fields: BTreeSet<String> =
        APPROVAL_FIELDS.iter().map(ToString::to_string).collect();
    for object in &objects {
        assert_eq!(keys(object), fields);
    }
    let first = &objects[0];
    assert_eq!(first["seq"], 1);
    assert_eq!(first["worker"], "mail");
    assert_eq!(first["agent"], "theo");
    assert_eq!(first["call"], "turn-1/call_1");
    assert_eq!(first["outcome"], "success");
    assert_eq!(first["arguments_lookup"], "found");
    assert_eq!(
        first["arguments"],
        json!({"to": "ana@example.com", "subject": "Q3"}).to_string()
    );
    assert_eq!(first["arguments_match"], true);
    assert_eq!(first["decision"], "decision-1");
    assert_eq!(first["approval_lookup"], "found");
    let approval = &first["approval"];
    assert_eq!(keys(approval), approval_fields);
    assert_eq!(approval["outcome"], "approved");
    assert_eq!(approval["decided_by"], "ana");
    assert_eq!(approval["decided_at"], "2027-01-15T08:01:00.000Z");
    assert_eq!(approval["requested_at"], "2027-01-15T08:00:00.100Z");
    assert_eq!(approval["channel_name"], "town-square");
    assert_eq!(approval["permalink"], "/_redirect/pl/prompt-1");
    assert_eq!(objects[1]["approval_lookup"], "ungated");
    assert_eq!(objects[1]["approval"], Value::Null);
    assert_eq!(objects[1]["decision"], Value::Null);
    assert_eq!(objects[2]["arguments_match"], false);
    assert_eq!(objects[2]["detail"], "the server said 550");
}

#[test]
fn i21_7_the_store_is_read_only_its_bytes_unchanged() {
    let f = fixture();
    let before = std::fs::read(&f.store).expect("read");
    let (out, _) = run(&request(&f, Filter::default(), false));
    assert_eq!(lines_of(&out).len(), 3);
    let (out, _) = run(&request(&f, Filter::default(), true));
    assert_eq!(out.lines().count(), 3);
    assert_eq!(std::fs::read(&f.store).expect("read"), before);
}

#[test]
fn i21_7_without_the_store_the_line_says_what_the_store_would_add() {
    let f = fixture();
    let mut request = request(&f, Filter::default(), false);
    request.anchored = None;
    let (out, _) = run(&request);
    assert!(out.contains("Without --store"), "{out}");
    let lines = lines_of(&out);
    assert!(lines[0].contains("arguments sha256:"), "{out}");
    assert!(
        lines[0].ends_with("decision decision-1 (--store says who approved it)"),
        "{out}"
    );
    assert!(lines[1].ends_with("ungated"), "{out}");
}

fn config(dir: &Path) -> PathBuf {
    let path = dir.join("collegium.toml");
    std::fs::write(
        &path,
        r#"
[deployment]
operator_timezone = "Europe/Berlin"
main_channel = "town-square"

[mattermost]
url = "https://chat.example.com/"
team = "acme"

[models.sim]
provider = "openai-compatible"
model = "demo"
context_window = 200000

[[channels]]
name = "town-square"

[[agents]]
username = "mira"
prompt = "You research."
model = "sim"
grants = []
"#,
    )
    .expect("config");
    path
}

#[test]
fn i21_7_the_configuration_gives_the_operators_timezone_and_the_sites_links() {
    let f = fixture();
    let mut request = request(&f, Filter::default(), false);
    request.config = Some(config(&f.dir));
    let (out, _) = run(&request);
    assert!(
        out.contains("Times are in Europe/Berlin (the operator's timezone)."),
        "{out}"
    );
    assert!(
        lines_of(&out)[0].contains(
            "approved by @ana at 2027-01-15 09:01:00.000 CET in ~town-square https://chat.example.com/acme/pl/prompt-1"
        ),
        "{out}"
    );

    let broken = f.dir.join("broken.toml");
    std::fs::write(&broken, "[deployment]\n").expect("write");
    request.config = Some(broken);
    let (mut out, mut note) = (Vec::new(), Vec::new());
    let refused = show(&request, &mut out, &mut note).expect_err("refused");
    assert!(refused.to_string().starts_with("--config: "), "{refused}");
    assert!(out.is_empty());
}

#[test]
fn i21_7_a_store_that_cannot_be_read_is_named_and_never_created() {
    let f = fixture();
    let missing = f.dir.join("no-such.db");
    let mut request = request(&f, Filter::default(), false);
    request.anchored = Some((missing.clone(), "mail".into()));
    let (mut out, mut note) = (Vec::new(), Vec::new());
    let refused = show(&request, &mut out, &mut note).expect_err("refused");
    assert!(matches!(refused, ShowError::Store(_)), "{refused}");
    assert!(
        refused.to_string().contains("cannot open the store"),
        "{refused}"
    );
    assert!(
        !refused.to_string().contains("does not verify"),
        "{refused}"
    );
    assert!(out.is_empty() && note.is_empty());
    assert!(!missing.exists(), "read-only: no store is created");
}
