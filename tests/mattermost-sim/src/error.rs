//! API errors in Mattermost's shape: `id`, `message`, `detailed_error`,
//! `request_id`, `status_code`, `is_oauth` — clients branch on `id` and the
//! status, so both are exact.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use mattermost_wire::model::AppError;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub id: &'static str,
    pub message: String,
}

pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    pub fn new(status: StatusCode, id: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            id,
            message: message.into(),
        }
    }

    /// A malformed id in the URL path: Mattermost's `SetInvalidURLParam`.
    pub fn invalid_url_param(name: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "api.context.invalid_url_param.app_error",
            format!("Invalid or missing {name} parameter in request URL."),
        )
    }

    /// A missing or malformed body field or query parameter: Mattermost's
    /// `SetInvalidParam`, whose id names the body for both.
    pub fn invalid_param(name: &str) -> Self {
        Self::new(
            StatusCode::BAD_REQUEST,
            "api.context.invalid_body_param.app_error",
            format!("Invalid or missing {name} in request body."),
        )
    }

    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            "api.context.session_expired.app_error",
            "Invalid or expired session, please login again.",
        )
    }

    pub fn forbidden() -> Self {
        Self::new(
            StatusCode::FORBIDDEN,
            "api.context.permissions.app_error",
            "You do not have the appropriate permissions.",
        )
    }

    pub fn not_found(id: &'static str, what: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            id,
            format!("Unable to find the {what}."),
        )
    }

    pub fn body(&self) -> AppError {
        AppError {
            id: self.id.to_string(),
            message: self.message.clone(),
            detailed_error: String::new(),
            request_id: crate::ids::new_id(),
            status_code: self.status.as_u16(),
            is_oauth: false,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(self.body())).into_response()
    }
}

/// A JSON body that did not parse is a 400 in Mattermost's shape, never
/// axum's plain-text rejection.
pub struct JsonBody<T>(pub T);

impl<S, T> axum::extract::FromRequest<S> for JsonBody<T>
where
    T: serde::de::DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: axum::extract::Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = axum::body::Bytes::from_request(req, state)
            .await
            .map_err(|_| ApiError::invalid_param("body"))?;
        let mut value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.context.invalid_body_param.app_error",
                format!("Invalid request body: {e}"),
            )
        })?;
        // Clients send `null` for fields they leave unset (a login's `token`);
        // Mattermost reads those as absent.
        drop_nulls(&mut value);
        serde_json::from_value(value).map(JsonBody).map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                "api.context.invalid_body_param.app_error",
                format!("Invalid request body: {e}"),
            )
        })
    }
}

fn drop_nulls(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
