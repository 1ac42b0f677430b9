//! Posts, threads, paging, pins and ephemeral posts (contract §A.4, §A.5,
//! §A.7).

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use mattermost_wire::model::{
    EphemeralPost, FileInfo, JsonMap, NewPost, Post, PostList, PostPatch, StatusOk,
};
use serde::Deserialize;
use serde_json::Value;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, JsonBody};
use crate::posting::{self, Outbound, deliver, sanitize};
use crate::state::{AppState, Data};

/// How long a repeated `pending_post_id` returns the post it made.
const PENDING_POST_WINDOW_MS: i64 = 30_000;

pub async fn create(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(new): JsonBody<NewPost>,
) -> ApiResult<(StatusCode, Json<Post>)> {
    let now = sim.clock.now();
    // Mattermost checks the caller may post here before it looks for a retry.
    sim.data()
        .postable_channel(&new.channel_id, &caller.user_id)?;
    if let Some(earlier) = earlier_post(&sim, &new.pending_post_id, &caller.user_id, now) {
        return Ok((StatusCode::CREATED, Json(earlier)));
    }
    let pending = new.pending_post_id.clone();
    let (post, outbound) = {
        let mut data = sim.data();
        let (post, outbound) = posting::create(&mut data, &sim.hub, &caller.user_id, new, now)?;
        (sanitize(&data, &post), outbound)
    };
    if !pending.is_empty() {
        sim.transient()
            .pending_posts
            .insert(pending, (post.id.clone(), now));
    }
    deliver(&sim, outbound);
    Ok((StatusCode::CREATED, Json(post)))
}

/// The post an earlier request with the same `pending_post_id` made, as it is
/// stored (no pending id), while Mattermost's 30 s window lasts and if the
/// caller may read it; otherwise a new post is made (contract §A.4).
fn earlier_post(sim: &AppState, pending: &str, user_id: &str, now: i64) -> Option<Post> {
    if pending.is_empty() {
        return None;
    }
    let (post_id, at) = sim.transient().pending_posts.get(pending).cloned()?;
    if now - at >= PENDING_POST_WINDOW_MS {
        return None;
    }
    let data = sim.data();
    let post = readable_post(&data, &post_id, user_id).ok()?;
    Some(sanitize(&data, &post))
}

/// The post, if the caller may read its channel.
fn readable_post(data: &Data, post_id: &str, user_id: &str) -> ApiResult<Post> {
    let post = data.post(post_id)?.clone();
    data.readable_channel(&post.channel_id, user_id)?;
    Ok(post)
}

pub async fn get(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<Post>> {
    let data = sim.data();
    let post = readable_post(&data, &post_id, &caller.user_id)?;
    Ok(Json(sanitize(&data, &post)))
}

/// Props that say who made a post: Mattermost 11 carries them over any
/// replacement of the props map, so a client can neither drop nor forge them.
const IDENTITY_PROPS: &[&str] = &[
    "from_bot",
    "from_webhook",
    "from_oauth_app",
    "from_plugin",
    "silent_notification",
];

fn keep_identity(previous: &JsonMap, props: &mut JsonMap) {
    for key in IDENTITY_PROPS {
        match previous.get(*key) {
            Some(value) => {
                props.insert((*key).to_string(), value.clone());
            }
            None => {
                props.remove(*key);
            }
        }
    }
}

/// The post `user_id` may edit now, as Mattermost's patch and update decide:
/// a missing post is masked as a permission error; only the author (or an
/// admin, who holds `edit_others_posts`) may edit; deleted and system posts
/// are refused; and `PostEditTimeLimit` applies.
fn editable(data: &Data, post_id: &str, user_id: &str, now: i64) -> ApiResult<Post> {
    let post = data.posts.get(post_id).ok_or_else(ApiError::forbidden)?;
    if !(post.user_id == user_id || data.is_admin(user_id)) {
        return Err(ApiError::forbidden());
    }
    if post.delete_at != 0 {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.post.update_post.permissions_details.app_error",
            "Already deleted.",
        ));
    }
    if post.is_system() {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.post.update_post.system_message.app_error",
            "Unable to update system message.",
        ));
    }
    within_edit_window(data, post, now)?;
    Ok(post.clone())
}

/// `ServiceSettings.PostEditTimeLimit` (seconds; -1 unlimited).
fn within_edit_window(data: &Data, post: &Post, now: i64) -> ApiResult<()> {
    let limit = data.settings.post_edit_time_limit;
    if limit >= 0 && now > post.create_at.saturating_add(limit.saturating_mul(1000)) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "api.post.update_post.permissions_time_limit.app_error",
            format!("Post edit is only allowed for {limit} seconds."),
        ));
    }
    Ok(())
}

pub async fn patch(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
    JsonBody(patch): JsonBody<PostPatch>,
) -> ApiResult<Json<Post>> {
    let now = sim.clock.now();
    let (post, outbound) = {
        let mut data = sim.data();
        editable(&data, &post_id, &caller.user_id, now)?;
        let (post, outbound) = posting::update(&mut data, &post_id, now, |post| {
            if let Some(message) = patch.message {
                post.message = message;
            }
            // A present `props` replaces the whole map, identity aside.
            if let Some(mut props) = patch.props {
                keep_identity(&post.props, &mut props);
                post.props = props;
            }
            if let Some(file_ids) = patch.file_ids {
                post.file_ids = file_ids;
            }
            if let Some(pinned) = patch.is_pinned {
                post.is_pinned = pinned;
            }
            if let Some(has_reactions) = patch.has_reactions {
                post.has_reactions = has_reactions;
            }
            Ok(())
        })?;
        (sanitize(&data, &post), outbound)
    };
    deliver(&sim, outbound);
    Ok(Json(post))
}

/// `PUT /posts/{id}`: a full update; the body's id must be the path's.
pub async fn update(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
    JsonBody(body): JsonBody<Post>,
) -> ApiResult<Json<Post>> {
    if body.id != post_id {
        return Err(ApiError::invalid_param("id"));
    }
    let now = sim.clock.now();
    let (post, outbound) = {
        let mut data = sim.data();
        editable(&data, &post_id, &caller.user_id, now)?;
        let (post, outbound) = posting::update(&mut data, &post_id, now, |post| {
            let mut props = body.props;
            keep_identity(&post.props, &mut props);
            post.message = body.message;
            post.props = props;
            Ok(())
        })?;
        (sanitize(&data, &post), outbound)
    };
    deliver(&sim, outbound);
    Ok(Json(post))
}

/// `DELETE /posts/{id}`: a soft delete of the post and, for a root, its
/// replies (`delete_at`, `update_at`, `props.deleteBy`), announced by one
/// `post_deleted` carrying the post as it was before (contract §A.4).
pub async fn delete(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    let now = sim.clock.now();
    let outbound = {
        let mut data = sim.data();
        let before = data.post(&post_id)?.clone();
        // `delete_others_posts` belongs to system admins and, in a team's
        // channels, to its team admins (the default scheme); a direct or
        // group message has no team, so only the author or a system admin.
        let team_id = data
            .channel(&before.channel_id)
            .map(|c| c.team_id.clone())
            .unwrap_or_default();
        let team_admin = !team_id.is_empty()
            && data
                .team_members
                .get(&crate::state::pair(&team_id, &caller.user_id))
                .is_some_and(|m| m.scheme_admin && m.delete_at == 0);
        if !(before.user_id == caller.user_id || data.is_admin(&caller.user_id) || team_admin) {
            return Err(ApiError::forbidden());
        }
        let doomed: Vec<String> = data
            .posts
            .values()
            .filter(|p| p.id == post_id || (p.root_id == post_id && p.delete_at == 0))
            .map(|p| p.id.clone())
            .collect();
        for id in doomed {
            if let Some(p) = data.posts.get_mut(&id) {
                p.delete_at = now;
                p.update_at = now;
                p.props
                    .insert("deleteBy".into(), Value::String(caller.user_id.clone()));
            }
        }
        posting::bump_root(&mut data, &before.root_id, now);
        posting::post_event(&data, "post_deleted", &before)
    };
    deliver(&sim, outbound);
    Ok(Json(StatusOk::ok()))
}

pub async fn thread(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<PostList>> {
    let data = sim.data();
    let post = readable_post(&data, &post_id, &caller.user_id)?;
    let root_id = if post.root_id.is_empty() {
        post.id.clone()
    } else {
        post.root_id.clone()
    };
    let mut posts: Vec<&Post> = data
        .posts
        .values()
        .filter(|p| p.delete_at == 0 && (p.id == root_id || p.root_id == root_id))
        .collect();
    posts.sort_by(|a, b| (b.create_at, &b.id).cmp(&(a.create_at, &a.id)));
    Ok(Json(list_of(&data, &posts, Extras::Threads)))
}

/// Which posts beyond `order` a post list carries in `posts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Extras {
    /// Every live post of each thread the page touches (a reply's root and
    /// its other replies, a root's replies): the page modes.
    Threads,
    /// The roots of the replies listed: the `since` mode.
    Roots,
}

/// A post list: `order` as given, and in `posts` those posts plus the
/// `extras`, which are not in `order`.
fn list_of(data: &Data, ordered: &[&Post], extras: Extras) -> PostList {
    let mut list = PostList::default();
    for post in ordered {
        list.posts.insert(post.id.clone(), sanitize(data, post));
    }
    list.order = ordered.iter().map(|p| p.id.clone()).collect();
    let roots: Vec<&str> = ordered
        .iter()
        .map(|p| {
            if p.root_id.is_empty() {
                p.id.as_str()
            } else {
                p.root_id.as_str()
            }
        })
        .collect();
    for post in data.posts.values().filter(|p| p.delete_at == 0) {
        let wanted = match extras {
            Extras::Threads => {
                roots.contains(&post.id.as_str()) || roots.contains(&post.root_id.as_str())
            }
            Extras::Roots => roots.contains(&post.id.as_str()),
        };
        if wanted && !list.posts.contains_key(&post.id) {
            list.posts.insert(post.id.clone(), sanitize(data, post));
        }
    }
    list
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PageQuery {
    page: usize,
    per_page: Option<usize>,
    since: i64,
    after: String,
    before: String,
}

pub async fn for_channel(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
    Query(query): Query<PageQuery>,
) -> ApiResult<Json<PostList>> {
    let data = sim.data();
    data.readable_channel(&channel_id, &caller.user_id)?;
    let per_page = query.per_page.unwrap_or(60).clamp(1, 200);
    let newest_first = |a: &&Post, b: &&Post| (b.create_at, &b.id).cmp(&(a.create_at, &a.id));
    let in_channel = |p: &&Post| p.channel_id == channel_id;

    // `since` wins over `after`, which wins over `before` (contract §A.4).
    if query.since > 0 {
        let mut changed: Vec<&Post> = data
            .posts
            .values()
            .filter(in_channel)
            .filter(|p| p.update_at > query.since)
            .collect();
        changed.sort_by(newest_first);
        changed.truncate(1000);
        return Ok(Json(list_of(&data, &changed, Extras::Roots)));
    }
    let live: Vec<&Post> = {
        let mut live: Vec<&Post> = data
            .posts
            .values()
            .filter(in_channel)
            .filter(|p| p.delete_at == 0)
            .collect();
        live.sort_by(newest_first);
        live
    };
    let mut list = if !query.after.is_empty() || !query.before.is_empty() {
        let (anchor, after) = if query.after.is_empty() {
            (&query.before, false)
        } else {
            (&query.after, true)
        };
        if !crate::ids::is_valid(anchor) {
            return Err(ApiError::invalid_param(if after {
                "after"
            } else {
                "before"
            }));
        }
        // An unknown anchor yields nothing; a deleted one still anchors.
        let Some(anchor_at) = data.posts.get(anchor.as_str()).map(|p| p.create_at) else {
            return Ok(Json(PostList::default()));
        };
        if after {
            // Strictly newer: a post in the anchor's millisecond is never returned.
            let mut newer: Vec<&Post> = live
                .iter()
                .copied()
                .filter(|p| p.create_at > anchor_at)
                .collect();
            newer.reverse();
            let start = (query.page * per_page).min(newer.len());
            let mut window: Vec<&Post> = newer[start..(start + per_page).min(newer.len())].to_vec();
            let has_next = newer.len() > start + per_page;
            window.reverse();
            let mut list = list_of(&data, &window, Extras::Threads);
            list.has_next = has_next;
            list
        } else {
            let older: Vec<&Post> = live
                .iter()
                .copied()
                .filter(|p| p.create_at < anchor_at)
                .collect();
            let start = (query.page * per_page).min(older.len());
            let window = &older[start..(start + per_page).min(older.len())];
            let mut list = list_of(&data, window, Extras::Threads);
            list.has_next = older.len() > start + per_page;
            list
        }
    } else {
        let start = (query.page * per_page).min(live.len());
        let window = &live[start..(start + per_page).min(live.len())];
        let mut list = list_of(&data, window, Extras::Threads);
        list.has_next = live.len() > start + per_page;
        list.prev_post_id = live
            .get(start + per_page)
            .map(|p| p.id.clone())
            .unwrap_or_default();
        list.next_post_id = start
            .checked_sub(1)
            .and_then(|i| live.get(i))
            .map(|p| p.id.clone())
            .unwrap_or_default();
        list
    };
    list.first_inaccessible_post_time = 0;
    Ok(Json(list))
}

pub async fn pinned(
    State(sim): State<AppState>,
    caller: Caller,
    Path(channel_id): Path<String>,
) -> ApiResult<Json<PostList>> {
    let data = sim.data();
    data.readable_channel(&channel_id, &caller.user_id)?;
    let mut pinned: Vec<&Post> = data
        .posts
        .values()
        .filter(|p| p.channel_id == channel_id && p.delete_at == 0 && p.is_pinned)
        .collect();
    pinned.sort_by(|a, b| (b.create_at, &b.id).cmp(&(a.create_at, &a.id)));
    let mut list = PostList::default();
    for post in &pinned {
        list.posts.insert(post.id.clone(), sanitize(&data, post));
    }
    list.order = pinned.iter().map(|p| p.id.clone()).collect();
    Ok(Json(list))
}

/// Pins or unpins: an update of `is_pinned`, so a `post_edited` event with
/// `edit_at` unchanged (contract §A.7).
pub fn set_pinned(
    sim: &AppState,
    post_id: &str,
    user_id: Option<&str>,
    pinned: bool,
) -> ApiResult<()> {
    let now = sim.clock.now();
    let outbound = {
        let mut data = sim.data();
        let post = data.post(post_id)?.clone();
        if let Some(user_id) = user_id {
            data.readable_channel(&post.channel_id, user_id)?;
            // The edit window applies, except to a pin that changes nothing.
            if post.is_pinned != pinned {
                within_edit_window(&data, &post, now)?;
            }
        }
        posting::update(&mut data, post_id, now, |post| {
            post.is_pinned = pinned;
            Ok(())
        })?
        .1
    };
    deliver(sim, outbound);
    Ok(())
}

pub async fn pin(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    set_pinned(&sim, &post_id, Some(&caller.user_id), true)?;
    Ok(Json(StatusOk::ok()))
}

pub async fn unpin(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<StatusOk>> {
    set_pinned(&sim, &post_id, Some(&caller.user_id), false)?;
    Ok(Json(StatusOk::ok()))
}

/// `POST /posts/ephemeral`: system admins only; never stored.
pub async fn ephemeral(
    State(sim): State<AppState>,
    caller: Caller,
    JsonBody(request): JsonBody<EphemeralPost>,
) -> ApiResult<(StatusCode, Json<Post>)> {
    let now = sim.clock.now();
    {
        let data = sim.data();
        if !data.is_admin(&caller.user_id) {
            return Err(ApiError::forbidden());
        }
        if request.user_id.is_empty()
            || request.post.channel_id.is_empty()
            || request.post.message.is_empty()
        {
            return Err(ApiError::invalid_param("post"));
        }
        data.user(&request.user_id)?;
        data.channel(&request.post.channel_id)?;
    }
    let mut post = posting::ephemeral_post(
        &caller.user_id,
        &request.post.channel_id,
        &request.post.root_id,
        &request.post.message,
        now,
    );
    post.props = request.post.props;
    deliver(
        &sim,
        vec![Outbound::Ephemeral {
            to: request.user_id,
            post: Box::new(post.clone()),
        }],
    );
    Ok((StatusCode::CREATED, Json(post)))
}

pub async fn files_of(
    State(sim): State<AppState>,
    caller: Caller,
    Path(post_id): Path<String>,
) -> ApiResult<Json<Vec<FileInfo>>> {
    let data = sim.data();
    let post = readable_post(&data, &post_id, &caller.user_id)?;
    Ok(Json(
        post.file_ids
            .iter()
            .filter_map(|id| data.files.get(id))
            .map(|f| f.info.clone())
            .collect(),
    ))
}
