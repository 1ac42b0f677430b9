//! A plugin built with the SDK, driven in process through its `Toolset`
//! service as the daemon drives it over the socket (§3.14): the handshake
//! within the protocol range, the declared gates and schemas, renders,
//! signed calls and the failures a body controls.

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{
    Call, DescribeRequest, Gate, InvokeRequest, RenderRequest, ToolResult, invoke_event,
    tool_result, toolset_server::Toolset,
};
use collegium_sdk::storage::from_fd;
use collegium_sdk::{
    Collection, Context, Disclosure, Plugin, PluginService, Prompt, Reply, Storage, ToolBuilder,
    ToolError,
};
use collegium_worker_kit::admission::now_ms;
use collegium_worker_kit::grant::GrantSigner;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio_stream::StreamExt;
use tonic::Request;

#[derive(Deserialize, JsonSchema)]
struct Settings {
    #[serde(default)]
    prefix: String,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Note {
    text: String,
}

impl Collection for Note {
    const NAME: &'static str = "notes";
}

#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

async fn render_keep(cx: Context<Settings>, args: Text) -> Result<Prompt, ToolError> {
    Ok(Prompt::new(
        "keep a note",
        format!("{}{}", cx.settings().prefix, args.text),
    ))
}

async fn keep(cx: Context<Settings>, args: Text) -> Result<Reply, ToolError> {
    let stored = cx.storage().create(&Note { text: args.text }).await?;
    Ok(Reply::text(format!("kept {}", stored.id))
        .summary("kept a note")
        .disclose(Disclosure::new("a note", stored.data.text).reference(stored.id)))
}

async fn echo(cx: Context<Settings>, args: Text) -> Result<Reply, ToolError> {
    match args.text.as_str() {
        "invalid" => Err(ToolError::invalid("say something else")),
        "unresolved" => Err(ToolError::unresolved("it may have gone out")),
        "panic" => panic!("the body gave up"),
        _ => Ok(Reply::text(format!(
            "{}{} in {:?} for {:?}, holding {:?}",
            cx.settings().prefix,
            args.text,
            cx.channel(),
            cx.assigned_unit(),
            cx.held_tools()
        ))),
    }
}

fn plugin() -> Plugin<Settings> {
    Plugin::<Settings>::new("notes")
        .version("9.9")
        .collection::<Note>()
        .skill(
            "keeping-notes",
            "---\ndescription: Keep notes well.\ntools: [notes::keep]\n---\nSteps.\n",
        )
        .tool(
            ToolBuilder::new("keep", "Keeps a note.")
                .render(render_keep)
                .run(keep),
        )
        .tool(
            ToolBuilder::new("echo", "Echoes.")
                .does_not_gate()
                .concurrent()
                .retryable()
                .run(echo),
        )
}

struct Driven {
    service: PluginService<Settings>,
    signer: GrantSigner,
    memory: collegium_sdk::testing::Memory,
    _dir: tempfile::TempDir,
}

async fn driven() -> Driven {
    let dir = tempfile::tempdir().expect("tempdir");
    let memory = collegium_sdk::testing::Memory::default();
    let storage = Storage::new(
        from_fd(memory.serve_on_pair().expect("pair"))
            .await
            .expect("storage"),
    );
    let service = plugin()
        .service(&dir.path().join("audit.jsonl"), storage)
        .expect("service");
    let signer = GrantSigner::generate("boot-1");
    service
        .describe(Request::new(DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
            boot_id: signer.boot_id().into(),
            grant_public_key: signer.public_key().to_vec(),
        }))
        .await
        .expect("handshake");
    Driven {
        service,
        signer,
        memory,
        _dir: dir,
    }
}

fn call(tool: &str, arguments: Value, n: u32) -> Call {
    Call {
        agent: "mira".into(),
        turn_id: "turn-1".into(),
        call_id: format!("call-{n}"),
        tool: tool.into(),
        arguments_json: arguments.to_string().into_bytes(),
        settings_json: r#"{"prefix":"> "}"#.into(),
        channel: "research".into(),
        held_tools: vec!["notes::echo".into()],
        unit: "U-7".into(),
        ..Call::default()
    }
}

async fn invoke(d: &Driven, call: Call, decision: &str) -> ToolResult {
    let grant = d.signer.sign("notes", &call, decision, now_ms());
    let mut events = d
        .service
        .invoke(Request::new(InvokeRequest {
            call: Some(call),
            grant: Some(grant),
        }))
        .await
        .expect("admitted")
        .into_inner();
    while let Some(event) = events.next().await {
        if let Some(invoke_event::Event::Result(result)) = event.expect("event").event {
            return result;
        }
    }
    panic!("the stream ended without a result");
}

#[tokio::test]
async fn s3_14_the_description_states_each_gate_and_the_generated_schemas() {
    let d = driven().await;
    let described = d
        .service
        .describe(Request::new(DescribeRequest {
            protocol_version: PROTOCOL_VERSION,
            boot_id: d.signer.boot_id().into(),
            grant_public_key: d.signer.public_key().to_vec(),
        }))
        .await
        .expect("described")
        .into_inner();
    assert_eq!(described.namespace, "notes");
    assert_eq!(described.build_version, "9.9");
    assert_eq!(described.protocol_version, PROTOCOL_VERSION);
    assert_eq!(
        (
            described.min_protocol_version,
            described.max_protocol_version
        ),
        (1, 1),
        "the range boot checks (§3.14)"
    );
    assert!(described.sandbox.expect("sandbox").effective_uid == nix_uid());
    let gates: Vec<(String, i32)> = described
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.gate))
        .collect();
    assert_eq!(
        gates,
        vec![
            ("keep".into(), Gate::Approval as i32),
            ("echo".into(), Gate::None as i32)
        ]
    );
    let echo = &described.tools[1];
    assert!(echo.concurrent && echo.retryable && !echo.supersedable);
    let schema: Value = serde_json::from_str(&echo.parameters_schema_json).expect("json");
    assert_eq!(schema["properties"]["text"]["type"], "string");
    let settings: Value = serde_json::from_str(&described.settings_schema_json).expect("json");
    assert_eq!(settings["properties"]["prefix"]["type"], "string");
    assert_eq!(described.storage_collections[0].name, "notes");
    assert_eq!(described.skills[0].name, "keeping-notes");
    assert_eq!(described.skills[0].tools, vec!["notes::keep".to_string()]);
}

fn nix_uid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .expect("status")
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|rest| rest.split_whitespace().nth(1))
        .and_then(|uid| uid.parse().ok())
        .expect("effective uid")
}

#[tokio::test]
async fn s3_14_a_daemon_outside_the_protocol_range_is_refused() {
    let d = driven().await;
    let refused = d
        .service
        .describe(Request::new(DescribeRequest {
            protocol_version: 99,
            boot_id: "boot-2".into(),
            grant_public_key: d.signer.public_key().to_vec(),
        }))
        .await
        .expect_err("refused");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused.message().contains("version 99"),
        "{}",
        refused.message()
    );
}

#[tokio::test]
async fn s3_14_a_gated_tool_renders_from_arguments_and_settings() {
    let d = driven().await;
    let rendered = d
        .service
        .render(Request::new(RenderRequest {
            call: Some(call("keep", json!({"text": "milk"}), 1)),
        }))
        .await
        .expect("rendered")
        .into_inner();
    assert_eq!(rendered.payload, "> milk");
    assert_eq!(rendered.summary, "keep a note");
    let refused = d
        .service
        .render(Request::new(RenderRequest {
            call: Some(call("echo", json!({"text": "x"}), 2)),
        }))
        .await
        .expect_err("an ungated tool has no render");
    assert!(refused.message().contains("does not stop for a person"));
}

#[tokio::test]
async fn s3_14_an_approved_call_stores_its_record_and_discloses_it() {
    let d = driven().await;
    let result = invoke(&d, call("keep", json!({"text": "milk"}), 1), "decision-1").await;
    let Some(tool_result::Outcome::Success(success)) = result.outcome else {
        panic!("{result:?}");
    };
    assert_eq!(result.summary, "kept a note");
    assert!(result.audit.is_some(), "the audit anchor goes back");
    let disclosure = success.disclosure.expect("disclosed");
    assert_eq!(disclosure.body, "milk");
    assert_eq!(success.text, format!("kept {}", disclosure.reference));
    assert_eq!(d.memory.snapshot().len(), 1);
}

#[tokio::test]
async fn s3_14_a_gated_call_without_a_decision_never_runs() {
    let d = driven().await;
    let call = call("keep", json!({"text": "milk"}), 1);
    let grant = d.signer.sign("notes", &call, "", now_ms());
    let refused = d
        .service
        .invoke(Request::new(InvokeRequest {
            call: Some(call),
            grant: Some(grant),
        }))
        .await
        .err()
        .expect("refused");
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);
    assert!(d.memory.snapshot().is_empty());
}

#[tokio::test]
async fn s3_14_a_body_sees_its_call_settings_channel_and_held_tools() {
    let d = driven().await;
    let result = invoke(&d, call("echo", json!({"text": "hi"}), 1), "").await;
    let Some(tool_result::Outcome::Success(success)) = result.outcome else {
        panic!("{result:?}");
    };
    assert_eq!(
        success.text,
        r#"> hi in Some("research") for Some("U-7"), holding ["notes::echo"]"#
    );
    assert_eq!(result.summary, "notes::echo");
}

#[tokio::test]
async fn s3_14_the_two_failures_and_a_panic_reach_the_daemon_typed() {
    let d = driven().await;
    let outcome = |r: ToolResult| r.outcome.expect("an outcome");
    match outcome(invoke(&d, call("echo", json!({"text": "invalid"}), 1), "").await) {
        tool_result::Outcome::InvalidArguments(r) => assert_eq!(r.message, "say something else"),
        other => panic!("{other:?}"),
    }
    match outcome(invoke(&d, call("echo", json!({"text": "unresolved"}), 2), "").await) {
        tool_result::Outcome::Unresolved(r) => assert_eq!(r.message, "it may have gone out"),
        other => panic!("{other:?}"),
    }
    match outcome(invoke(&d, call("echo", json!({"text": "panic"}), 3), "").await) {
        tool_result::Outcome::Failure(r) => {
            assert_eq!(r.message, "the tool panicked: the body gave up");
        }
        other => panic!("{other:?}"),
    }
    match outcome(invoke(&d, call("echo", json!({"words": 1}), 4), "").await) {
        tool_result::Outcome::InvalidArguments(r) => {
            assert!(r.message.contains("missing field `text`"), "{}", r.message);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn s3_14_a_declaration_with_a_duplicate_or_malformed_name_is_refused() {
    let bad = Plugin::<Settings>::new("Notes")
        .tool(ToolBuilder::new("echo", "a").does_not_gate().run(echo))
        .tool(ToolBuilder::new("echo", "b").does_not_gate().run(echo))
        .skill("broken", "no frontmatter");
    let refused = bad.description().expect_err("refused").to_string();
    for says in [
        "the namespace `Notes`",
        "the tool `echo` is declared twice",
        "the skill `broken`",
    ] {
        assert!(refused.contains(says), "{refused}");
    }
}
