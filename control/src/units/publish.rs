//! Publishing a unit post (§3.15): under the acting agent's account, with
//! the role the store records framework posts by and the unit's label in
//! its props, so a post whose record a crash prevented is still found and
//! named. The post comes first; nothing is recorded unless it is up.

use crate::chat::directory::framework_post;

use super::Caller;

/// The props key a unit post carries its unit's label under.
pub const UNIT_PROP: &str = "collegium_unit";

/// Posts `message`; the post's id, or the refusal the model reads. Nothing
/// is silently truncated: a post over the server's limit is refused whole.
pub async fn publish(caller: &Caller<'_>, label: &str, message: String) -> Result<String, String> {
    let limit = caller.services.post_limit.get();
    let length = message.chars().count();
    if length > limit {
        return Err(format!(
            "The post would be {length} characters, over the server's limit of {limit}; nothing was posted or recorded. Shorten the fields and call again."
        ));
    }
    let mut post = framework_post(
        caller.channel_id.to_string(),
        message,
        "unit_post",
        Some(caller.turn_id),
    );
    post.props.insert(UNIT_PROP.into(), label.into());
    match caller.seat.rest.create_post(&post).await {
        Ok(created) => {
            #[cfg(feature = "test-hooks")]
            kill_after_post(&post.message);
            Ok(created.id)
        }
        Err(error) => {
            tracing::warn!(%error, turn = %caller.turn_id, "Mattermost refused a unit post");
            Err(format!(
                "Mattermost refused the post ({error}); nothing was posted or recorded."
            ))
        }
    }
}

/// The environment variable naming the phrase of the `test-hooks` build's
/// crash between a unit post and its record.
#[cfg(feature = "test-hooks")]
pub const KILL_AFTER_UNIT_POST: &str = "COLLEGIUM_TEST_KILL_AFTER_UNIT_POST";

/// A test hook, built only with the `test-hooks` feature the end-to-end
/// tests enable: the process kills itself with SIGKILL right after a unit
/// post containing the phrase is up and before its record, the crash §3.15
/// says the next report names.
#[cfg(feature = "test-hooks")]
fn kill_after_post(message: &str) {
    let Ok(phrase) = std::env::var(KILL_AFTER_UNIT_POST) else {
        return;
    };
    if !phrase.is_empty() && message.contains(&phrase) {
        tracing::warn!("test hook: SIGKILL between a unit post and its record");
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
