//! The Mattermost API v4 routes the simulator serves, under `/api/v4`.

pub mod actions;
mod bots;
mod channels;
pub mod command_hooks;
pub mod commands;
mod files;
pub mod posts;
mod reactions;
pub mod system;
mod teams;
pub mod users;

use axum::Router;
use axum::routing::{delete, get, post, put};

use crate::state::AppState;
use crate::ws;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/system/ping", get(system::ping))
        .route("/config/client", get(system::client_config))
        .route("/config", get(system::config))
        .route("/config/patch", put(system::patch_config))
        .route("/users", post(users::create_user))
        .route("/users/login", post(users::login))
        .route("/users/logout", post(users::logout))
        .route("/users/ids", post(users::get_by_ids))
        .route("/users/usernames", post(users::get_by_usernames))
        .route("/users/username/{username}", get(users::get_by_username))
        .route("/users/tokens/revoke", post(users::revoke_token))
        .route(
            "/users/{user_id}",
            get(users::get_user).delete(users::deactivate),
        )
        .route("/users/{user_id}/active", put(users::update_active))
        .route(
            "/users/{user_id}/tokens",
            post(users::create_token).get(users::list_tokens),
        )
        .route("/users/{user_id}/typing", post(system::typing))
        .route("/users/{user_id}/teams", get(teams::for_user))
        .route(
            "/users/{user_id}/teams/{team_id}/channels",
            get(channels::for_user),
        )
        .route(
            "/users/{user_id}/posts/{post_id}/reactions/{emoji}",
            delete(reactions::remove),
        )
        .route("/bots", post(bots::create).get(bots::list))
        .route("/bots/{bot_id}", get(bots::get).put(bots::patch))
        .route("/bots/{bot_id}/disable", post(bots::disable))
        .route("/bots/{bot_id}/enable", post(bots::enable))
        .route("/teams", post(teams::create))
        .route("/teams/name/{name}", get(teams::get_by_name))
        .route("/teams/{team_id}", get(teams::get))
        .route("/teams/{team_id}/members", post(teams::add_member))
        .route("/teams/{team_id}/members/{user_id}", get(teams::get_member))
        .route(
            "/teams/{team_id}/members/{user_id}/schemeRoles",
            put(teams::scheme_roles),
        )
        .route(
            "/teams/{team_id}/channels/name/{name}",
            get(channels::by_name),
        )
        .route(
            "/teams/{team_id}/commands/autocomplete",
            get(commands::autocomplete),
        )
        .route("/channels", post(channels::create))
        .route("/channels/direct", post(channels::direct))
        .route("/channels/group", post(channels::group))
        .route(
            "/channels/{channel_id}",
            get(channels::get).delete(channels::archive),
        )
        .route("/channels/{channel_id}/patch", put(channels::patch))
        .route("/channels/{channel_id}/restore", post(channels::restore))
        .route(
            "/channels/{channel_id}/members",
            get(channels::members).post(channels::add),
        )
        .route(
            "/channels/{channel_id}/members/{user_id}",
            get(channels::get_member).delete(channels::remove),
        )
        .route("/channels/{channel_id}/posts", get(posts::for_channel))
        .route("/channels/{channel_id}/pinned", get(posts::pinned))
        .route("/posts", post(posts::create))
        .route("/posts/ephemeral", post(posts::ephemeral))
        .route(
            "/posts/{post_id}",
            get(posts::get).put(posts::update).delete(posts::delete),
        )
        .route("/posts/{post_id}/patch", put(posts::patch))
        .route("/posts/{post_id}/thread", get(posts::thread))
        .route("/posts/{post_id}/pin", post(posts::pin))
        .route("/posts/{post_id}/unpin", post(posts::unpin))
        .route("/posts/{post_id}/reactions", get(reactions::list))
        .route("/posts/{post_id}/files/info", get(posts::files_of))
        .route(
            "/posts/{post_id}/actions/{action_id}",
            post(actions::do_action),
        )
        .route("/reactions", post(reactions::add))
        .route("/files", post(files::upload))
        .route("/files/{file_id}", get(files::download))
        .route("/files/{file_id}/info", get(files::info))
        .route("/commands", post(commands::create).get(commands::list))
        .route("/commands/execute", post(commands::execute))
        .route(
            "/commands/{command_id}",
            get(commands::get)
                .put(commands::update)
                .delete(commands::delete),
        )
        .route(
            "/commands/{command_id}/regen_token",
            put(commands::regen_token),
        )
        .route("/actions/dialogs/open", post(actions::open_dialog))
        .route("/actions/dialogs/submit", post(actions::submit_dialog))
        .route("/websocket", get(ws::upgrade))
        .route("/websocket/", get(ws::upgrade))
}
