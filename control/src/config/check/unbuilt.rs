//! Configuration this build parses but does not act on yet (A4). The file's
//! shape covers the whole specification, so an operator can write a
//! deployment once; but a key that would do nothing here is refused by name
//! rather than accepted in silence, until the feature that acts on it lands
//! and its line leaves this file.

use crate::config::model::Config;
use crate::config::problems::{KeyPath, Problems};
use crate::tools::Registry;
use crate::tools::served::any_built;

pub fn check(config: &Config, registry: &Registry, problems: &mut Problems) {
    let root = KeyPath::root();
    for namespace in config.settings.keys() {
        if let Some(toolset) = registry.toolset(namespace)
            && !any_built(registry, toolset)
        {
            problems.push(
                root.key("settings").key(namespace),
                not_acted_on(&format!("this build serves no tool of `{namespace}` yet")),
            );
        }
    }
}

fn not_acted_on(why: &str) -> String {
    format!(
        "{why}, so this would do nothing; remove it until it is (A4: nothing configured is ignored)"
    )
}
