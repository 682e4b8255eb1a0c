//! Access control. Open read-only by default (a kiosk needs no login). With a token file, every
//! route but the probes needs the token as `Authorization: Bearer …` (scripts, Prometheus), or
//! a session from the login form (people): an opaque random id in an HttpOnly cookie, `Secure`
//! when the request came over HTTPS (directly or per the proxy's `X-Forwarded-Proto`), expiring
//! after 30 days, ended by `POST /logout`. The token itself never goes into a cookie. With a trusted proxy header (oauth2-proxy style),
//! requests carrying that header from the proxy are let through. The cluster's credentials never
//! reach this layer or any browser.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

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
    /// Sessions from the login form.
    pub sessions: Sessions,
}

const COOKIE: &str = "gpudash_session";

/// How long a login lasts.
pub const SESSION_SECONDS: i64 = 30 * 86_400;

/// Session ids (random, 256 bits, hex) with their expiry (Unix seconds). Kept in memory: a
/// restart asks people to sign in again, and a copied cookie stops working at logout.
#[derive(Debug, Clone, Default)]
pub struct Sessions(Arc<Mutex<HashMap<String, i64>>>);

impl Sessions {
    /// A new session, valid until `now + SESSION_SECONDS`; `None` if the system has no
    /// randomness to give.
    pub fn create(&self, now: i64) -> Option<String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).ok()?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.retain(|_, exp| *exp > now);
        m.insert(id.clone(), now + SESSION_SECONDS);
        Some(id)
    }

    /// Whether `id` is a live session.
    pub fn valid(&self, id: &str, now: i64) -> bool {
        let m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.iter().any(|(k, exp)| same(k, id) && *exp > now)
    }

    /// Ends a session.
    pub fn end(&self, id: &str) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(id);
    }
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Whether the client reached gpudash over HTTPS: the request's own scheme, or the
/// `X-Forwarded-Proto` / `Forwarded: proto=` of the proxy in front.
fn over_https(headers: &axum::http::HeaderMap) -> bool {
    let xfp = headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok());
    let fwd = headers.get(header::FORWARDED).and_then(|v| v.to_str().ok());
    xfp.is_some_and(|p| p.split(',').next().is_some_and(|p| p.trim().eq_ignore_ascii_case("https")))
        || fwd.is_some_and(|f| f.to_ascii_lowercase().split([';', ',']).any(|kv| kv.trim() == "proto=https"))
}

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn cookie_session(headers: &axum::http::HeaderMap) -> Option<String> {
    let raw = headers.get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).collect::<Vec<_>>().join("; ");
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
        bearer.is_some_and(|b| same(b, token))
            || cookie_session(req.headers()).is_some_and(|c| self.sessions.valid(&c, now()))
    }
}

/// The middleware.
pub async fn guard(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
    if !access.enabled() {
        return next.run(req).await;
    }
    let path = req.uri().path();
    let sub = path.strip_prefix(access.base.as_str()).unwrap_or(path);
    if matches!(sub, "/healthz" | "/readyz" | "/login" | "/logout") || sub.starts_with("/pkg/") || access.allows(&req) {
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
pub async fn login_form(
    State(access): State<Arc<Access>>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let lang = crate::http::answer_lang(app::i18n::Lang::En, &headers, uri.query());
    let s = lang.s();
    let action = format!("{}/login", access.base);
    let body = format!(
        "<h1 class=\"page-title\">gpudash</h1><form method=\"post\" action=\"{action}\" class=\"filters\">\
<label>{} <input type=\"password\" name=\"token\" autocomplete=\"current-password\" required></label>\
<button type=\"submit\">{}</button></form>",
        s.login_token, s.login_submit
    );
    Html(crate::http::pages::plain_page(&access.base, lang, s.login_title, &body)).into_response()
}

/// `POST /login`: checks the token and starts a session.
pub async fn login_submit(State(access): State<Arc<Access>>, headers: axum::http::HeaderMap, body: String) -> Response {
    let given = body
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| app::boot::percent_decode(v))
        .unwrap_or_default();
    match &access.token {
        Some(t) if same(given.trim(), t) => {
            let Some(id) = access.sessions.create(now()) else {
                return (StatusCode::SERVICE_UNAVAILABLE, "no randomness for a session id\n").into_response();
            };
            let path = if access.base.is_empty() { "/".to_string() } else { access.base.clone() };
            let secure = if over_https(&headers) { "; Secure" } else { "" };
            let cookie =
                format!("{COOKIE}={id}; Path={path}; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}{secure}");
            let mut r = Redirect::to(&format!("{}/", access.base)).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        _ => {
            let lang = crate::http::answer_lang(app::i18n::Lang::En, &headers, None);
            let s = lang.s();
            let html = format!(
                "<!DOCTYPE html><html lang=\"{}\"><p>{} <a href=\"login\">{}</a></p></html>",
                lang.code(),
                s.login_wrong,
                s.login_again
            );
            (StatusCode::UNAUTHORIZED, Html(html)).into_response()
        }
    }
}

/// `GET /logout`: a button that signs out (a plain page: it needs no script).
pub async fn logout_form(
    State(access): State<Arc<Access>>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let lang = crate::http::answer_lang(app::i18n::Lang::En, &headers, uri.query());
    let s = lang.s();
    let body = format!(
        "<h1 class=\"page-title\">gpudash</h1><form method=\"post\" action=\"{}/logout\" class=\"filters\">\
<button type=\"submit\">{}</button></form>",
        access.base, s.logout_submit
    );
    Html(crate::http::pages::plain_page(&access.base, lang, s.logout_title, &body)).into_response()
}

/// `POST /logout`: ends the session and clears the cookie.
pub async fn logout(State(access): State<Arc<Access>>, headers: axum::http::HeaderMap) -> Response {
    if let Some(id) = cookie_session(&headers) {
        access.sessions.end(&id);
    }
    let path = if access.base.is_empty() { "/".to_string() } else { access.base.clone() };
    let secure = if over_https(&headers) { "; Secure" } else { "" };
    let mut r = Redirect::to(&format!("{}/login", access.base)).into_response();
    if let Ok(v) =
        HeaderValue::from_str(&format!("{COOKIE}=; Path={path}; HttpOnly; SameSite=Strict; Max-Age=0{secure}"))
    {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// Why the token file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// It cannot be read.
    #[error("--auth-token-file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its content is not a usable token.
    #[error("--auth-token-file {0}: the token must be one line of at least 16 characters without spaces")]
    Weak(String),
}

/// Reads the token file: one line, at least 16 characters.
pub fn read_token(path: &std::path::Path) -> Result<Arc<str>, TokenError> {
    let t = std::fs::read_to_string(path)
        .map_err(|source| TokenError::Read { path: path.display().to_string(), source })?;
    let t = t.trim();
    if t.len() < 16 || t.contains(char::is_whitespace) {
        return Err(TokenError::Weak(path.display().to_string()));
    }
    Ok(t.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_random_expire_and_end() {
        let s = Sessions::default();
        let a = s.create(1000).unwrap_or_default();
        let b = s.create(1000).unwrap_or_default();
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
        assert!(s.valid(&a, 1001));
        assert!(!s.valid(&a, 1000 + SESSION_SECONDS), "expired");
        s.end(&b);
        assert!(!s.valid(&b, 1001));
        assert!(!s.valid("", 1001));
    }

    #[test]
    fn https_is_told_by_the_proxy() {
        let mut h = axum::http::HeaderMap::new();
        assert!(!over_https(&h));
        h.insert("x-forwarded-proto", HeaderValue::from_static("https"));
        assert!(over_https(&h));
        let mut f = axum::http::HeaderMap::new();
        f.insert(header::FORWARDED, HeaderValue::from_static("for=192.0.2.60;proto=https;by=203.0.113.43"));
        assert!(over_https(&f));
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
