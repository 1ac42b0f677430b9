use std::os::unix::fs::{PermissionsExt, symlink};

use super::*;

fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    let workspace = Workspace::open(dir.path()).expect("open");
    (dir, workspace)
}

fn refused<T: std::fmt::Debug>(result: Result<T, Refusal>) -> String {
    result.expect_err("refused").0
}

#[test]
fn a2_a_written_file_is_read_back_group_readable_in_made_directories() {
    let (dir, ws) = workspace();
    let said = write(&ws, "notes/week/plan.md", "ship on Friday\n").expect("write");
    assert_eq!(
        said,
        "Wrote 15 bytes to `notes/week/plan.md` in your workspace."
    );
    assert_eq!(
        read(&ws, "notes/week/plan.md", 0, None, true).expect("read"),
        "ship on Friday\n"
    );
    let mode = std::fs::metadata(dir.path().join("notes/week/plan.md"))
        .expect("file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o640, "the agent's group may read it");
    write(&ws, "notes/week/plan.md", "moved to Monday").expect("rewrite");
    assert_eq!(
        read(&ws, "notes/week/plan.md", 0, None, true).expect("read"),
        "moved to Monday"
    );
    assert!(
        std::fs::read_dir(dir.path().join("notes/week"))
            .expect("dir")
            .all(|e| !e
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .ends_with(".part")),
        "nothing half-written is left behind"
    );
}

#[test]
fn s6_1_every_escape_is_refused_as_a_result() {
    let (dir, ws) = workspace();
    std::fs::write(dir.path().join("a.txt"), "inside").expect("file");
    symlink("/etc", dir.path().join("out")).expect("link out");
    symlink("a.txt", dir.path().join("alias")).expect("link in");
    symlink("/proc/self/root", dir.path().join("magic")).expect("magic link");
    symlink("/proc/self/fd", dir.path().join("fds")).expect("fd link");
    assert!(refused(read(&ws, "../a.txt", 0, None, true)).contains("climbs with `..`"));
    assert!(refused(read(&ws, "/etc/passwd", 0, None, true)).contains("is an absolute path"));
    assert!(
        refused(read(&ws, "out/passwd", 0, None, true)).contains("leads outside your workspace")
    );
    assert!(
        refused(read(&ws, "magic/etc/passwd", 0, None, true)).contains("outside your workspace")
    );
    assert!(refused(read(&ws, "fds/0", 0, None, true)).contains("outside your workspace"));
    assert!(refused(read(&ws, "alias", 0, None, true)).contains("symbolic link"));
    assert!(refused(write(&ws, "out/evil", "x")).contains("symbolic link"));
    assert!(refused(write(&ws, "alias", "x")).contains("symbolic link"));
    assert!(refused(write(&ws, "../evil", "x")).contains("climbs"));
    assert!(refused(write(&ws, "/tmp/evil", "x")).contains("absolute"));
    assert!(refused(list(&ws, "out", 1, &Caps::default())).contains("symbolic link"));
    assert!(refused(grep(&ws, "root", "out/passwd", &Caps::default())).contains("outside"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("file"),
        "inside",
        "the link's target is untouched"
    );
    assert!(!std::path::Path::new("/etc/evil").exists());
    assert!(
        stat(&ws, "alias")
            .expect("stat")
            .contains("symbolic link to `a.txt` (not followed)")
    );
}

#[test]
fn s3_4_binary_files_are_refused_and_long_reads_say_where_they_stand() {
    let (dir, ws) = workspace();
    std::fs::write(dir.path().join("image.bin"), [0u8, 159, 146, 150]).expect("binary");
    assert!(refused(read(&ws, "image.bin", 0, None, true)).contains("binary file (4 bytes)"));
    std::fs::write(dir.path().join("long.txt"), "x".repeat(25)).expect("long");
    assert_eq!(
        read(&ws, "long.txt", 10, Some(5), true).expect("window"),
        "[`long.txt`, characters 10–15 of 25; read on from offset 15]\nxxxxx"
    );
    assert!(refused(read(&ws, "long.txt", 30, None, true)).contains("past its end"));
    assert!(refused(read(&ws, "missing.txt", 0, None, true)).contains("There is no `missing.txt`"));
}

#[test]
fn s3_4_list_find_and_grep_walk_without_following_links_and_say_where_they_stop() {
    let (dir, ws) = workspace();
    std::fs::create_dir_all(dir.path().join("src/deep")).expect("dirs");
    std::fs::write(dir.path().join("src/a.rs"), "fn main() {}\n// TODO one\n").expect("a");
    std::fs::write(dir.path().join("src/deep/b.rs"), "// TODO two\n").expect("b");
    std::fs::write(dir.path().join("src/blob"), [0u8, 1, 2]).expect("blob");
    std::fs::write(dir.path().join("readme.md"), "hello\n").expect("readme");
    symlink("/etc", dir.path().join("etc")).expect("link");
    let caps = Caps::default();
    assert_eq!(
        list(&ws, "", 2, &caps).expect("list"),
        "etc (symbolic link, not followed)\nreadme.md\nsrc/\n  a.rs\n  blob\n  deep/"
    );
    let small = Caps {
        list_entries: 2,
        find_matches: 1,
        grep_hits: 1,
    };
    assert!(list(&ws, "", 2, &small).expect("list").ends_with(
        "[The list stops at 2 entries; list a subdirectory or less depth to see the rest.]"
    ));
    assert_eq!(
        find(&ws, "**/*.rs", &caps).expect("find"),
        "src/a.rs\nsrc/deep/b.rs"
    );
    assert!(
        find(&ws, "**/*.rs", &small)
            .expect("find")
            .contains("stops at 1 paths")
    );
    assert!(
        find(&ws, "etc/**", &caps)
            .expect("find")
            .starts_with("Nothing"),
        "never into a link"
    );
    assert_eq!(
        grep(&ws, "TODO", "", &caps).expect("grep"),
        "src/a.rs:2: // TODO one\nsrc/deep/b.rs:1: // TODO two\n[1 binary or oversized file skipped.]"
    );
    assert!(
        grep(&ws, "TODO", "src", &small)
            .expect("grep")
            .contains("stops at 1 matching lines")
    );
    assert!(refused(grep(&ws, "(", "", &caps)).contains("not a regular expression"));
}

#[test]
fn s3_4_a_file_too_large_to_read_names_grep_only_to_an_agent_that_holds_it() {
    let (dir, ws) = workspace();
    let file = std::fs::File::create(dir.path().join("huge.log")).expect("huge");
    file.set_len(read::FILE_MAX + 1).expect("sparse length");
    assert!(refused(read(&ws, "huge.log", 0, None, true)).contains("workspace::grep"));
    let without = refused(read(&ws, "huge.log", 0, None, false));
    assert!(without.contains("over the"), "{without}");
    assert!(!without.contains("workspace::grep"), "{without}");
}
