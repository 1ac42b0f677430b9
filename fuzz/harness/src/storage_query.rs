//! The plugin Storage query grammar (§3.14, issue 22): conditions as a
//! plugin sends them, parsed against a collection's schema, then run by the
//! real store. Properties: a parsed query names only the collection's
//! declared scalar fields by the store's own path, contains only strings,
//! and never makes the store fail or return more than its limit; whatever
//! the field names and values hold, they stay bound values.

use std::cell::RefCell;

use collegium_control::plugin_storage::Collection;
use collegium_control::plugin_storage::query::parse;
use collegium_control::store::{FilterTest, Store};
use collegium_proto::storage::v1::{Condition, condition::Test};

use crate::split;

const NAMESPACE: &str = "fuzz";
const COLLECTION: &str = "notes";
const SCHEMA: &str = r#"{"type":"object","properties":{
  "title":{"type":"string"},"note":{"type":["string","null"]},"count":{"type":"integer"},
  "score":{"type":"number"},"done":{"type":"boolean"},"tags":{"type":"array"},
  "meta":{"type":"object"}}}"#;
/// Declared, undeclared, nested and hostile field names; the fuzzer's own
/// text is tried besides these.
const FIELDS: &[&str] = &[
    "title",
    "note",
    "count",
    "score",
    "done",
    "tags",
    "meta",
    "meta.x",
    "$.title",
    "title\"; DROP TABLE plugin_records; --",
    "id",
    "createdAt",
    "",
];
const STRING_FIELDS: &[&str] = &["title", "note"];
const SCALAR_FIELDS: &[&str] = &["title", "note", "count", "score", "done"];

struct Fixture {
    collection: Collection,
    store: Store,
    _dir: tempfile::TempDir,
}

thread_local! {
    static FIXTURE: RefCell<Option<Fixture>> = const { RefCell::new(None) };
}

fn fixture() -> Fixture {
    let collection = Collection::compile(COLLECTION, SCHEMA).expect("the fixture schema compiles");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::open(&dir.path().join("store.db")).expect("a store");
    let records = [
        r#"{"title":"Rust book","note":null,"count":3,"score":1.5,"done":true,"tags":["a"],"meta":{"x":1}}"#,
        r#"{"title":"ÉCOLE","note":"b","count":-1,"score":0,"done":false,"tags":[],"meta":{}}"#,
        r#"{"title":"x'; --","note":"%_","count":0,"score":2e300,"done":false,"tags":[],"meta":{}}"#,
    ];
    for (i, data) in records.iter().enumerate() {
        let at = i64::try_from(i).expect("three records");
        store
            .insert_plugin_record(NAMESPACE, COLLECTION, &format!("r{i}"), data, at)
            .expect("a fixture record");
    }
    Fixture {
        collection,
        store,
        _dir: dir,
    }
}

pub fn run(data: &[u8]) {
    let (limit_byte, rest) = split::selector(data);
    let conditions: Vec<Condition> = split::parts(rest, 8)
        .into_iter()
        .filter(|part| !part.is_empty())
        .map(condition)
        .collect();
    FIXTURE.with(|cell| {
        let mut cell = cell.borrow_mut();
        let fixture = cell.get_or_insert_with(fixture);
        let Ok(filters) = parse(&fixture.collection, &conditions) else {
            return;
        };
        for filter in &filters {
            let named = SCALAR_FIELDS
                .iter()
                .find(|field| filter.path == format!("$.\"{field}\""));
            let field = named.unwrap_or_else(|| panic!("{} is no declared scalar", filter.path));
            if matches!(filter.test, FilterTest::Contains(_)) {
                assert!(STRING_FIELDS.contains(field), "contains on {field}");
            }
        }
        let limit = (limit_byte & 0x80 != 0).then_some(u32::from(limit_byte & 0x03));
        let found = fixture
            .store
            .query_plugin_records(NAMESPACE, COLLECTION, &filters, limit)
            .unwrap_or_else(|e| panic!("a parsed query failed in the store: {e}"));
        assert!(found.len() <= 3);
        if let Some(limit) = limit {
            assert!(found.len() <= limit as usize);
        }
    });
}

/// One condition: a selector byte chooses the field and the test, the rest
/// is the value (or, for a field the fuzzer names, `name=value`).
fn condition(part: &[u8]) -> Condition {
    let (selector, rest) = split::selector(part);
    let text = split::text(rest);
    let (field, value) = match FIELDS.get(usize::from(selector >> 4)) {
        Some(field) => ((*field).to_owned(), text),
        None => match text.split_once('=') {
            Some((field, value)) => (field.to_owned(), value.to_owned()),
            None => (text.clone(), String::new()),
        },
    };
    let test = match selector & 0x03 {
        0 => Some(Test::EqualsJson(value)),
        1 => Some(Test::OneOfJson(value)),
        2 => Some(Test::Contains(value)),
        _ => None,
    };
    Condition { field, test }
}
