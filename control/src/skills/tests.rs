//! One broken skill directory per boot refusal (§3.5), and the ones that
//! pass, read through `locate` as configuration check reads them.

use std::path::Path;

use super::*;
use crate::tools::Registry;

fn write(root: &Path, skill: &str, files: &[(&str, &str)]) {
    let dir = root.join("skills").join(skill);
    std::fs::create_dir_all(&dir).expect("mkdir");
    for (file, text) in files {
        std::fs::write(dir.join(file), text).expect("write");
    }
}

fn locate_in(root: &Path, name: &str) -> Result<Skill, SkillError> {
    locate(name, &Registry::framework(), root, root)
}

const INDEXED: &str = "---\ndescription: Write a sourced brief.\ntools: [web::fetch, workspace::write]\n---\n# Steps\n\n1. Read.\n\n## References\n\n- `style.md` — the house style\n";

#[test]
fn s3_5_a_skill_reads_its_description_tools_body_and_references() {
    let root = tempfile::tempdir().expect("tempdir");
    write(
        root.path(),
        "briefing",
        &[("SKILL.md", INDEXED), ("style.md", "Short sentences.\n")],
    );
    let skill = locate_in(root.path(), "briefing").expect("skill");
    assert_eq!(skill.description, "Write a sourced brief.");
    assert_eq!(
        skill.tools,
        vec![
            ToolRef::new("web", "fetch"),
            ToolRef::new("workspace", "write")
        ]
    );
    assert_eq!(skill.body, "# Steps\n\n1. Read.");
    assert_eq!(
        skill.references,
        vec![Reference {
            file: "style.md".into(),
            summary: "the house style".into(),
            text: "Short sentences.\n".into(),
        }]
    );
}

#[test]
fn s3_5_a_document_the_index_does_not_list_refuses_naming_the_file() {
    let root = tempfile::tempdir().expect("tempdir");
    write(
        root.path(),
        "briefing",
        &[
            ("SKILL.md", INDEXED),
            ("style.md", "x"),
            ("notes.md", "stray"),
        ],
    );
    let error = locate_in(root.path(), "briefing").expect_err("refused");
    assert!(matches!(error, SkillError::Unindexed { .. }), "{error}");
    let text = error.to_string();
    assert!(text.contains("skills/briefing/notes.md"), "{text}");
    assert!(
        text.contains("References section does not list it"),
        "{text}"
    );
}

#[test]
fn s3_5_a_subdirectory_beside_skill_md_is_unindexed_too() {
    let root = tempfile::tempdir().expect("tempdir");
    write(
        root.path(),
        "briefing",
        &[("SKILL.md", INDEXED), ("style.md", "x")],
    );
    std::fs::create_dir(root.path().join("skills/briefing/drafts")).expect("mkdir");
    let error = locate_in(root.path(), "briefing").expect_err("refused");
    assert!(error.to_string().contains("briefing/drafts"), "{error}");
}

#[test]
fn s3_5_an_indexed_reference_that_is_missing_refuses_naming_the_file() {
    let root = tempfile::tempdir().expect("tempdir");
    write(root.path(), "briefing", &[("SKILL.md", INDEXED)]);
    let error = locate_in(root.path(), "briefing").expect_err("refused");
    assert!(
        matches!(error, SkillError::MissingReference { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(
        text.contains("skills/briefing/SKILL.md lists the reference `style.md`"),
        "{text}"
    );
    assert!(
        text.contains("skills/briefing/style.md does not exist"),
        "{text}"
    );
}

#[test]
fn s3_5_a_malformed_skill_md_refuses_naming_the_file() {
    let root = tempfile::tempdir().expect("tempdir");
    let cases = [
        ("nofront", "# just text\n"),
        (
            "badtool",
            "---\ndescription: x\ntools: [fetch]\n---\nBody.\n",
        ),
        ("misnamed", "---\nname: other\ndescription: x\n---\nBody.\n"),
        (
            "unknownkey",
            "---\ndescription: x\nauthor: me\n---\nBody.\n",
        ),
        (
            "badindex",
            "---\ndescription: x\n---\nBody.\n## References\nstyle.md\n",
        ),
    ];
    for (name, text) in cases {
        write(root.path(), name, &[("SKILL.md", text)]);
        let error = locate_in(root.path(), name).expect_err(name);
        assert!(
            matches!(error, SkillError::Invalid { .. }),
            "{name}: {error}"
        );
        assert!(
            error
                .to_string()
                .contains(&format!("skills/{name}/SKILL.md")),
            "{error}"
        );
    }
}

#[test]
fn s3_5_an_unknown_skill_a_core_skill_and_an_unshipped_toolset_skill_are_refused() {
    let root = tempfile::tempdir().expect("tempdir");
    assert!(matches!(
        locate_in(root.path(), "absent"),
        Err(SkillError::Missing { .. })
    ));
    assert!(matches!(
        locate_in(root.path(), "understanding-collegium"),
        Err(SkillError::Core(_))
    ));
    assert!(matches!(
        locate_in(root.path(), "web::nothing"),
        Err(SkillError::NotShipped { .. })
    ));
    assert!(matches!(
        locate_in(root.path(), "Bad Name"),
        Err(SkillError::Malformed(_))
    ));
}

#[test]
fn s3_5_a_plugin_skill_is_read_from_the_plugin_directory() {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("bookmark/skills/saving-bookmarks");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("SKILL.md"),
        "---\ndescription: Save a bookmark.\n---\nSave it.\n",
    )
    .expect("write");
    let skill = locate(
        "bookmark::saving-bookmarks",
        &Registry::framework(),
        root.path(),
        root.path(),
    )
    .expect("skill");
    assert_eq!(skill.name, "bookmark::saving-bookmarks");
    assert_eq!(skill.description, "Save a bookmark.");
}

#[test]
fn s3_5_a_plugin_skill_its_description_does_not_declare_is_refused_at_the_handshake() {
    let skill = |name: &str| Skill {
        name: name.into(),
        description: "x".into(),
        tools: Vec::new(),
        dir: std::path::PathBuf::new(),
        body: "x".into(),
        references: Vec::new(),
    };
    let assigned = [
        skill("bookmark::saving-bookmarks"),
        skill("bookmark::pruning"),
        skill("briefing"),
        skill("bookmarks::other"),
    ];
    let declared = [crate::tools::registry::SkillDeclaration {
        name: "saving-bookmarks".into(),
        description: "Save a page.".into(),
        tools: Vec::new(),
    }];
    assert_eq!(
        locate::undeclared(&assigned, "bookmark", &declared),
        vec![
            "assigned the skill `bookmark::pruning`, which the plugin `bookmark` does not declare; it declares `saving-bookmarks`"
        ]
    );
    assert_eq!(
        locate::undeclared(&assigned[..1], "bookmark", &[]),
        vec![
            "assigned the skill `bookmark::saving-bookmarks`, which the plugin `bookmark` does not declare; it declares no skill"
        ]
    );
}
