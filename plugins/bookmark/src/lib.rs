//! The example plugin `bookmark` (§3.14, issue 22 item 7), written with the
//! SDK: `save` and `remove` stop for a person and show what they will change
//! as stored, `list` reads through the query grammar beside other reads, and
//! the skill `bookmark::saving-bookmarks` ships in `skills/`.

pub mod list;
pub mod record;
pub mod remove;
pub mod save;

use collegium_sdk::{NoSettings, Plugin, ToolBuilder};

/// The plugin's namespace: its directory's name under the plugins root.
pub const NAMESPACE: &str = "bookmark";

/// The plugin as the daemon's handshake describes it.
pub fn plugin() -> Plugin<NoSettings> {
    Plugin::new(NAMESPACE)
        .version(env!("CARGO_PKG_VERSION"))
        .collection::<record::Bookmark>()
        .tool(
            ToolBuilder::new(
                "save",
                "Saves a bookmark: an address, its title, and optionally a note and one tag. A saved address is replaced, never duplicated. Stops for a person's approval.",
            )
            .render(save::render)
            .run(save::run),
        )
        .tool(
            ToolBuilder::new(
                "list",
                "Lists saved bookmarks, oldest first: those whose title, address or note holds `contains` (any case), with the tag `tag`, at most `limit`.",
            )
            .does_not_gate()
            .concurrent()
            .retryable()
            .run(list::run),
        )
        .tool(
            ToolBuilder::new(
                "remove",
                "Removes the bookmark with the id `bookmark::list` shows. Stops for a person's approval.",
            )
            .render(remove::render)
            .run(remove::run),
        )
        .skill(
            "saving-bookmarks",
            include_str!("../skills/saving-bookmarks/SKILL.md"),
        )
}
