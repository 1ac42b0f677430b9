//! The tonic `Storage` service for one connection (ARCHITECTURE §4,
//! §3.14): it holds the namespace the connection was bound to when it was
//! handed over or accepted, so no request can name another plugin's rows.
//! Every refusal travels as its gRPC code with the typed message.

use collegium_proto::storage::v1::{
    CreateRequest, DeleteRequest, DeleteResponse, GetRequest, PatchRequest, QueryRequest,
    QueryResponse, Record as WireRecord, UnitRequest, UnitView, storage_server::Storage,
    storage_server::StorageServer,
};
use serde_json::Value;
use tonic::{Request, Response, Status};

use super::collections::{Collection, Collections};
use super::error::StorageError;
use super::query;
use super::records::{self, Record};
use super::units;
use crate::store::{Millis, Store, StoreHandle};

/// `Storage`, bound to one plugin's namespace and collections.
#[derive(Clone)]
pub struct StorageService {
    collections: Collections,
    store: StoreHandle,
}

impl StorageService {
    pub fn new(collections: Collections, store: StoreHandle) -> Self {
        Self { collections, store }
    }

    pub fn namespace(&self) -> &str {
        self.collections.namespace()
    }

    pub fn into_server(self) -> StorageServer<Self> {
        StorageServer::new(self)
    }

    fn unknown(&self, collection: &str) -> StorageError {
        StorageError::UnknownCollection {
            namespace: self.namespace().to_owned(),
            collection: collection.to_owned(),
            declared: self
                .collections
                .names()
                .into_iter()
                .map(str::to_owned)
                .collect(),
        }
    }

    /// Runs `f` on the store thread against the named collection of this
    /// connection's namespace, refusing a collection it did not declare.
    async fn on_store<T, F>(&self, collection: &str, f: F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: FnOnce(&Store, &str, &Collection) -> Result<T, StorageError> + Send + 'static,
    {
        if self.collections.get(collection).is_none() {
            return Err(self.unknown(collection));
        }
        let collections = self.collections.clone();
        let name = collection.to_owned();
        let unknown = self.unknown(collection);
        self.store
            .call(move |store| {
                Ok(match collections.get(&name) {
                    Some(c) => f(store, collections.namespace(), c),
                    None => Err(unknown),
                })
            })
            .await?
    }
}

fn now() -> Millis {
    chrono::Utc::now().timestamp_millis()
}

/// The largest query answer sent: tonic's default limit on a message a
/// client decodes, which is what a plugin's client has unless it raised it.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

fn wire(record: &Record) -> WireRecord {
    WireRecord {
        collection: record.collection.clone(),
        id: record.id.clone(),
        data_json: Value::Object(record.stamped()).to_string(),
        created_at_unix_ms: record.created_at,
        updated_at_unix_ms: record.updated_at,
    }
}

#[tonic::async_trait]
impl Storage for StorageService {
    async fn get(&self, request: Request<GetRequest>) -> Result<Response<WireRecord>, Status> {
        let GetRequest { collection, id } = request.into_inner();
        let record = self
            .on_store(&collection, move |s, ns, c| records::get(s, ns, c, &id))
            .await?;
        Ok(Response::new(wire(&record)))
    }

    async fn create(
        &self,
        request: Request<CreateRequest>,
    ) -> Result<Response<WireRecord>, Status> {
        let CreateRequest {
            collection,
            id,
            data_json,
        } = request.into_inner();
        let data = records::object("record", &data_json)?;
        let at = now();
        let record = self
            .on_store(&collection, move |s, ns, c| {
                records::create(s, ns, c, &id, data, at)
            })
            .await?;
        Ok(Response::new(wire(&record)))
    }

    async fn patch(&self, request: Request<PatchRequest>) -> Result<Response<WireRecord>, Status> {
        let PatchRequest {
            collection,
            id,
            patch_json,
        } = request.into_inner();
        let patch = records::object("patch", &patch_json)?;
        let at = now();
        let record = self
            .on_store(&collection, move |s, ns, c| {
                records::patch(s, ns, c, &id, patch, at)
            })
            .await?;
        Ok(Response::new(wire(&record)))
    }

    async fn delete(
        &self,
        request: Request<DeleteRequest>,
    ) -> Result<Response<DeleteResponse>, Status> {
        let DeleteRequest { collection, id } = request.into_inner();
        let deleted = self
            .on_store(&collection, move |s, ns, c| records::delete(s, ns, c, &id))
            .await?;
        Ok(Response::new(DeleteResponse { deleted }))
    }

    async fn query(
        &self,
        request: Request<QueryRequest>,
    ) -> Result<Response<QueryResponse>, Status> {
        let QueryRequest {
            collection,
            conditions,
            limit,
        } = request.into_inner();
        let filters = {
            let declared = self
                .collections
                .get(&collection)
                .ok_or_else(|| self.unknown(&collection))?;
            query::parse(declared, &conditions).map_err(|problem| StorageError::InvalidQuery {
                collection: collection.clone(),
                problem,
            })?
        };
        let found = self
            .on_store(&collection, move |s, ns, c| {
                records::query(s, ns, c, &filters, limit)
            })
            .await?;
        let answer = QueryResponse {
            records: found.iter().map(wire).collect(),
        };
        // A plugin's gRPC client refuses an answer over 4 MiB, which would
        // reach it as a broken transport; said here instead, as what it
        // can change, and never cut short (A4).
        let size = prost::Message::encoded_len(&answer);
        if size > MAX_ANSWER_BYTES {
            return Err(StorageError::AnswerTooLarge {
                collection,
                records: answer.records.len(),
                size,
                limit: MAX_ANSWER_BYTES,
            }
            .into());
        }
        Ok(Response::new(answer))
    }

    async fn unit(&self, request: Request<UnitRequest>) -> Result<Response<UnitView>, Status> {
        let request = request.into_inner();
        let namespace = self.namespace().to_owned();
        let view = self
            .store
            .call(move |s| Ok(units::look_up(s, &namespace, &request)))
            .await
            .map_err(StorageError::from)??;
        Ok(Response::new(view))
    }
}
