//! Access control. Open read-only by default (a kiosk needs no login). With a token file, every
//! route but the probes needs the token — as `Authorization: Bearer …` (scripts, Prometheus) or
//! as the cookie the login form sets (people). With a trusted proxy header (oauth2-proxy style),
//! requests carrying that header from the proxy are let through. The cluster's credentials never
//! reach this layer or any browser.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};

/// The access policy.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The shared token, when login is required.
    pub token: Option<Arc<str>>,
    /// A header set by an authenticating proxy in front (e.g. `X-Forwarded-User`).
    pub proxy_header: Option<String>,
    /// Base path, for the cookie path and redirects.
    pub base: String,
}

const COOKIE: &str = "gpudash_token";

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn cookie_token(req: &Request) -> Option<String> {
    let raw =
        req.headers().get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join("; ");
    raw.split(';')
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| app::boot::percent_decode(v))
}

impl Access {
    /// Whether auth is on at all.
    pub fn enabled(&self) -> bool {
        self.token.is_some() || self.proxy_header.is_some()
    }

    fn allows(&self, req: &Request) -> bool {
        if let Some(h) = &self.proxy_header {
            if req.headers().get(h.as_str()).and_then(|v| v.to_str().ok()).is_some_and(|v| !v.trim().is_empty()) {
                return true;
            }
        }
        let Some(token) = &self.token else { return false };
        let bearer = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        bearer.is_some_and(|b| same(b, token)) || cookie_token(req).is_some_and(|c| same(&c, token))
    }
}

/// The middleware.
pub async fn guard(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
    if !access.enabled() {
        return next.run(req).await;
    }
    let path = req.uri().path();
    let sub = path.strip_prefix(access.base.as_str()).unwrap_or(path);
    if matches!(sub, "/healthz" | "/readyz" | "/login") || sub.starts_with("/pkg/") || access.allows(&req) {
        return next.run(req).await;
    }
    let wants_html =
        req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    if wants_html && access.token.is_some() {
        return Redirect::to(&format!("{}/login", access.base)).into_response();
    }
    let mut r = (StatusCode::UNAUTHORIZED, "authentication required\n").into_response();
    r.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"gpudash\""));
    r
}

/// `GET /login`: the token form.
pub async fn login_form(State(access): State<Arc<Access>>) -> Response {
    let action = format!("{}/login", access.base);
    Html(format!(
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>gpudash · sign in</title>\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><link rel=\"stylesheet\" href=\"{}/pkg/gpudash.css\"></head>\
<body><main class=\"app\"><h1 class=\"page-title\">gpudash</h1><form method=\"post\" action=\"{action}\" class=\"filters\">\
<label>Access token <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label>\
<button type=\"submit\">Sign in</button></form></main></body></html>",
        access.base
    ))
    .into_response()
}

/// `POST /login`: checks the token and sets the session cookie.
pub async fn login_submit(State(access): State<Arc<Access>>, body: String) -> Response {
    let given = body
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| app::boot::percent_decode(v))
        .unwrap_or_default();
    match &access.token {
        Some(t) if same(given.trim(), t) => {
            let path = if access.base.is_empty() { "/".to_string() } else { access.base.clone() };
            let cookie = format!(
                "{COOKIE}={}; Path={path}; HttpOnly; SameSite=Strict; Max-Age=2592000",
                app::boot::percent_encode(t)
            );
            let mut r = Redirect::to(&format!("{}/", access.base)).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        _ => (StatusCode::UNAUTHORIZED, Html("<!DOCTYPE html><p>Wrong token. <a href=\"login\">Try again</a>.</p>"))
            .into_response(),
    }
}

/// Reads the token file: one line, at least 16 characters.
pub fn read_token(path: &std::path::Path) -> Result<Arc<str>, String> {
    let t = std::fs::read_to_string(path).map_err(|e| format!("--auth-token-file {}: {e}", path.display()))?;
    let t = t.trim();
    if t.len() < 16 || t.contains(char::is_whitespace) {
        return Err(format!(
            "--auth-token-file {}: the token must be one line of at least 16 characters without spaces",
            path.display()
        ));
    }
    Ok(t.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_compare_exactly() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
