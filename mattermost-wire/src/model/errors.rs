use serde::{Deserialize, Serialize};

/// The error body of every 4xx and 5xx answer. Clients branch on `id` and
/// `status_code`, so both are exact.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AppError {
    pub id: String,
    pub message: String,
    pub detailed_error: String,
    pub request_id: String,
    pub status_code: u16,
    pub is_oauth: bool,
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.status_code, self.id, self.message)
    }
}

impl std::error::Error for AppError {}
