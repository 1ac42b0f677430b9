//! Every proto message of `collegium-proto` (ARCHITECTURE §4): arbitrary
//! bytes decoded as each message; whatever decodes re-encodes to bytes that
//! decode to the same message, and that encoding is stable. The toolset's
//! `DescribeResponse` then goes through the daemon's handshake check
//! (control/src/workers/handshake.rs) against the plugin declaration the
//! daemon builds from that same description (declarations.rs): a
//! description compared with itself may only fall short where a field is
//! refused outright (the sandbox, an unstated gate), never on a namespace,
//! a flag or a tool the two read differently.

use collegium_control::workers::declarations;
use collegium_control::workers::handshake::{self, SHELL_BOUNDS, SandboxExpectation};
use collegium_proto::{mail, pdf, storage, toolset};
use prost::Message;

fn round_trip<M: Message + Default + PartialEq>(data: &[u8]) -> Option<M> {
    let decoded = M::decode(data).ok()?;
    let encoded = decoded.encode_to_vec();
    let again = match M::decode(encoded.as_slice()) {
        Ok(again) => again,
        Err(e) => panic!(
            "{}: its own encoding does not decode: {e}",
            std::any::type_name::<M>()
        ),
    };
    assert!(
        again == decoded,
        "{}: decode, encode, decode changed the message",
        std::any::type_name::<M>()
    );
    assert_eq!(
        again.encode_to_vec(),
        encoded,
        "{}: the encoding is not stable",
        std::any::type_name::<M>()
    );
    Some(decoded)
}

macro_rules! every {
    ($data:expr; $($m:ty),+ $(,)?) => {
        $( let _ = round_trip::<$m>($data); )+
    };
}

pub fn run(data: &[u8]) {
    every!(data;
        toolset::v1::DescribeRequest, toolset::v1::WebScope, toolset::v1::AgentCommands,
        toolset::v1::AgentReach, toolset::v1::EndpointReach, toolset::v1::Sandbox,
        toolset::v1::ToolDeclaration, toolset::v1::StorageCollection,
        toolset::v1::SkillDeclaration, toolset::v1::Call, toolset::v1::DispatchGrant,
        toolset::v1::GrantClaims, toolset::v1::RenderRequest, toolset::v1::RenderResponse,
        toolset::v1::InvokeRequest, toolset::v1::InvokeEvent, toolset::v1::Progress,
        toolset::v1::ToolResult, toolset::v1::AuditAnchor, toolset::v1::StreamCapture,
        toolset::v1::Success, toolset::v1::Document, toolset::v1::Disclosure,
        toolset::v1::Refusal, toolset::v1::InvalidArguments, toolset::v1::Unresolved,
        toolset::v1::Failure, toolset::v1::CancelRequest, toolset::v1::CancelResponse,
        toolset::v1::EndTurnRequest, toolset::v1::EndTurnResponse,
        toolset::v1::HealthRequest, toolset::v1::HealthResponse,
        storage::v1::Record, storage::v1::GetRequest, storage::v1::CreateRequest,
        storage::v1::PatchRequest, storage::v1::DeleteRequest, storage::v1::DeleteResponse,
        storage::v1::QueryRequest, storage::v1::Condition, storage::v1::QueryResponse,
        storage::v1::UnitRequest, storage::v1::UnitView,
        pdf::v1::DescribeRequest, pdf::v1::DescribeResponse, pdf::v1::Limits,
        pdf::v1::PdfTextRequest, pdf::v1::PdfTextEvent, pdf::v1::Page, pdf::v1::End,
        pdf::v1::Failure, pdf::v1::HealthRequest, pdf::v1::HealthResponse,
        mail::v1::Cursor, mail::v1::PollRequest, mail::v1::PollResponse, mail::v1::Arrival,
        mail::v1::Attachment, mail::v1::MarkSeenRequest, mail::v1::MarkSeenResponse,
        mail::v1::CheckRequest, mail::v1::CheckResponse,
    );
    if let Some(described) = round_trip::<toolset::v1::DescribeResponse>(data) {
        handshake_with_itself(&described);
    }
}

/// The handshake of a plugin against the declaration its own description
/// makes (§3.14).
fn handshake_with_itself(described: &toolset::v1::DescribeResponse) {
    let expected = declarations::plugin(&described.namespace, described);
    let sandbox = SandboxExpectation {
        uid: 1000,
        gid: 1000,
        allowed_capabilities: 0,
        landlock_floor: Some(1),
        command_cgroups: true,
        command_namespaces: &["pid", "ipc"],
        command_bounds: SHELL_BOUNDS,
    };
    let gaps = handshake::compare(&expected, &sandbox, described);
    let mut names: Vec<&str> = described.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let unique = names.windows(2).all(|w| w[0] != w[1]);
    for gap in &gaps {
        let field = gap.field.as_str();
        assert_ne!(
            field, "namespace",
            "a description differs from itself: {gap}"
        );
        if field.starts_with("tools.") && unique {
            let refusable = field.ends_with(".gate")
                || field.ends_with(".parameters_schema_sha256")
                || field.ends_with(".parameters_schema_json");
            assert!(
                refusable,
                "a plugin's tool differs from the declaration its own description makes: {gap}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    /// Every message of every proto file is fuzzed: one added to a proto
    /// later fails this until `run` lists it.
    #[test]
    fn every_proto_message_is_fuzzed() {
        let harness = include_str!("proto.rs");
        let protos = [
            (
                "toolset",
                include_str!("../../../proto/proto/collegium/toolset/v1/toolset.proto"),
            ),
            (
                "storage",
                include_str!("../../../proto/proto/collegium/storage/v1/storage.proto"),
            ),
            (
                "pdf",
                include_str!("../../../proto/proto/collegium/pdf/v1/pdf.proto"),
            ),
            (
                "mail",
                include_str!("../../../proto/proto/collegium/mail/v1/mail.proto"),
            ),
        ];
        let mut seen = 0;
        for (package, text) in protos {
            for line in text.lines() {
                let Some(rest) = line.trim_start().strip_prefix("message ") else {
                    continue;
                };
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let listed = format!("{package}::v1::{name}");
                assert!(harness.contains(&listed), "{listed} is not fuzzed");
                seen += 1;
            }
        }
        assert!(seen >= 60, "the proto files went missing: {seen} messages");
    }
}
