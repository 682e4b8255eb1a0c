//! The one error type of the HTTP API: every JSON endpoint answers an error as
//! `{"error": {"code": "…", "message": "…", "field": "…"}}` (`field` only where one input is at
//! fault). A 500 never carries internal text (database or I/O errors): it is logged with an id,
//! and the client gets the id to quote.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// What went wrong with a request, as the client is told.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The request is malformed or asks for something that does not exist (400).
    #[error("{message}")]
    BadRequest {
        /// The parameter or body field at fault.
        field: Option<String>,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// The input was understood but cannot be used (422), e.g. a workload the what-if check
    /// cannot read.
    #[error("{message}")]
    Unprocessable {
        /// The field at fault.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// No such thing here (404).
    #[error("{0}")]
    NotFound(String),
    /// A part of gpudash this request needs is not available (503): history disabled, the
    /// first sync not finished. The message is gpudash's own words, safe to show.
    #[error("{0}")]
    Unavailable(String),
    /// Something failed inside (500). Its text is logged, never sent.
    #[error("internal error in {context}")]
    Internal {
        /// What was being done (`history query`), for the log.
        context: &'static str,
        /// The cause.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl ApiError {
    /// A 500 from any error, with what was being done.
    pub fn internal(context: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Internal { context, source: Box::new(e) }
    }

    /// A 400 naming the field.
    pub fn bad(field: &str, message: impl Into<String>) -> Self {
        Self::BadRequest { field: Some(field.to_string()), message: message.into() }
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            Self::BadRequest { .. } => (StatusCode::BAD_REQUEST, "bad-request"),
            Self::Unprocessable { .. } => (StatusCode::UNPROCESSABLE_ENTITY, "unprocessable"),
            Self::NotFound(_) => (StatusCode::NOT_FOUND, "not-found"),
            Self::Unavailable(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            Self::Internal { .. } => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }
}

/// The JSON body of an error.
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// The error's code, message and field.
#[derive(Debug, Serialize)]
pub struct ErrorDetail {
    /// `bad-request`, `unprocessable`, `not-found`, `unavailable`, `internal`.
    pub code: &'static str,
    /// What is wrong (for a 500: an id to find the logged cause by).
    pub message: String,
    /// The input at fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let (message, field) = match self {
            Self::BadRequest { field, message } => (message, field),
            Self::Unprocessable { field, message } => (message, Some(field)),
            Self::NotFound(m) | Self::Unavailable(m) => (m, None),
            Self::Internal { context, source } => {
                let id = error_id();
                tracing::error!(error.id = %id, error = %source, "{context} failed");
                (format!("internal error (id {id}; the cause is in gpudash's log)"), None)
            }
        };
        let body = ErrorBody { error: ErrorDetail { code, message, field } };
        (status, [(axum::http::header::CACHE_CONTROL, "no-store")], axum::Json(body)).into_response()
    }
}

/// A problem shown to whoever reads gpudash's pages or API, without the internal text (a
/// database error carries its file's path and SQL): `what` and an id, the cause logged under
/// that id.
pub fn logged(what: &str, cause: &dyn std::fmt::Display) -> String {
    let id = error_id();
    tracing::error!(error.id = %id, error = %cause, "{what}");
    format!("{what} (id {id}; the cause is in gpudash's log)")
}

/// A short id that ties a 500 to its log line.
fn error_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let t = jiff::Timestamp::now().as_millisecond();
    format!("{t:x}-{n}")
}
