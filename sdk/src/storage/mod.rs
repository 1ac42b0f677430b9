//! The plugin's typed client of the daemon's `Storage` service (§3.14):
//! records in the framework's own store, scoped to the plugin's namespace by
//! the connection they travel on, validated against the collection's schema
//! on write and parsed on read. The plugin owns no table and no database
//! client; what a collection answers beyond lookup by id is one query
//! grammar ([`Query`]).

pub mod connect;
mod query;

use std::marker::PhantomData;

use collegium_proto::storage::v1::{
    CreateRequest, DeleteRequest, GetRequest, PatchRequest, Record, UnitRequest, UnitView,
    storage_client::StorageClient,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::transport::Channel;

pub use connect::{ConnectError, STORAGE_FD_ENV, from_fd, from_socket};
pub use query::Query;

/// A record type the plugin stores: its schema is declared at the handshake
/// under [`Collection::NAME`], and every record of it written or read is
/// checked against that schema by the daemon (§3.14). The store stamps
/// `id`, `createdAt` and `updatedAt` beside it; the type holds only the
/// declared top-level fields.
pub trait Collection: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static {
    /// The collection's name within the plugin's namespace.
    const NAME: &'static str;
}

/// A record as stored: the declared fields and the store's stamps.
#[derive(Debug, Clone, PartialEq)]
pub struct Stored<T> {
    pub id: String,
    pub created_at_unix_ms: i64,
    pub updated_at_unix_ms: i64,
    pub data: T,
}

/// Why a storage call failed. Every one names what it was about; none is
/// silently skipped (§3.14: a row that no longer parses is an error naming
/// it).
#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    #[error(
        "this plugin holds no storage connection: the daemon hands one over as fd 3 (COLLEGIUM_STORAGE_FD) or --storage-socket"
    )]
    Unavailable,
    #[error(
        "{collection}/{id} is taken; a record is never overwritten, so patch it or choose another id"
    )]
    Taken { collection: String, id: String },
    #[error("{collection}/{id} does not exist")]
    NotFound { collection: String, id: String },
    /// A write the collection's schema refuses, or a query outside the
    /// grammar, as the daemon worded it.
    #[error("{collection}: the store refused it: {message}")]
    Refused { collection: String, message: String },
    /// A stored record this plugin's type does not parse.
    #[error("{collection}/{id} does not parse as this plugin's record: {reason}")]
    Unparsable {
        collection: String,
        id: String,
        reason: String,
    },
    #[error("{collection}: the record does not serialise: {reason}")]
    Encode { collection: String, reason: String },
    #[error("{collection}: the storage call failed: {status}")]
    Transport {
        collection: String,
        status: tonic::Status,
    },
}

impl StorageError {
    fn from_status(collection: &str, id: &str, status: tonic::Status) -> Self {
        let collection = collection.to_string();
        let id = id.to_string();
        match status.code() {
            tonic::Code::AlreadyExists => Self::Taken { collection, id },
            tonic::Code::NotFound => Self::NotFound { collection, id },
            tonic::Code::InvalidArgument => Self::Refused {
                collection,
                message: status.message().to_string(),
            },
            // The daemon's word for a stored row that no longer parses
            // against the collection's schema.
            tonic::Code::FailedPrecondition | tonic::Code::DataLoss => Self::Unparsable {
                collection,
                id,
                reason: status.message().to_string(),
            },
            _ => Self::Transport { collection, status },
        }
    }
}

/// The plugin's storage: cheap to clone, one connection underneath.
#[derive(Clone, Debug, Default)]
pub struct Storage {
    client: Option<StorageClient<Channel>>,
}

impl Storage {
    /// Storage over `channel` (see [`from_fd`], [`from_socket`]).
    pub fn new(channel: Channel) -> Self {
        Self {
            client: Some(StorageClient::new(channel)),
        }
    }

    /// A plugin started without a connection: every call is
    /// [`StorageError::Unavailable`].
    pub fn unavailable() -> Self {
        Self { client: None }
    }

    fn client(&self) -> Result<StorageClient<Channel>, StorageError> {
        self.client.clone().ok_or(StorageError::Unavailable)
    }

    /// Stores `record` under an id the store assigns.
    pub async fn create<T: Collection>(&self, record: &T) -> Result<Stored<T>, StorageError> {
        self.create_with_id("", record).await
    }

    /// Stores `record` under `id`; a taken id is [`StorageError::Taken`],
    /// never overwritten.
    pub async fn create_with_id<T: Collection>(
        &self,
        id: &str,
        record: &T,
    ) -> Result<Stored<T>, StorageError> {
        let data_json = encode(T::NAME, record)?;
        let stored = self
            .client()?
            .create(CreateRequest {
                collection: T::NAME.into(),
                id: id.into(),
                data_json,
            })
            .await
            .map_err(|s| StorageError::from_status(T::NAME, id, s))?
            .into_inner();
        decode(stored)
    }

    /// The record `id`, or none.
    pub async fn get<T: Collection>(&self, id: &str) -> Result<Option<Stored<T>>, StorageError> {
        let answer = self
            .client()?
            .get(GetRequest {
                collection: T::NAME.into(),
                id: id.into(),
            })
            .await;
        match answer {
            Ok(record) => decode(record.into_inner()).map(Some),
            Err(status) if status.code() == tonic::Code::NotFound => Ok(None),
            Err(status) => Err(StorageError::from_status(T::NAME, id, status)),
        }
    }

    /// Merges `patch` (a JSON object of top-level fields) into the record
    /// `id`; the store parses the whole again, so no patch leaves an invalid
    /// record.
    pub async fn patch<T: Collection>(
        &self,
        id: &str,
        patch: serde_json::Value,
    ) -> Result<Stored<T>, StorageError> {
        if !patch.is_object() {
            return Err(StorageError::Encode {
                collection: T::NAME.into(),
                reason: "a patch is a JSON object of top-level fields".into(),
            });
        }
        let stored = self
            .client()?
            .patch(PatchRequest {
                collection: T::NAME.into(),
                id: id.into(),
                patch_json: patch.to_string(),
            })
            .await
            .map_err(|s| StorageError::from_status(T::NAME, id, s))?
            .into_inner();
        decode(stored)
    }

    /// Deletes the record `id`; whether there was one.
    pub async fn delete<T: Collection>(&self, id: &str) -> Result<bool, StorageError> {
        let answer = self
            .client()?
            .delete(DeleteRequest {
                collection: T::NAME.into(),
                id: id.into(),
            })
            .await
            .map_err(|s| StorageError::from_status(T::NAME, id, s))?;
        Ok(answer.into_inner().deleted)
    }

    /// The work unit `reference` (`U-3`), read only (§3.14, §3.15): found
    /// only among the units the calling agent created or was assigned in
    /// the turn's channel, and only while the call `turn_id`/`call_id` is in
    /// flight; none where it is absent. Bodies call
    /// [`Context::unit`](crate::Context::unit).
    pub async fn unit(
        &self,
        turn_id: &str,
        call_id: &str,
        reference: &str,
    ) -> Result<Option<UnitView>, StorageError> {
        let answer = self
            .client()?
            .unit(UnitRequest {
                turn_id: turn_id.into(),
                call_id: call_id.into(),
                reference: reference.into(),
            })
            .await;
        match answer {
            Ok(view) => Ok(Some(view.into_inner())),
            Err(status) if status.code() == tonic::Code::NotFound => Ok(None),
            Err(status) => Err(StorageError::from_status("units", reference, status)),
        }
    }

    /// A query over the collection of `T`: add conditions, then
    /// [`Query::fetch`].
    pub fn query<T: Collection>(&self) -> Query<T> {
        Query::new(self.clone())
    }
}

fn encode<T: Collection>(collection: &str, record: &T) -> Result<String, StorageError> {
    serde_json::to_string(record).map_err(|e| StorageError::Encode {
        collection: collection.into(),
        reason: e.to_string(),
    })
}

/// The fields the store stamps on every record (§3.14). The daemon returns
/// them in the record's JSON as well as beside it; they are [`Stored`]'s, not
/// the plugin's type's, so a type that denies unknown fields still parses.
pub const STAMPS: [&str; 3] = ["id", "createdAt", "updatedAt"];

fn decode<T: Collection>(record: Record) -> Result<Stored<T>, StorageError> {
    let unparsable = |reason: String| StorageError::Unparsable {
        collection: record.collection.clone(),
        id: record.id.clone(),
        reason,
    };
    let mut value: serde_json::Value =
        serde_json::from_str(&record.data_json).map_err(|e| unparsable(e.to_string()))?;
    if let Some(object) = value.as_object_mut() {
        for stamp in STAMPS {
            object.remove(stamp);
        }
    }
    let data = serde_json::from_value(value).map_err(|e| unparsable(e.to_string()))?;
    Ok(Stored {
        id: record.id,
        created_at_unix_ms: record.created_at_unix_ms,
        updated_at_unix_ms: record.updated_at_unix_ms,
        data,
    })
}

/// A marker for the collection a [`Query`] reads.
type Of<T> = PhantomData<fn() -> T>;
