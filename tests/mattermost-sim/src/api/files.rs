//! File upload and download (contract §A.8). Uploaded files are bound to a
//! post by `file_ids` on POST /posts.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use mattermost_wire::model::{FileInfo, FileUploadResponse};
use serde::Deserialize;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::ids::new_id;
use crate::state::{AppState, StoredFile};

fn mime_for(name: &str) -> &'static str {
    let extension = name
        .rsplit('.')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    match extension.as_str() {
        "txt" | "log" => "text/plain",
        "md" => "text/markdown",
        "csv" => "text/csv",
        "json" => "application/json",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "html" | "htm" => "text/html",
        "zip" => "application/zip",
        _ => "application/octet-stream",
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct UploadQuery {
    channel_id: String,
    filename: String,
}

fn attachments_disabled() -> ApiError {
    ApiError::new(
        StatusCode::NOT_IMPLEMENTED,
        "api.file.attachments.disabled.app_error",
        "File attachments have been disabled on this server.",
    )
}

struct Part {
    name: String,
    bytes: Bytes,
}

/// `POST /files`: multipart (`channel_id` and `files` parts, in any order),
/// or a raw body with `channel_id` and `filename` in the query.
pub async fn upload(
    State(sim): State<AppState>,
    caller: Caller,
    Query(query): Query<UploadQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<(StatusCode, Json<FileUploadResponse>)> {
    // The setting is the first thing Mattermost checks.
    if !sim.data().settings.enable_file_attachments {
        return Err(attachments_disabled());
    }
    let is_multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"));
    let mut channel_id = query.channel_id;
    let mut parts = Vec::new();
    let mut client_ids = Vec::new();
    if is_multipart {
        let request = axum::http::Request::builder()
            .header(
                header::CONTENT_TYPE,
                headers
                    .get(header::CONTENT_TYPE)
                    .cloned()
                    .unwrap_or(header::HeaderValue::from_static("")),
            )
            .body(axum::body::Body::from(body))
            .map_err(|_| ApiError::invalid_param("files"))?;
        let mut multipart =
            <Multipart as axum::extract::FromRequest<()>>::from_request(request, &())
                .await
                .map_err(|_| ApiError::invalid_param("files"))?;
        while let Some(field) = multipart
            .next_field()
            .await
            .map_err(|_| ApiError::invalid_param("files"))?
        {
            let field_name = field.name().unwrap_or_default().to_string();
            let file_name = field.file_name().unwrap_or_default().to_string();
            let bytes = field
                .bytes()
                .await
                .map_err(|_| ApiError::invalid_param("files"))?;
            match field_name.as_str() {
                "channel_id" => channel_id = String::from_utf8_lossy(&bytes).to_string(),
                "client_ids" => client_ids.push(String::from_utf8_lossy(&bytes).to_string()),
                "files" => parts.push(Part {
                    name: file_name,
                    bytes,
                }),
                _ => {}
            }
        }
    } else if !query.filename.is_empty() {
        parts.push(Part {
            name: query.filename,
            bytes: body,
        });
    }
    if channel_id.is_empty() {
        return Err(ApiError::invalid_param("channel_id"));
    }
    if parts.is_empty() {
        return Err(ApiError::invalid_param("files"));
    }
    let now = sim.clock.now();
    let mut data = sim.data();
    data.postable_channel(&channel_id, &caller.user_id)?;
    let limit = data.settings.max_file_size;
    let mut infos = Vec::new();
    for part in parts {
        let size = i64::try_from(part.bytes.len()).unwrap_or(i64::MAX);
        if size > limit {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "api.file.upload_file.too_large_detailed.app_error",
                format!(
                    "Unable to upload file {}. {size} bytes exceeds the maximum allowed {limit} bytes.",
                    part.name
                ),
            ));
        }
        let info = FileInfo {
            id: new_id(),
            user_id: caller.user_id.clone(),
            channel_id: channel_id.clone(),
            create_at: now,
            update_at: now,
            extension: part
                .name
                .rsplit_once('.')
                .map(|(_, e)| e.to_ascii_lowercase())
                .unwrap_or_default(),
            mime_type: mime_for(&part.name).to_string(),
            name: part.name,
            size,
            ..FileInfo::default()
        };
        data.files.insert(
            info.id.clone(),
            StoredFile {
                info: info.clone(),
                content_b64: base64::engine::general_purpose::STANDARD.encode(&part.bytes),
            },
        );
        infos.push(info);
    }
    Ok((
        StatusCode::CREATED,
        Json(FileUploadResponse {
            file_infos: infos,
            client_ids,
        }),
    ))
}

/// The file, if the caller uploaded it or may read the channel of its post.
fn readable_file(sim: &AppState, file_id: &str, user_id: &str) -> ApiResult<StoredFile> {
    let data = sim.data();
    let file = data
        .files
        .get(file_id)
        .cloned()
        .ok_or_else(|| ApiError::not_found("app.file_info.get.app_error", "file"))?;
    let readable = file.info.user_id == user_id
        || (!file.info.post_id.is_empty()
            && data
                .channel(&file.info.channel_id)
                .is_ok_and(|c| data.can_read(c, user_id)));
    if readable {
        Ok(file)
    } else {
        Err(ApiError::forbidden())
    }
}

pub async fn info(
    State(sim): State<AppState>,
    caller: Caller,
    Path(file_id): Path<String>,
) -> ApiResult<Json<FileInfo>> {
    Ok(Json(readable_file(&sim, &file_id, &caller.user_id)?.info))
}

pub async fn download(
    State(sim): State<AppState>,
    caller: Caller,
    Path(file_id): Path<String>,
) -> ApiResult<Response> {
    let file = readable_file(&sim, &file_id, &caller.user_id)?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&file.content_b64)
        .map_err(|_| ApiError::not_found("app.file_info.get.app_error", "file"))?;
    Ok((
        [
            (header::CONTENT_TYPE, file.info.mime_type.clone()),
            (
                header::CONTENT_DISPOSITION,
                format!(
                    "attachment; filename=\"{}\"",
                    file.info.name.replace('"', "")
                ),
            ),
        ],
        bytes,
    )
        .into_response())
}
