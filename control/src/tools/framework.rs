//! The framework's own toolsets, as the spec names them (§3.4–§3.7a, §3.13,
//! §3.15). A toolset whose behaviour lands in a later piece of work is declared
//! here already, so configuration that grants it is checked today against the
//! same declaration its implementation will serve (a worker's handshake is
//! compared with it at boot).

use serde_json::{Value, json};

use super::names::ToolRef;
use super::registry::{
    Gate, Host, SkillDeclaration, ToolDeclaration, ToolsetDeclaration, ToolsetKind,
};

/// The skills every agent's manifest carries; naming one in config is an
/// error (§3.5).
pub const CORE_SKILLS: &[&str] = &["handing-work-to-a-peer", "understanding-collegium"];

/// A tool declaration, read top to bottom at the call site.
struct Tool(ToolDeclaration);

impl Tool {
    fn new(name: &str, description: &str) -> Self {
        Self(ToolDeclaration {
            name: name.to_string(),
            description: description.to_string(),
            gate: Gate::None,
            retryable: false,
            budget_exempt: false,
            concurrent: false,
            supersedable: false,
            requires_settings: Vec::new(),
            parameters: None,
        })
    }
    /// An ungated read: safe to repeat and to run beside other reads.
    fn read(name: &str, description: &str) -> Self {
        Self::new(name, description).retryable().concurrent()
    }
    fn approval(mut self) -> Self {
        self.0.gate = Gate::Approval;
        self
    }
    fn ask(mut self) -> Self {
        self.0.gate = Gate::Ask;
        self
    }
    fn retryable(mut self) -> Self {
        self.0.retryable = true;
        self
    }
    fn concurrent(mut self) -> Self {
        self.0.concurrent = true;
        self
    }
    fn budget_exempt(mut self) -> Self {
        self.0.budget_exempt = true;
        self
    }
    fn supersedable(mut self) -> Self {
        self.0.supersedable = true;
        self
    }
    fn parameters(mut self, schema: Value) -> Self {
        self.0.parameters = Some(schema);
        self
    }
    fn requires(mut self, setting: &str) -> Self {
        self.0.requires_settings.push(setting.to_string());
        self
    }
}

/// A page action's parameters: every one a required string (§3.4).
fn page_action(fields: &[(&str, &str)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, description)| {
            (
                (*name).to_string(),
                json!({"type": "string", "minLength": 1, "description": description}),
            )
        })
        .collect();
    let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": properties
    })
}

/// A workspace tool's parameters: (name, JSON type, description, required).
fn workspace_parameters(fields: &[(&str, &str, &str, bool)]) -> Value {
    let properties: serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, kind, description, _)| {
            let mut property = json!({"type": kind, "description": description});
            if *kind == "integer" {
                property["minimum"] = json!(0);
            }
            ((*name).to_string(), property)
        })
        .collect();
    let required: Vec<&str> = fields
        .iter()
        .filter(|(.., required)| *required)
        .map(|(name, ..)| *name)
        .collect();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": properties,
    })
}

fn toolset(
    namespace: &str,
    kind: ToolsetKind,
    host: Host,
    settings_schema: Value,
    tools: Vec<Tool>,
) -> ToolsetDeclaration {
    ToolsetDeclaration {
        namespace: namespace.to_string(),
        kind,
        host,
        tools: tools.into_iter().map(|t| t.0).collect(),
        settings_schema,
        skills: Vec::<SkillDeclaration>::new(),
    }
}

/// A toolset that takes no settings.
fn no_settings() -> Value {
    json!({"type": "object", "additionalProperties": false})
}

/// The schema of a secret inside toolset settings, as `Secret` reads it.
fn secret_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "file": {"type": "string", "minLength": 1},
            "env": {"type": "string", "minLength": 1},
            "value": {"type": "string", "minLength": 1}
        },
        "minProperties": 1,
        "maxProperties": 1
    })
}

fn positive() -> Value {
    json!({"type": "integer", "minimum": 1})
}

/// `[settings.shell]`: the command's deadline and output prefix, the
/// commands probed, and what one command may take (`shell_bounds`, §6.1).
fn shell_settings_schema() -> Value {
    let mut schema = json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "deadline_secs": positive(),
            // The shell worker captures at most 1 MiB of a stream;
            // it could not show more than it keeps.
            "output_prefix_bytes": {"type": "integer", "minimum": 1, "maximum": 1_048_576},
            "probe_commands": {
                "description": "Commands probed at boot as the agent's user; those found are named in the preamble (§3.4).",
                "type": "array",
                "items": {"type": "string", "minLength": 1}
            }
        }
    });
    if let Some(properties) = schema["properties"].as_object_mut() {
        properties.extend(
            super::shell_bounds::schema_properties().map(|(key, value)| (key.to_string(), value)),
        );
    }
    schema
}

fn mail_server() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["host", "port", "username", "password"],
        "properties": {
            "host": {"type": "string", "minLength": 1},
            "port": {"type": "integer", "minimum": 1, "maximum": 65535},
            "username": {"type": "string", "minLength": 1},
            "password": secret_schema(),
            "tls": {"enum": ["implicit", "starttls", "none"]}
        }
    })
}

/// How many messages a mail listing shows (the mail worker's bounds).
fn mail_count() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 50, "description": "How many messages, 20 when not given."})
}

/// A mail tool that takes one message id.
fn mail_message_only(description: &str) -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["message"],
        "properties": {"message": {"type": "string", "minLength": 1, "description": description}}
    })
}

/// Recipients: plain addresses only, so what a person approves names each
/// recipient and nothing hides behind a display name (§3.13). The worker
/// parses each again and refuses what does not parse before any prompt.
fn mail_addresses(description: &str, at_least: u64) -> Value {
    json!({
        "type": "array",
        "minItems": at_least,
        "items": {"type": "string", "pattern": "^[^@\\s<>(),;:\"\\[\\]\\\\]+@[^@\\s<>(),;:\"\\[\\]\\\\]+$"},
        "description": description
    })
}

/// A memory's reference, as every memory tool but write takes it (§3.6).
fn memory_reference() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 40, "description": "The memory's reference, as the listing shows it, such as mab12cd."})
}

/// A memory's description, capped by the toolset's settings, not here.
fn memory_description(description: &str) -> Value {
    json!({"type": "string", "minLength": 1, "description": description})
}

/// A memory tool's parameters: the reference, the required string fields
/// `required`, each of `fields`, and for a revision an optional new
/// description.
fn memory_params(required: &[&str], fields: &[(&str, &str)]) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("memory".into(), memory_reference());
    for (name, description) in fields {
        properties.insert(
            (*name).to_string(),
            json!({"type": "string", "minLength": 1, "description": description}),
        );
    }
    if !fields.is_empty() {
        properties.insert(
            "description".into(),
            memory_description(
                "A new description; the memory keeps its own when this is left out.",
            ),
        );
    }
    let mut names = vec!["memory"];
    names.extend_from_slice(required);
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": names,
        "properties": properties
    })
}

/// `memory::replace`: passages found exactly once each, all or none.
fn memory_replace() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["memory"],
        "properties": {
            "memory": memory_reference(),
            "passages": {
                "type": "array",
                "maxItems": 20,
                "description": "Passages of the body to substitute. Each must be found exactly once in the body as stored; if one is not, nothing changes.",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["find", "replace"],
                    "properties": {
                        "find": {"type": "string", "minLength": 1, "description": "The passage as the body holds it."},
                        "replace": {"type": "string", "description": "What takes its place; empty removes it."}
                    }
                }
            },
            "description": memory_description("A new description. Given alone, it changes the description only.")
        }
    })
}

pub fn declarations() -> Vec<ToolsetDeclaration> {
    use Host::{Daemon, Worker};
    use ToolsetKind::{Core, Framework};
    vec![
        // Core machinery every agent holds (§3.4).
        toolset(
            "builtins",
            Core,
            Daemon,
            no_settings(),
            vec![
                Tool::read(
                    "now",
                    "The current date and time in the operator's timezone.",
                )
                .budget_exempt()
                .parameters(json!({"type": "object", "properties": {}})),
            ],
        ),
        toolset(
            "results",
            Core,
            Daemon,
            no_settings(),
            vec![Tool::read(
                "read",
                "Read on in a result of this turn from an offset, or find phrases in it.",
            )
            .parameters(json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["reference"],
                "properties": {
                    "reference": {"type": "string", "description": "The reference a result view gave, such as r3."},
                    "offset": {"type": "integer", "minimum": 0, "description": "The character offset to read from."},
                    "length": {"type": "integer", "minimum": 1, "maximum": 20000, "description": "How many characters to read; 8000 when not given."},
                    "find": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 10, "description": "Phrases to find, case-insensitively; each match is given with its offset."}
                }
            }))],
        ),
        toolset(
            "skills",
            Core,
            Daemon,
            no_settings(),
            vec![
                Tool::read("load", "Load an assigned skill, or one of its references.")
                    .budget_exempt()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["name"],
                        "properties": {
                            "name": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The skill's name as your manifest lists it, such as handing-work-to-a-peer."},
                            "reference": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A file name from the skill's reference index, to load that document instead of the body."}
                        }
                    })),
            ],
        ),
        toolset(
            "triggers",
            Core,
            Daemon,
            no_settings(),
            vec![
                Tool::new("resolve", "Mark a trigger announced to you as handled.")
                    .retryable()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {
                            "trigger": {"type": "string", "minLength": 1, "maxLength": 40, "description": "The id the announcement brackets, such as T-12. Leave it out for the trigger whose announcement started this turn."}
                        }
                    })),
            ],
        ),
        // Framework capabilities, granted per agent.
        toolset(
            "memory",
            Framework,
            Daemon,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "max_entries": positive(),
                    "max_description_chars": positive(),
                    "max_body_chars": positive()
                }
            }),
            vec![
                Tool::read("read", "Read a memory's body.")
                    .budget_exempt()
                    .parameters(memory_params(&[], &[])),
                Tool::new("write", "Keep a new memory.").parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["description", "body"],
                    "properties": {
                        "description": memory_description("One line saying when this memory is needed; it is listed on every turn."),
                        "body": {"type": "string", "minLength": 1, "description": "What to keep. It is read back on demand with memory::read."}
                    }
                })),
                Tool::new("append", "Add to a memory's body.").parameters(memory_params(
                    &["text"],
                    &[("text", "The text to add, on a line of its own at the end of the body as stored.")],
                )),
                Tool::new(
                    "replace",
                    "Replace passages of a memory's body, all or none.",
                )
                .parameters(memory_replace()),
                Tool::new("rewrite", "Replace a memory's whole body.").parameters(
                    memory_params(
                        &["body"],
                        &[("body", "The whole new body. Only the current revision, read in this turn, may be rewritten.")],
                    ),
                ),
                Tool::new("delete", "Delete a memory.")
                    .retryable()
                    .parameters(memory_params(&[], &[])),
            ],
        ),
        toolset(
            "conversations",
            Framework,
            Daemon,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {"max_hits": positive()}
            }),
            vec![
                Tool::read(
                    "search",
                    "Find posts whose text contains a phrase (any case, any part of a word), newest first, in channels you are in, back to your latest episode boundary in each. From a public channel it searches public channels only; from a private channel or a direct message, also the private ones whose members include everyone here. It returns posts only: never a trace, stored reasoning, a status post, an approval prompt or a notice, and never the posts this turn answers. Each hit shows its text around the match; conversations::read reads a post whole.",
                )
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["phrase"],
                    "properties": {
                        "phrase": {"type": "string", "minLength": 1, "description": "The text to find, matched as written apart from case: at most 500 characters. One character works; a longer, distinctive phrase finds fewer, better hits."},
                        "author": {"type": "string", "minLength": 1, "description": "Only posts by this author: a person's username, or an agent's name or username."},
                        "after": {"type": "string", "description": "Only posts written at or after this date (2026-03-14, the operator's timezone) or time (2026-03-14T09:30:00Z)."},
                        "before": {"type": "string", "description": "Only posts written before this date (2026-03-14, the operator's timezone) or time (2026-03-14T09:30:00Z)."}
                    }
                })),
                Tool::read(
                    "read",
                    "Read one post whole by its id, as a window line or a search hit shows it. A long post is read in pages: the result says where the next page starts.",
                )
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["post"],
                    "properties": {
                        "post": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The post's id, shown after \"post\"."},
                        "offset": {"type": "integer", "minimum": 0, "description": "The character to start from, for the rest of a long post; 0 when left out."}
                    }
                })),
            ],
        ),
        toolset(
            "tasks",
            Framework,
            Daemon,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "colleagues": {
                        "description": "The colleagues (usernames) this agent may assign units to (§3.15).",
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "uniqueItems": true
                    },
                    "open_units_cap": positive()
                }
            }),
            vec![
                Tool::new("assign", "Hand a unit of work to a colleague.").parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["assignee", "outcome", "criteria"],
                    "properties": {
                        "assignee": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The colleague's username, as Peers lists it."},
                        "outcome": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "The outcome wanted."},
                        "criteria": {"type": "string", "minLength": 1, "maxLength": 3000, "description": "What you will judge the result by."},
                        "context": {"type": "string", "maxLength": 8000, "description": "What the colleague needs to know to do it."},
                        "follows": {"type": "string", "minLength": 1, "maxLength": 64, "description": "A unit of yours in review or blocked (or closed as done) that this one continues, such as U-3: it closes as done, continued by this one. Goes to that unit's own assignee."},
                        "endTurn": {"type": "boolean", "description": "true to end your turn at this post with no reply. Granted only where every other call of this completion returned cleanly and none waited on a person, no steer came since, and the turn owes no reply (a person's post, a trigger's announcement, a plain post of another colleague, a steer) and no unit a move; otherwise the turn goes on and you are told why."}
                    }
                })),
                Tool::new(
                    "report",
                    "Report on a unit assigned to you: review or blocked.",
                )
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["unit", "state", "report"],
                    "properties": {
                        "unit": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The unit, such as U-3."},
                        "state": {"type": "string", "enum": ["review", "blocked"], "description": "review: the work is ready to judge. blocked: a blocker nobody in the channel can answer."},
                        "report": {"type": "string", "minLength": 1, "maxLength": 12000, "description": "What was done and where it is, or what blocks it."},
                        "endTurn": {"type": "boolean", "description": "true to end your turn at this post with no reply. Granted only where every other call of this completion returned cleanly and none waited on a person, no steer came since, and the turn owes no reply (a person's post, a trigger's announcement, a plain post of another colleague, a steer) and no unit a move; otherwise the turn goes on and you are told why."}
                    }
                })),
                Tool::new("close", "Close a unit you created: done or cancelled.").parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["unit", "state", "verdict"],
                    "properties": {
                        "unit": {"type": "string", "minLength": 1, "maxLength": 64, "description": "The unit, such as U-3."},
                        "state": {"type": "string", "enum": ["done", "cancelled"], "description": "done: it delivered, or a unit that follows it continues its work. cancelled: the work is abandoned."},
                        "verdict": {"type": "string", "minLength": 1, "maxLength": 3000, "description": "Your judgement, and why: for done, whether it delivered; for cancelled, the reason."}
                    }
                })),
                Tool::read("read", "Read a unit whole.")
                    .budget_exempt()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["unit"],
                        "properties": {
                            "unit": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The unit, such as U-3."}
                        }
                    })),
            ],
        ),
        toolset(
            "ask",
            Framework,
            Daemon,
            no_settings(),
            vec![
                Tool::new(
                    "human",
                    "Ask the person your work descends from a question only a person can answer, and wait for the answer.",
                )
                .ask()
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["question"],
                    "properties": {
                        "question": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "The question, as the person will read it."},
                        "answers": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1, "maxLength": crate::approvals::question::MAX_CHOICE_CHARS},
                            "maxItems": crate::approvals::question::MAX_CHOICES,
                            "uniqueItems": true,
                            "description": "A few short answers offered as buttons; the person may always write their own."
                        }
                    }
                })),
            ],
        ),
        toolset(
            "workspace",
            Framework,
            Daemon,
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "list_entry_cap": positive(),
                    "find_count_cap": positive(),
                    "grep_hit_cap": positive()
                }
            }),
            vec![
                Tool::new("write", "Write a file in your workspace.")
                    .approval()
                    .parameters(workspace_parameters(&[
                        ("path", "string", "The file's path, relative to your workspace.", true),
                        ("content", "string", "The whole content to write; an existing file is replaced.", true),
                    ])),
                Tool::read("read", "Read part of a file in your workspace.").parameters(
                    workspace_parameters(&[
                        ("path", "string", "The file's path, relative to your workspace.", true),
                        ("offset", "integer", "The character to start from; 0 when not given.", false),
                        ("length", "integer", "How many characters to read; 8000 when not given, at most 20000.", false),
                    ]),
                ),
                Tool::read("list", "List a directory of your workspace.").parameters(
                    workspace_parameters(&[
                        ("path", "string", "The directory, relative to your workspace; the workspace itself when not given.", false),
                        ("depth", "integer", "How many levels to list, 1 to 5; 1 when not given.", false),
                    ]),
                ),
                Tool::read("find", "Find files in your workspace by glob.").parameters(
                    workspace_parameters(&[(
                        "glob",
                        "string",
                        "A glob over paths from the workspace's root, such as **/*.md.",
                        true,
                    )]),
                ),
                Tool::read("grep", "Search files in your workspace for a pattern.").parameters(
                    workspace_parameters(&[
                        ("pattern", "string", "A regular expression.", true),
                        ("path", "string", "A file or directory to search; the whole workspace when not given.", false),
                    ]),
                ),
                Tool::read("stat", "Describe one path in your workspace.").parameters(
                    workspace_parameters(&[(
                        "path",
                        "string",
                        "The path, relative to your workspace.",
                        true,
                    )]),
                ),
            ],
        ),
        toolset(
            "shell",
            Framework,
            Worker("shell".into()),
            shell_settings_schema(),
            vec![
                Tool::new("run", "Run one command as your own OS user.")
                    .approval()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["command"],
                        "properties": {
                            "command": {"type": "string", "description": "The command, run by bash -c in your home directory."}
                        }
                    })),
            ],
        ),
        toolset(
            "web",
            Framework,
            Worker("browser".into()),
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {
                    "search": {
                        "description": "The search provider web::search queries; unset, the tool is not offered (§3.4).",
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["provider"],
                        "properties": {
                            "provider": {"enum": ["brave", "searxng"]},
                            "api_key": secret_schema(),
                            "base_url": {"type": "string", "pattern": "^https?://"}
                        },
                        // Brave's API takes a subscription key; a SearXNG
                        // instance is the deployment's own, named by address.
                        "allOf": [
                            {"if": {"properties": {"provider": {"const": "brave"}}},
                             "then": {"required": ["api_key"]}},
                            {"if": {"properties": {"provider": {"const": "searxng"}}},
                             "then": {"required": ["base_url"]}}
                        ]
                    }
                }
            }),
            vec![
                Tool::new(
                    "navigate",
                    "Open a public http(s) address in this turn's browser session (a real browser that runs the page's script), and return the page as markdown: its form controls and any tab it opened first, each with a ref the other web tools act on.",
                )
                .retryable()
                .supersedable()
                .parameters(page_action(&[("url", "The http(s) address to open.")])),
                Tool::new("click", "Click an element of the page by its ref from the latest snapshot; returns the page as it then is.")
                    .supersedable()
                    .parameters(page_action(&[("ref", "The element's ref, as the latest snapshot shows it (e12).")])),
                Tool::new("fill", "Type text into a form field by its ref from the latest snapshot. What you type is shown like any argument: never type a secret.")
                    .supersedable()
                    .parameters(page_action(&[
                        ("ref", "The field's ref, as the latest snapshot shows it."),
                        ("text", "The text to type."),
                    ])),
                Tool::new("hover", "Hover over an element by its ref, revealing what it hides (a submenu).")
                    .supersedable()
                    .parameters(page_action(&[("ref", "The element's ref, as the latest snapshot shows it.")])),
                Tool::new("select", "Choose one option of a drop-down by its label or value.")
                    .supersedable()
                    .parameters(page_action(&[
                        ("ref", "The drop-down's ref, as the latest snapshot shows it."),
                        ("option", "The option's label or value."),
                    ])),
                Tool::read(
                    "fetch",
                    "One plain HTTP GET of a public http(s) address, no session and no script, read as markdown: the page's main content in a window of fixed width, or where given phrases occur. Cheap; reads PDFs and text files too.",
                )
                .supersedable()
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["url"],
                    "properties": {
                        "url": {"type": "string", "minLength": 1, "description": "The http(s) address to read."},
                        "offset": {"type": "integer", "minimum": 0, "description": "Where the window starts, in characters; a result says where to read on."},
                        "find": {
                            "type": "array",
                            "items": {"type": "string", "minLength": 1},
                            "minItems": 1,
                            "maxItems": 5,
                            "description": "Phrases to locate instead of reading a window: each hit with the text around it and the offset to read from."
                        },
                        "wholePage": {"type": "boolean", "description": "Read the navigation, banner and footer too, not only the main content."}
                    }
                })),
                Tool::read(
                    "search",
                    "Query the configured search provider: ranked titles, addresses and snippets, never the pages themselves.",
                )
                .requires("search")
                .parameters(json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["query"],
                    "properties": {
                        "query": {"type": "string", "minLength": 1, "maxLength": 400, "description": "What to search for."},
                        "count": {"type": "integer", "minimum": 1, "maximum": 20, "description": "How many results, 10 when not given."}
                    }
                })),
            ],
        ),
        toolset(
            "mail",
            Framework,
            Worker("mail".into()),
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["mailbox"],
                "properties": {
                    "mailbox": {
                        "description": "The one address this agent acts as (§3.13).",
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["address", "imap", "smtp", "announce_channel"],
                        "properties": {
                            "address": {"type": "string", "pattern": "^[^@\\s]+@[^@\\s]+$"},
                            "imap": mail_server(),
                            "smtp": mail_server(),
                            "announce_channel": {"type": "string", "minLength": 1},
                            "poll_interval_secs": positive(),
                            "html_template": {"type": "string", "minLength": 1}
                        }
                    }
                }
            }),
            vec![
                Tool::read("list", "List the newest messages in your mailbox: for each its id, sender, subject, receipt time, whether it has attachments and a short preview.")
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "properties": {"count": mail_count()}
                    })),
                Tool::read("search", "Search your mailbox for one phrase in the sender, the subject or the body; newest matches first, listed as mail::list lists.")
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["phrase"],
                        "properties": {
                            "phrase": {"type": "string", "minLength": 1, "maxLength": 400, "description": "The phrase, matched as text."},
                            "count": mail_count()
                        }
                    })),
                Tool::read("open", "Open one message: its headers, its whole body (HTML read as text) and its attachments described by name, type and size. Attachment content is never given.")
                    .parameters(mail_message_only("The message's id, as mail::list, mail::search or mail::conversation gives it.")),
                Tool::read("conversation", "List every message of the conversation one message belongs to, oldest first, with how many there are.")
                    .parameters(mail_message_only("The id of any message of the conversation.")),
                Tool::new("send", "Send a new message from your mailbox. A person approves it first, reading every recipient, the subject and the whole body. There is no blind copy.")
                    .approval()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["to", "subject", "body"],
                        "properties": {
                            "to": mail_addresses("The recipients, each a plain address (name@example.org).", 1),
                            "cc": mail_addresses("Recipients copied openly, each a plain address.", 0),
                            "subject": {"type": "string", "maxLength": 998, "description": "The subject line."},
                            "body": {"type": "string", "minLength": 1, "description": "The whole body, in markdown where the mailbox sends HTML."}
                        }
                    })),
                Tool::new("reply", "Reply to a message, to its sender (or its Reply-To), threaded under it. A person approves it first, reading every recipient, the subject and the whole body.")
                    .approval()
                    .parameters(json!({
                        "type": "object",
                        "additionalProperties": false,
                        "required": ["message", "body"],
                        "properties": {
                            "message": {"type": "string", "minLength": 1, "description": "The id of the message replied to."},
                            "body": {"type": "string", "minLength": 1, "description": "The whole body of the reply."},
                            "cc": mail_addresses("Recipients copied openly, each a plain address.", 0)
                        }
                    })),
            ],
        ),
    ]
}

/// The tools a skill names, parsed; `None` for a malformed name.
pub fn parse_tool_ref(text: &str) -> Option<ToolRef> {
    match super::names::parse_grant(text) {
        Ok(super::names::GrantName::Tool(tool)) => Some(tool),
        _ => None,
    }
}
