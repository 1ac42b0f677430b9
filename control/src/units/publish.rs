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
        Ok(created) => Ok(created.id),
        Err(error) => {
            tracing::warn!(%error, turn = %caller.turn_id, "Mattermost refused a unit post");
            Err(format!(
                "Mattermost refused the post ({error}); nothing was posted or recorded."
            ))
        }
    }
}
