use super::*;

fn open() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open(&dir.path().join("s.db")).expect("open");
    (dir, store)
}

const ORIGIN: MemoryOrigin<'static> = MemoryOrigin {
    turn_id: "t1",
    channel_id: "c1",
};

/// Keys from a fixed list, so a test decides what the references share.
fn keys(list: &[&str]) -> impl FnMut() -> String {
    let mut list: Vec<String> = list.iter().rev().map(ToString::to_string).collect();
    move || list.pop().expect("a key left")
}

fn write(store: &mut Store, description: &str, key: &str, now: Millis, cap: u64) -> MemoryWritten {
    store
        .write_memory("mira", description, "body", ORIGIN, now, cap, keys(&[key]))
        .expect("write")
}

#[test]
fn s3_6_a_write_records_provenance_and_the_turn_sees_it() {
    let (_dir, mut store) = open();
    let written = write(&mut store, "Ana likes PDF", "abcdef0123456789", 100, 10);
    let entry = written.entry;
    assert_eq!(entry.reference(), "mabcdef");
    assert_eq!(
        (entry.revision, entry.written_at, entry.last_read_at),
        (1, 100, 100)
    );
    assert_eq!(entry.provenance_turn_id, "t1");
    assert_eq!(entry.written_channel_id, "c1");
    assert_eq!(store.memory_seen("t1", entry.id).expect("seen"), Some(1));
    assert_eq!(store.memory_seen("t2", entry.id).expect("seen"), None);
    assert!(written.evicted.is_empty());
}

#[test]
fn s3_6_eviction_takes_the_least_recently_read() {
    let (_dir, mut store) = open();
    let a = write(&mut store, "a", "aaaaaa0000000000", 100, 3).entry;
    let b = write(&mut store, "b", "bbbbbb0000000000", 200, 3).entry;
    let c = write(&mut store, "c", "cccccc0000000000", 300, 3).entry;
    // a is read after b was written: b is now the one read longest ago.
    store.mark_memory_read("t2", a.id, 1, 400).expect("read");
    let d = write(&mut store, "d", "dddddd0000000000", 500, 3);
    assert_eq!(d.evicted, vec![b]);
    let left: Vec<String> = store
        .memories_of("mira")
        .expect("list")
        .into_iter()
        .map(|e| e.description)
        .collect();
    assert_eq!(left, ["a", "c", "d"]);
    assert_eq!(store.memory_count("mira").expect("count"), 3);
    let _ = c;
}

#[test]
fn s3_6_a_key_whose_reference_the_agent_holds_is_not_used() {
    let (_dir, mut store) = open();
    write(&mut store, "a", "abcdef0000000000", 100, 10);
    let second = store
        .write_memory(
            "mira",
            "b",
            "body",
            ORIGIN,
            200,
            10,
            keys(&["abcdef1111111111", "abcd990000000000"]),
        )
        .expect("write");
    assert_eq!(second.entry.reference(), "mabcd99");
    // A prefix both share matches both: the resolver refuses it.
    assert_eq!(
        store
            .memories_with_prefix("mira", "abcd")
            .expect("match")
            .len(),
        2
    );
    assert_eq!(
        store
            .memories_with_prefix("mira", "abcde")
            .expect("match")
            .len(),
        1
    );
    assert!(
        store
            .memories_with_prefix("ola", "abcd")
            .expect("match")
            .is_empty()
    );
}

#[test]
fn s3_6_a_revision_compares_and_swaps_on_the_revision() {
    let (_dir, mut store) = open();
    let entry = write(&mut store, "a", "abcdef0000000000", 100, 10).entry;
    let change = MemoryChange {
        body: Some("body two".into()),
        seen: true,
        ..MemoryChange::default()
    };
    let second = MemoryOrigin {
        turn_id: "t2",
        channel_id: "c2",
    };
    let revised = store
        .revise_memory("mira", entry.id, 1, &change, second, 200)
        .expect("revise")
        .expect("at revision 1");
    assert_eq!(revised.revision, 2);
    assert_eq!(revised.description, "a");
    assert_eq!(revised.written_at, 100);
    assert_eq!(revised.written_channel_id, "c1");
    assert_eq!(revised.provenance_channel_id, "c2");
    assert_eq!(revised.last_revised_at, Some(200));
    assert_eq!(revised.revisions(), 1);
    assert_eq!(store.memory_seen("t2", entry.id).expect("seen"), Some(2));
    // The same expected revision again misses: the entry has moved on.
    assert_eq!(
        store
            .revise_memory("mira", entry.id, 1, &change, second, 300)
            .expect("revise"),
        None
    );
    // Another agent's entry is none of this agent's.
    assert_eq!(store.memory("ola", entry.id).expect("read"), None);
    assert!(!store.delete_memory("mira", entry.id, 1).expect("delete"));
    assert!(store.delete_memory("mira", entry.id, 2).expect("delete"));
    assert_eq!(store.memory("mira", entry.id).expect("read"), None);
}

/// Two connections (two channels' turns) append to one entry at once; each
/// re-reads and re-applies on a miss, and both appends are kept (§3.6).
#[test]
fn s3_6_two_turns_revising_one_entry_at_once_keep_both_edits() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("s.db");
    let id = {
        let mut store = Store::open(&path).expect("open");
        write(&mut store, "log", "abcdef0000000000", 100, 10)
            .entry
            .id
    };
    let appender = |channel: &'static str| {
        let path = path.clone();
        std::thread::spawn(move || {
            let mut store = Store::open(&path).expect("open");
            let origin = MemoryOrigin {
                turn_id: channel,
                channel_id: channel,
            };
            for n in 0..20 {
                loop {
                    let entry = store.memory("mira", id).expect("read").expect("there");
                    let change = MemoryChange {
                        body: Some(format!("{}\n{channel}-{n}", entry.body)),
                        ..MemoryChange::default()
                    };
                    if store
                        .revise_memory("mira", id, entry.revision, &change, origin, 200)
                        .expect("revise")
                        .is_some()
                    {
                        break;
                    }
                }
            }
        })
    };
    let (one, two) = (appender("c1"), appender("c2"));
    one.join().expect("c1");
    two.join().expect("c2");
    let store = Store::open(&path).expect("open");
    let entry = store.memory("mira", id).expect("read").expect("there");
    assert_eq!(entry.revision, 41);
    for channel in ["c1", "c2"] {
        for n in 0..20 {
            assert!(
                entry.body.lines().any(|l| l == format!("{channel}-{n}")),
                "{channel}-{n} lost"
            );
        }
    }
}
