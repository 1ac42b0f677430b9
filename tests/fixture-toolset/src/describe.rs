//! The fixture's description, made malformed on purpose for the tests of a
//! plugin's boot refusals (§3.14): one variant per refusal, chosen by name
//! with `FIXTURE_DESCRIBE`, each changing the honest description in one way.

use collegium_proto::PROTOCOL_VERSION;
use collegium_proto::toolset::v1::{DescribeResponse, Gate};

/// One way the description is wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// `Describe` never answers.
    Silent,
    /// A protocol range that leaves out the daemon's version.
    ProtocolRange,
    /// `read` states no gate.
    NoGate,
    /// `read` claims exemption from the action budget.
    BudgetExempt,
    /// `read` claims to be a core tool.
    Core,
    /// `read` declared twice.
    Duplicate,
    /// A tool whose name is not a tool segment.
    MalformedName,
    /// A settings schema that is JSON but no JSON Schema.
    SettingsSchema,
    /// Well formed, but `read` described in other words: a restart that
    /// describes itself so differs from boot.
    Otherwise,
}

/// Every variant with the name `FIXTURE_DESCRIBE` gives it.
pub const VARIANTS: &[(&str, Variant)] = &[
    ("silent", Variant::Silent),
    ("protocol-range", Variant::ProtocolRange),
    ("no-gate", Variant::NoGate),
    ("budget-exempt", Variant::BudgetExempt),
    ("core", Variant::Core),
    ("duplicate", Variant::Duplicate),
    ("malformed-name", Variant::MalformedName),
    ("settings-schema", Variant::SettingsSchema),
    ("otherwise", Variant::Otherwise),
];

impl Variant {
    /// The variant `FIXTURE_DESCRIBE` names, if any.
    pub fn from_env() -> Option<Self> {
        let name = std::env::var("FIXTURE_DESCRIBE").ok()?;
        VARIANTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    /// Makes `described` wrong this way.
    pub fn apply(self, described: &mut DescribeResponse) {
        let read = described.tools.iter().position(|t| t.name == "read");
        match self {
            Self::Silent => {}
            Self::ProtocolRange => {
                described.min_protocol_version = PROTOCOL_VERSION + 1;
                described.max_protocol_version = PROTOCOL_VERSION + 2;
            }
            Self::NoGate => {
                if let Some(i) = read {
                    described.tools[i].gate = Gate::Unspecified as i32;
                }
            }
            Self::BudgetExempt => {
                if let Some(i) = read {
                    described.tools[i].budget_exempt = true;
                }
            }
            Self::Core => {
                if let Some(i) = read {
                    described.tools[i].core = true;
                }
            }
            Self::Duplicate => {
                if let Some(i) = read {
                    let twice = described.tools[i].clone();
                    described.tools.push(twice);
                }
            }
            Self::MalformedName => {
                if let Some(i) = read {
                    described.tools[i].name = "Read::All".into();
                }
            }
            Self::SettingsSchema => {
                described.settings_schema_json = "{\"type\": 7}".into();
            }
            Self::Otherwise => {
                if let Some(i) = read {
                    described.tools[i].description = "Reads, in other words.".into();
                }
            }
        }
    }
}

/// The process as it was started: its environment, and each open
/// descriptor with what it points at (`/proc/self/fd`, whose own listing
/// is one of them).
pub fn process() -> serde_json::Value {
    let env: serde_json::Map<String, serde_json::Value> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                serde_json::Value::String(v.to_string_lossy().into_owned()),
            )
        })
        .collect();
    let mut fds = serde_json::Map::new();
    if let Ok(entries) = std::fs::read_dir("/proc/self/fd") {
        for entry in entries.flatten() {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            fds.insert(
                entry.file_name().to_string_lossy().into_owned(),
                serde_json::Value::String(target),
            );
        }
    }
    serde_json::json!({"env": env, "fds": fds})
}
