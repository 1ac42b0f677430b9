//! Who is calling: a bearer token (session, personal access token or bot
//! token, all alike) or the `MMAUTHTOKEN` cookie a browser sends.

use axum::extract::FromRequestParts;
use axum::http::HeaderMap;
use axum::http::request::Parts;

use crate::error::ApiError;
use crate::state::AppState;

#[derive(Debug, Clone)]
pub struct Caller {
    pub user_id: String,
    pub token: String,
}

/// The token a request carries, if any.
pub fn token_of(headers: &HeaderMap) -> Option<String> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
                .or_else(|| v.strip_prefix("BEARER "))
        })
        .map(|t| t.trim().to_string());
    header.or_else(|| {
        headers
            .get_all(axum::http::header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .find_map(|c| c.trim().strip_prefix("MMAUTHTOKEN=").map(str::to_string))
    })
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        sim: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = token_of(&parts.headers).ok_or_else(ApiError::unauthorized)?;
        let data = sim.data();
        let user = data
            .authenticate(&token)
            .ok_or_else(ApiError::unauthorized)?;
        Ok(Caller {
            user_id: user.user.id.clone(),
            token,
        })
    }
}

/// A caller, where the route also serves the anonymous.
pub struct MaybeCaller(pub Option<Caller>);

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        sim: &AppState,
    ) -> Result<Self, Self::Rejection> {
        Ok(Self(Caller::from_request_parts(parts, sim).await.ok()))
    }
}

impl Caller {
    /// Resolves the `me` alias in a `/users/{user_id}` path.
    pub fn resolve<'a>(&'a self, user_id: &'a str) -> &'a str {
        if user_id == "me" {
            &self.user_id
        } else {
            user_id
        }
    }
}
