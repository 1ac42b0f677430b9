//! Every refusal the `Storage` service answers with, typed, each message
//! naming what to do instead (§3.14), and the gRPC code it travels as.

use tonic::{Code, Status};

use super::query::InvalidQuery;
use crate::store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error(
        "the plugin `{namespace}` declares no storage collection `{collection}`; it declares: {}",
        if declared.is_empty() { "none".to_owned() } else { declared.join(", ") }
    )]
    UnknownCollection {
        namespace: String,
        collection: String,
        declared: Vec<String>,
    },
    #[error("`{collection}` holds no record `{id}`; create it, or query the collection for its id")]
    NotFound { collection: String, id: String },
    #[error(
        "`{collection}` already holds a record `{id}`, and a taken id is never overwritten (§3.14); patch it, or create with another id or none"
    )]
    Taken { collection: String, id: String },
    #[error(
        "the {what} is not a JSON object: {detail}; send one object of the collection's top-level fields"
    )]
    NotAnObject { what: &'static str, detail: String },
    #[error(
        "`{field}` is stamped by the store on every record (§3.14) and cannot be written; leave it out"
    )]
    Stamped { field: String },
    #[error(
        "the record id {id:?} is {problem}; use at most {max} characters and no control characters, or send none and the store assigns one"
    )]
    BadId {
        id: String,
        problem: &'static str,
        max: usize,
    },
    #[error(
        "the record for `{collection}` is {size} bytes, over the {limit}-byte limit of a plugin record; store less in one record, or split it"
    )]
    TooLarge {
        collection: String,
        size: usize,
        limit: usize,
    },
    #[error(
        "{} does not fit the schema of `{collection}`, and nothing was written:\n  - {}",
        match id { Some(id) => format!("the record `{id}` as patched"), None => "the record".to_owned() },
        problems.join("\n  - ")
    )]
    Invalid {
        collection: String,
        id: Option<String>,
        problems: Vec<String>,
    },
    #[error("invalid query on `{collection}`: {problem}")]
    InvalidQuery {
        collection: String,
        problem: InvalidQuery,
    },
    #[error(
        "the stored record `{id}` of `{collection}` no longer parses against the collection's schema (rows outlive the schema that wrote them, §3.14):\n  - {}\nfix the schema to accept it, or delete the record",
        problems.join("\n  - ")
    )]
    Unparsable {
        collection: String,
        id: String,
        problems: Vec<String>,
    },
    #[error(
        "the query on `{collection}` matched {records} records, {size} bytes in one answer, over the {limit}-byte limit of an answer; give a limit, or narrow the conditions"
    )]
    AnswerTooLarge {
        collection: String,
        records: usize,
        size: usize,
        limit: usize,
    },
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
}

impl StorageError {
    pub fn code(&self) -> Code {
        match self {
            Self::NotFound { .. } => Code::NotFound,
            Self::Taken { .. } => Code::AlreadyExists,
            Self::Unparsable { .. } => Code::FailedPrecondition,
            Self::Store(_) => Code::Unavailable,
            Self::UnknownCollection { .. }
            | Self::NotAnObject { .. }
            | Self::Stamped { .. }
            | Self::BadId { .. }
            | Self::TooLarge { .. }
            | Self::AnswerTooLarge { .. }
            | Self::Invalid { .. }
            | Self::InvalidQuery { .. } => Code::InvalidArgument,
        }
    }
}

impl From<StorageError> for Status {
    fn from(error: StorageError) -> Self {
        Status::new(error.code(), error.to_string())
    }
}
