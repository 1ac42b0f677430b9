//! An in-memory `Storage` server for a plugin's own tests: it keeps records in
//! a map and records every request, so a test sees exactly what the client
//! put on the wire. The daemon's real service is tested in the control
//! crate; this one answers with the status codes the service contract names
//! (a taken id ALREADY_EXISTS, a missing one NOT_FOUND), stamps `id`,
//! `createdAt` and `updatedAt` into what it returns and refuses them in what
//! it is sent, and answers a query in (createdAt, id) order, as the daemon
//! does. It does not validate records against their collection's schema nor
//! type a query's fields: that is the daemon's, and the end-to-end tests'
//! (§3.14).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use collegium_proto::storage::v1::{
    CreateRequest, DeleteRequest, DeleteResponse, GetRequest, PatchRequest, QueryRequest,
    QueryResponse, Record, UnitRequest, UnitView, condition,
    storage_server::{Storage, StorageServer},
};
use serde_json::Value;
use tonic::{Request, Response, Status};

#[derive(Clone, Default)]
pub struct Memory {
    pub records: Arc<Mutex<BTreeMap<(String, String), Record>>>,
    pub queries: Arc<Mutex<Vec<QueryRequest>>>,
    /// The store's clock: each write is one tick later than the last, so
    /// creation order is (createdAt, id) order.
    clock: Arc<Mutex<i64>>,
    next: Arc<Mutex<u64>>,
}

impl Memory {
    /// Serves on one end of a socketpair and returns the other end's raw
    /// descriptor, as the daemon hands a child plugin fd 3.
    pub fn serve_on_pair(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()?;
        ours.set_nonblocking(true)?;
        let ours = tokio::net::UnixStream::from_std(ours)?;
        let server = StorageServer::new(self.clone());
        tokio::spawn(async move {
            let incoming = tokio_stream::once(Ok::<_, std::io::Error>(ours));
            let _ = tonic::transport::Server::builder()
                .add_service(server)
                .serve_with_incoming(incoming)
                .await;
        });
        Ok(theirs.into())
    }

    /// Every record held, as `(collection, id)` and its JSON.
    pub fn snapshot(&self) -> Vec<((String, String), String)> {
        lock(&self.records)
            .map(|records| {
                records
                    .iter()
                    .map(|(key, record)| (key.clone(), record.data_json.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every query asked, in order.
    pub fn queries(&self) -> Vec<QueryRequest> {
        lock(&self.queries).map(|q| q.clone()).unwrap_or_default()
    }
}

impl Memory {
    /// One tick of the store's clock.
    fn tick(&self) -> Result<i64, Status> {
        let mut clock = lock(&self.clock)?;
        *clock += 1;
        Ok(*clock)
    }
}

fn lock<T>(mutex: &Mutex<T>) -> Result<std::sync::MutexGuard<'_, T>, Status> {
    mutex
        .lock()
        .map_err(|_| Status::internal("a test panicked while holding the memory store"))
}

fn parse(json: &str) -> Result<Value, Status> {
    serde_json::from_str(json).map_err(|e| Status::invalid_argument(format!("not JSON: {e}")))
}

/// The record as the daemon answers it: its data with the stamps in it.
fn stamped(record: &Record) -> Record {
    let mut data = parse(&record.data_json).unwrap_or(Value::Null);
    if let Some(fields) = data.as_object_mut() {
        fields.insert("id".into(), Value::String(record.id.clone()));
        fields.insert(
            "createdAt".into(),
            Value::String(rfc3339(record.created_at_unix_ms)),
        );
        fields.insert(
            "updatedAt".into(),
            Value::String(rfc3339(record.updated_at_unix_ms)),
        );
    }
    Record {
        data_json: data.to_string(),
        ..record.clone()
    }
}

/// A stamp as the daemon writes it: an RFC 3339 UTC time in milliseconds.
fn rfc3339(at: i64) -> String {
    chrono::DateTime::from_timestamp_millis(at)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_else(|| at.to_string())
}

/// A write's fields: a JSON object holding none of the store's stamps.
fn written(json: &str, what: &str) -> Result<serde_json::Map<String, Value>, Status> {
    let Value::Object(fields) = parse(json)? else {
        return Err(Status::invalid_argument(format!(
            "the {what} is not a JSON object"
        )));
    };
    if let Some(stamp) = crate::storage::STAMPS
        .iter()
        .find(|stamp| fields.contains_key(**stamp))
    {
        return Err(Status::invalid_argument(format!(
            "`{stamp}` is stamped by the store on every record (§3.14) and cannot be written; leave it out"
        )));
    }
    Ok(fields)
}

fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn matches(data: &Value, test: &condition::Test, field: &str) -> bool {
    let value = &data[field];
    match test {
        condition::Test::EqualsJson(json) => {
            serde_json::from_str::<Value>(json).is_ok_and(|v| &v == value)
        }
        condition::Test::OneOfJson(json) => {
            serde_json::from_str::<Vec<Value>>(json).is_ok_and(|vs| vs.iter().any(|v| v == value))
        }
        condition::Test::Contains(text) => scalar_text(value)
            .to_lowercase()
            .contains(&text.to_lowercase()),
    }
}

#[tonic::async_trait]
impl Storage for Memory {
    async fn get(&self, request: Request<GetRequest>) -> Result<Response<Record>, Status> {
        let r = request.into_inner();
        lock(&self.records)?
            .get(&(r.collection, r.id.clone()))
            .map(stamped)
            .map(Response::new)
            .ok_or_else(|| Status::not_found(format!("no record {}", r.id)))
    }

    async fn create(&self, request: Request<CreateRequest>) -> Result<Response<Record>, Status> {
        let r = request.into_inner();
        let data = written(&r.data_json, "record")?;
        let id = if r.id.is_empty() {
            let mut next = lock(&self.next)?;
            *next += 1;
            format!("r{next}")
        } else {
            r.id
        };
        let mut records = lock(&self.records)?;
        let key = (r.collection.clone(), id.clone());
        if records.contains_key(&key) {
            return Err(Status::already_exists(format!("{id} is taken")));
        }
        let now = self.tick()?;
        let record = Record {
            collection: r.collection,
            id,
            data_json: Value::Object(data).to_string(),
            created_at_unix_ms: now,
            updated_at_unix_ms: now,
        };
        records.insert(key, record.clone());
        Ok(Response::new(stamped(&record)))
    }

    async fn patch(&self, request: Request<PatchRequest>) -> Result<Response<Record>, Status> {
        let r = request.into_inner();
        let patch = written(&r.patch_json, "patch")?;
        let now = self.tick()?;
        let mut records = lock(&self.records)?;
        let record = records
            .get_mut(&(r.collection, r.id.clone()))
            .ok_or_else(|| Status::not_found(r.id.clone()))?;
        let mut data = parse(&record.data_json)?;
        for (k, v) in patch {
            data[k] = v;
        }
        record.data_json = data.to_string();
        record.updated_at_unix_ms = now;
        Ok(Response::new(stamped(record)))
    }

    async fn delete(
        &self,
        request: Request<DeleteRequest>,
    ) -> Result<Response<DeleteResponse>, Status> {
        let r = request.into_inner();
        let deleted = lock(&self.records)?.remove(&(r.collection, r.id)).is_some();
        Ok(Response::new(DeleteResponse { deleted }))
    }

    async fn unit(&self, request: Request<UnitRequest>) -> Result<Response<UnitView>, Status> {
        // Units are the daemon's (§3.15); this store holds none.
        Err(Status::not_found(format!(
            "the in-memory store holds no unit {}",
            request.into_inner().reference
        )))
    }

    async fn query(
        &self,
        request: Request<QueryRequest>,
    ) -> Result<Response<QueryResponse>, Status> {
        let r = request.into_inner();
        lock(&self.queries)?.push(r.clone());
        let records = lock(&self.records)?;
        let mut found: Vec<Record> = records
            .values()
            .filter(|rec| rec.collection == r.collection)
            .filter(|rec| {
                let data = parse(&rec.data_json).unwrap_or(Value::Null);
                r.conditions
                    .iter()
                    .all(|c| c.test.as_ref().is_some_and(|t| matches(&data, t, &c.field)))
            })
            .cloned()
            .collect();
        found.sort_by(|a, b| (a.created_at_unix_ms, &a.id).cmp(&(b.created_at_unix_ms, &b.id)));
        let mut found: Vec<Record> = found.iter().map(stamped).collect();
        if let Some(limit) = r.limit {
            found.truncate(limit as usize);
        }
        Ok(Response::new(QueryResponse { records: found }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s3_14_a_records_stamps_are_rfc_3339_times_as_the_daemon_writes_them() {
        let record = Record {
            collection: "marks".into(),
            id: "m1".into(),
            data_json: r#"{"url":"u"}"#.into(),
            created_at_unix_ms: 1,
            updated_at_unix_ms: 1_795_510_800_000,
        };
        let data: Value = serde_json::from_str(&stamped(&record).data_json).expect("json");
        assert_eq!(data["id"], "m1");
        assert_eq!(data["createdAt"], "1970-01-01T00:00:00.001Z");
        assert_eq!(data["updatedAt"], "2026-11-24T09:00:00.000Z");
        assert_eq!(data["url"], "u");
    }
}
