use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FileInfo {
    pub id: String,
    pub user_id: String,
    pub post_id: String,
    pub channel_id: String,
    pub create_at: i64,
    pub update_at: i64,
    pub delete_at: i64,
    pub name: String,
    pub extension: String,
    pub size: i64,
    pub mime_type: String,
    pub width: i64,
    pub height: i64,
    pub has_preview_image: bool,
    pub mini_preview: Option<String>,
    pub archived: bool,
}

/// `POST /files` answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct FileUploadResponse {
    pub file_infos: Vec<FileInfo>,
    pub client_ids: Vec<String>,
}
