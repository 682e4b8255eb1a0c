//! Access control. Open read-only by default (a kiosk needs no login). With a token file, every
//! route but the probes needs the token as `Authorization: Bearer …` (scripts, Prometheus), or
//! a session from the login form (people): an opaque random id in an HttpOnly cookie, `Secure`
//! when the request came over HTTPS (directly or per the proxy's `X-Forwarded-Proto`), expiring
//! after 30 days, ended by `POST /logout`. The token itself never goes into a cookie. With a trusted proxy header (oauth2-proxy style),
//! requests carrying that header from the proxy are let through. The cluster's credentials never
//! reach this layer or any browser.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use app::views::plain::Plain;
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};

pub use crate::origin::{cross_site, Hosts, Net};

/// The access policy.
#[derive(Debug, Clone, Default)]
pub struct Access {
    /// The shared token, when login is required.
    pub token: Option<Arc<str>>,
    /// A header set by an authenticating proxy in front (e.g. `X-Forwarded-User`).
    pub proxy_header: Option<String>,
    /// Where that proxy's requests come from: the header is honoured from these addresses only
    /// (loopback when none are named: a proxy in the same pod), so a client that reaches gpudash
    /// directly cannot name itself a user.
    pub trusted_proxies: Vec<Net>,
    /// Base path, for the cookie path and redirects.
    pub base: String,
    /// Sessions from the login form.
    pub sessions: Sessions,
    /// The Host names answered when sign-in is off.
    pub hosts: Hosts,
    /// Failed sign-ins, per client address.
    pub throttle: Throttle,
    /// The site's identity provider, when people sign in through it (`--oidc-issuer`).
    pub oidc: Option<Arc<crate::oidc::Oidc>>,
}

/// Failed sign-ins per client address: each failure is answered after a delay that grows with
/// the address' recent failures (0.25 s each, up to 4 s), and after 10 in a minute the address
/// gets 429 without a check until the minute is over. Bounded to 10,000 addresses.
#[derive(Debug, Clone, Default)]
pub struct Throttle(Arc<Mutex<HashMap<String, (u32, i64)>>>);

impl Throttle {
    /// Failures per minute before an address is refused outright.
    pub const LIMIT: u32 = 10;

    /// Recent failures of `who` (those in the last minute).
    pub fn failures(&self, who: &str, now: i64) -> u32 {
        let m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.get(who).filter(|(_, since)| now - since < 60).map_or(0, |(n, _)| *n)
    }

    /// Counts a failure of `who`; its recent failures, this one included.
    pub fn fail(&self, who: &str, now: i64) -> u32 {
        let mut m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if m.len() >= 10_000 {
            m.retain(|_, (_, since)| now - *since < 60);
            if m.len() >= 10_000 {
                m.clear();
            }
        }
        let e = m.entry(who.to_string()).or_insert((0, now));
        if now - e.1 >= 60 {
            *e = (0, now);
        }
        e.0 += 1;
        e.0
    }

    /// Forgets `who`'s failures (after a good sign-in).
    pub fn clear(&self, who: &str) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(who);
    }
}

const COOKIE: &str = "gpudash_session";

/// How long a login lasts.
pub const SESSION_SECONDS: i64 = 30 * 86_400;

/// Sessions: the SHA-256 digest of each id (random, 256 bits, hex) with its expiry (Unix
/// seconds), at most [`Sessions::MAX`]. Kept in memory: a restart asks people to sign in again,
/// and a copied cookie stops working at logout. A cookie is hashed once and looked up: it was
/// compared with every session in turn under the lock (1,000 sessions and a 300 KB cookie:
/// 290-450 ms a request, `/healthz` p50 980 ms with six senders).
#[derive(Debug, Clone, Default)]
pub struct Sessions(Arc<Mutex<HashMap<[u8; 32], i64>>>);

/// A session id's digest, or `None` for a value that cannot be an id (64 hex digits).
fn session_key(id: &str) -> Option<[u8; 32]> {
    use sha2::Digest;
    (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| sha2::Sha256::digest(id.as_bytes()).into())
}

impl Sessions {
    /// Sessions held at most; a new one past this replaces the one that expires first.
    pub const MAX: usize = 10_000;

    /// A new session, valid until `now + SESSION_SECONDS`; `None` if the system has no
    /// randomness to give.
    pub fn create(&self, now: i64) -> Option<String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).ok()?;
        let id: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let key = session_key(&id)?;
        let mut m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.retain(|_, exp| *exp > now);
        if m.len() >= Self::MAX {
            if let Some(first) = m.iter().min_by_key(|(_, exp)| **exp).map(|(k, _)| *k) {
                m.remove(&first);
            }
        }
        m.insert(key, now + SESSION_SECONDS);
        Some(id)
    }

    /// Whether `id` is a live session.
    pub fn valid(&self, id: &str, now: i64) -> bool {
        let Some(key) = session_key(id) else { return false };
        let m = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        m.get(&key).is_some_and(|exp| *exp > now)
    }

    /// Ends a session.
    pub fn end(&self, id: &str) {
        if let Some(key) = session_key(id) {
            self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).remove(&key);
        }
    }

    /// Sessions held (expired ones until the next sign-in clears them).
    pub fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

/// Compares in time independent of the strings' content and lengths: both are reduced to
/// SHA-256 digests, compared over all 32 bytes.
fn same(a: &str, b: &str) -> bool {
    use sha2::Digest;
    let (a, b) = (sha2::Sha256::digest(a.as_bytes()), sha2::Sha256::digest(b.as_bytes()));
    a.iter().zip(b.iter()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The session cookie's value; only a value the length of an id is read (an attacker-sized
/// cookie is not decoded, hashed or kept).
fn cookie_session(headers: &axum::http::HeaderMap) -> Option<String> {
    cookie_value(headers, COOKIE, 64..=64)
}

/// The first value of cookie `name` whose length is in `len` (the ids gpudash sets are 43 or
/// 64 characters: a longer value is not looked at).
fn cookie_value(headers: &axum::http::HeaderMap, name: &str, len: std::ops::RangeInclusive<usize>) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, v)| *k == name && len.contains(&v.len()))
        .map(|(_, v)| v.to_string())
}

/// What a request's credentials are.
enum Credentials {
    /// Let through: the proxy named a user, or the token or a session is right.
    Good,
    /// A bearer token that is not the token: a guess (counted by the throttle).
    WrongBearer,
    /// None that count.
    None,
}

impl Access {
    /// The policy from the flags `gpudash serve` and `gpudash fleet` share: `--auth-token-file`,
    /// `--trusted-proxy-header` with `--trusted-proxy` (loopback when none), `--allowed-host`.
    pub fn from_flags(
        token_file: Option<&std::path::Path>,
        proxy_header: Option<&str>,
        trusted_proxies: &[Net],
        base: &str,
        allowed_hosts: &[String],
    ) -> Result<Self, TokenError> {
        let token = token_file.map(read_token).transpose()?;
        let proxy_header = proxy_header.map(str::trim).filter(|h| !h.is_empty()).map(str::to_string);
        let trusted_proxies = if trusted_proxies.is_empty() { Net::loopback() } else { trusted_proxies.to_vec() };
        Ok(Self {
            token,
            proxy_header,
            trusted_proxies,
            base: base.to_string(),
            hosts: Hosts::new(allowed_hosts),
            ..Self::default()
        })
    }

    /// Whether auth is on at all.
    pub fn enabled(&self) -> bool {
        self.token.is_some() || self.proxy_header.is_some() || self.oidc.is_some()
    }

    /// Whether people sign in here (the token form, the identity provider), so sessions count.
    fn signs_in(&self) -> bool {
        self.token.is_some() || self.oidc.is_some()
    }

    fn credentials(&self, req: &Request) -> Credentials {
        if let Some(h) = &self.proxy_header {
            let from_proxy = req
                .extensions()
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .is_some_and(|c| self.trusted(c.0.ip()));
            let named =
                req.headers().get(h.as_str()).and_then(|v| v.to_str().ok()).is_some_and(|v| !v.trim().is_empty());
            if from_proxy && named {
                return Credentials::Good;
            }
        }
        if self.signs_in() && cookie_session(req.headers()).is_some_and(|c| self.sessions.valid(&c, now())) {
            return Credentials::Good;
        }
        let Some(token) = &self.token else { return Credentials::None };
        let bearer = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, t)| t.trim());
        match bearer {
            Some(b) if same(b, token) => Credentials::Good,
            Some(_) => Credentials::WrongBearer,
            None => Credentials::None,
        }
    }

    /// Whether `ip` is one of the trusted proxies'.
    fn trusted(&self, ip: std::net::IpAddr) -> bool {
        self.trusted_proxies.iter().any(|n| n.contains(ip))
    }

    /// Who a request comes from, for the throttle: the connection's address; behind a trusted
    /// proxy (`--trusted-proxy`, loopback when none is named), the client its
    /// `X-Forwarded-For` names — the last address not a trusted proxy's, the one no client can
    /// forge — so that one client behind an ingress cannot lock out everyone behind it.
    pub fn client(&self, peer: Option<std::net::SocketAddr>, headers: &axum::http::HeaderMap) -> String {
        let Some(peer) = peer else { return "unknown".into() };
        if !self.trusted(peer.ip()) {
            return peer.ip().to_string();
        }
        let hops: Vec<&str> = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .collect();
        for hop in hops.iter().rev() {
            match hop.parse::<std::net::IpAddr>() {
                Ok(ip) if self.trusted(ip) => continue,
                Ok(ip) => return ip.to_string(),
                Err(_) => break,
            }
        }
        peer.ip().to_string()
    }
}

fn peer_of(req: &Request) -> Option<std::net::SocketAddr> {
    req.extensions().get::<axum::extract::ConnectInfo<std::net::SocketAddr>>().map(|c| c.0)
}

/// 429 for a client that guessed wrong too often this minute.
fn too_many() -> Response {
    let mut r = (StatusCode::TOO_MANY_REQUESTS, "too many wrong tokens: try again in a minute\n").into_response();
    r.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
    r
}

/// The middleware.
pub async fn guard(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
    if req.method() != axum::http::Method::GET && req.method() != axum::http::Method::HEAD && cross_site(req.headers())
    {
        return (StatusCode::FORBIDDEN, "cross-site request refused: post from gpudash's own pages\n").into_response();
    }
    if !access.enabled() {
        let host =
            req.headers().get(header::HOST).and_then(|v| v.to_str().ok()).or(req.uri().authority().map(|a| a.as_str()));
        if host.is_some_and(|h| !access.hosts.allows(h)) {
            return (
                StatusCode::MISDIRECTED_REQUEST,
                "this Host is not one gpudash answers to: add it with --allowed-host (or turn on sign-in)\n",
            )
                .into_response();
        }
        return next.run(req).await;
    }
    let path = req.uri().path();
    let sub = path.strip_prefix(access.base.as_str()).unwrap_or(path);
    if matches!(sub, "/healthz" | "/readyz" | "/login" | "/logout" | "/login/oidc" | "/login/oidc/callback")
        || sub.starts_with("/pkg/")
    {
        return next.run(req).await;
    }
    match access.credentials(&req) {
        Credentials::Good => return next.run(req).await,
        // Bearer guesses count as the sign-in form's do (6,301 went unthrottled in 5 s): past
        // the limit a client's bearer requests get 429 until the minute is over.
        Credentials::WrongBearer => {
            let who = access.client(peer_of(&req), req.headers());
            if access.throttle.fail(&who, now()) > Throttle::LIMIT {
                return too_many();
            }
        }
        Credentials::None => {}
    }
    let wants_html =
        req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    if wants_html && access.signs_in() {
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
    let lang = crate::answer_lang(app::i18n::Lang::En, &headers, uri.query());
    let which = Plain::SignIn { token: access.token.is_some(), oidc: access.oidc.is_some() };
    Html(app::views::plain::page(&access.base, lang, which)).into_response()
}

/// The login form's fields.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct LoginForm {
    token: String,
}

/// `POST /login`: checks the token and starts a session.
pub async fn login_submit(
    State(access): State<Arc<Access>>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: axum::http::HeaderMap,
    body: String,
) -> Response {
    // Behind a trusted proxy, the client it names ([`Access::client`]).
    let who = access.client(peer.map(|p| p.0 .0), &headers);
    let before = access.throttle.failures(&who, now());
    if before >= Throttle::LIMIT {
        return too_many();
    }
    // A body that is not the form's gives no token, and is refused as a wrong one.
    let given = crate::query::form::<LoginForm>(body.as_bytes()).map(|f| f.token).unwrap_or_default();
    match &access.token {
        Some(t) if same(given.trim(), t) => {
            access.throttle.clear(&who);
            let Some(id) = access.sessions.create(now()) else {
                return (StatusCode::SERVICE_UNAVAILABLE, "no randomness for a session id\n").into_response();
            };
            let cookie = session_cookie(&access, &headers, &id);
            let mut r = Redirect::to(&format!("{}/", access.base)).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        _ => {
            let failures = access.throttle.fail(&who, now());
            tokio::time::sleep(std::time::Duration::from_millis(250 * u64::from(failures.min(16)))).await;
            let lang = crate::answer_lang(app::i18n::Lang::En, &headers, None);
            let html = app::views::plain::page(&access.base, lang, Plain::WrongToken);
            (StatusCode::UNAUTHORIZED, Html(html)).into_response()
        }
    }
}

/// The cookie that binds a sign-in through the identity provider to the browser that started
/// it (its `state`): a callback whose state another browser was given is refused.
const OIDC_COOKIE: &str = "gpudash_oidc_state";

/// The session cookie for a new session `id`.
fn session_cookie(access: &Access, headers: &axum::http::HeaderMap, id: &str) -> String {
    let path = if access.base.is_empty() { "/".to_string() } else { access.base.clone() };
    let secure = if over_https(headers) { "; Secure" } else { "" };
    format!("{COOKIE}={id}; Path={path}; HttpOnly; SameSite=Strict; Max-Age={SESSION_SECONDS}{secure}")
}

/// `GET /login/oidc`: sends the browser to the identity provider.
pub async fn oidc_start(State(access): State<Arc<Access>>, headers: axum::http::HeaderMap) -> Response {
    let lang = crate::answer_lang(app::i18n::Lang::En, &headers, None);
    let Some(oidc) = access.oidc.clone() else {
        return (StatusCode::NOT_FOUND, "sign-in through an identity provider is not configured\n").into_response();
    };
    match oidc.start(now()).await {
        Ok((to, state)) => {
            let secure = if over_https(&headers) { "; Secure" } else { "" };
            // Lax: the provider's redirect back is a cross-site top-level navigation.
            let cookie = format!(
                "{OIDC_COOKIE}={state}; Path={}/login/oidc; HttpOnly; SameSite=Lax; Max-Age={}{secure}",
                access.base,
                crate::oidc::PENDING_SECONDS
            );
            let mut r = Redirect::to(&to).into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                r.headers_mut().insert(header::SET_COOKIE, v);
            }
            r
        }
        Err(e) => {
            tracing::warn!("sign-in through {}: {e}", oidc.issuer());
            let html = app::views::plain::sign_in_failed(&access.base, lang, &e.to_string());
            (StatusCode::BAD_GATEWAY, Html(html)).into_response()
        }
    }
}

/// What the identity provider sends the browser back with.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Callback {
    code: String,
    state: String,
    error: String,
    error_description: String,
}

/// `GET /login/oidc/callback`: checks what the provider sent back and starts a session.
pub async fn oidc_callback(
    State(access): State<Arc<Access>>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let lang = crate::answer_lang(app::i18n::Lang::En, &headers, None);
    let Some(oidc) = access.oidc.clone() else {
        return (StatusCode::NOT_FOUND, "sign-in through an identity provider is not configured\n").into_response();
    };
    // A flood of made-up callbacks is throttled like wrong tokens.
    let who = access.client(peer.map(|p| p.0 .0), &headers);
    if access.throttle.failures(&who, now()) >= Throttle::LIMIT {
        return too_many();
    }
    let q: Callback = crate::query::form(uri.query().unwrap_or("").as_bytes()).unwrap_or_default();
    let bound = cookie_value(&headers, OIDC_COOKIE, 1..=64);
    let result = if !q.error.is_empty() {
        let why = if q.error_description.is_empty() { q.error.clone() } else { q.error_description.clone() };
        Err(crate::oidc::OidcError::Refused(why.chars().take(200).collect()))
    } else {
        oidc.finish(&q.state, &q.code, bound.as_deref(), now()).await
    };
    let clear = format!("{OIDC_COOKIE}=; Path={}/login/oidc; HttpOnly; SameSite=Lax; Max-Age=0", access.base);
    let mut r = match result {
        Ok(person) => {
            access.throttle.clear(&who);
            let Some(id) = access.sessions.create(now()) else {
                return (StatusCode::SERVICE_UNAVAILABLE, "no randomness for a session id\n").into_response();
            };
            tracing::info!("signed in through {}: {}", oidc.issuer(), person.email.as_deref().unwrap_or(&person.sub));
            let mut r = Html(app::views::plain::signed_in(&access.base, lang)).into_response();
            if let Ok(v) = HeaderValue::from_str(&session_cookie(&access, &headers, &id)) {
                r.headers_mut().append(header::SET_COOKIE, v);
            }
            r
        }
        Err(e) => {
            access.throttle.fail(&who, now());
            tracing::warn!("sign-in through {} refused: {e}", oidc.issuer());
            let status = match e {
                crate::oidc::OidcError::Provider(_) => StatusCode::BAD_GATEWAY,
                crate::oidc::OidcError::NotAllowed(_) => StatusCode::FORBIDDEN,
                _ => StatusCode::UNAUTHORIZED,
            };
            (status, Html(app::views::plain::sign_in_failed(&access.base, lang, &e.to_string()))).into_response()
        }
    };
    if let Ok(v) = HeaderValue::from_str(&clear) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// `GET /logout`: a button that signs out (a plain page: it needs no script).
pub async fn logout_form(
    State(access): State<Arc<Access>>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    let lang = crate::answer_lang(app::i18n::Lang::En, &headers, uri.query());
    Html(app::views::plain::page(&access.base, lang, Plain::SignOut)).into_response()
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
    #[error("--auth-token-file {0}: the token must be one line of at least 32 characters without spaces (for example: openssl rand -hex 32)")]
    Weak(String),
    /// The identity provider's flags cannot be used.
    #[error("{0}")]
    Oidc(String),
}

/// Reads the token file: one line, at least 32 characters.
pub fn read_token(path: &std::path::Path) -> Result<Arc<str>, TokenError> {
    let t = std::fs::read_to_string(path)
        .map_err(|source| TokenError::Read { path: path.display().to_string(), source })?;
    let t = t.trim();
    if t.len() < 32 || t.contains(char::is_whitespace) {
        return Err(TokenError::Weak(path.display().to_string()));
    }
    Ok(t.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session is found by its digest, whatever the number of sessions, and a cookie that
    /// cannot be an id is not hashed at all; sessions are bounded in number.
    #[test]
    fn sessions_are_looked_up_by_digest_and_bounded() {
        let s = Sessions::default();
        let first = s.create(1000).unwrap_or_default();
        for _ in 0..Sessions::MAX + 5 {
            s.create(1001);
        }
        assert_eq!(s.len(), Sessions::MAX);
        assert!(!s.valid(&first, 1002), "the one that expires first made room");
        let huge = "a".repeat(300_000);
        let t = std::time::Instant::now();
        for _ in 0..1000 {
            assert!(!s.valid(&huge, 1002));
        }
        assert!(t.elapsed() < std::time::Duration::from_millis(200), "{:?}", t.elapsed());
        let mut h = axum::http::HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_str(&format!("{COOKIE}={huge}")).unwrap_or(HeaderValue::from_static("")),
        );
        assert_eq!(cookie_session(&h), None);
    }

    /// The throttle's key: the peer, or behind a trusted proxy the client it names.
    #[test]
    fn the_throttle_keys_clients_behind_a_trusted_proxy_by_forwarded_for() {
        let a = Access { trusted_proxies: vec!["10.42.0.0/16".parse().unwrap()], ..Access::default() };
        let peer = |s: &str| Some(std::net::SocketAddr::new(s.parse().unwrap(), 1));
        let mut h = axum::http::HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_static("198.51.100.7, 203.0.113.9, 10.42.1.1"));
        assert_eq!(a.client(peer("10.42.0.5"), &h), "203.0.113.9", "the last hop not a proxy");
        assert_eq!(a.client(peer("192.0.2.1"), &h), "192.0.2.1", "an untrusted peer cannot name a client");
        assert_eq!(a.client(peer("10.42.0.5"), &axum::http::HeaderMap::new()), "10.42.0.5");
        let mut bad = axum::http::HeaderMap::new();
        bad.insert("x-forwarded-for", HeaderValue::from_static("not-an-address"));
        assert_eq!(a.client(peer("10.42.0.5"), &bad), "10.42.0.5");
    }

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
    fn trusted_proxy_networks_hold_their_addresses_only() {
        let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
        let net = |s: &str| s.parse::<Net>().unwrap();
        assert!(net("10.42.0.0/16").contains(ip("10.42.7.9")) && !net("10.42.0.0/16").contains(ip("10.43.0.1")));
        assert!(net("10.42.0.9").contains(ip("10.42.0.9")) && !net("10.42.0.9").contains(ip("10.42.0.10")));
        assert!(net("10.42.0.0/16").contains(ip("::ffff:10.42.0.1")), "IPv4 written as IPv6");
        assert!(net("fd00::/8").contains(ip("fd12::1")) && !net("fd00::/8").contains(ip("fe80::1")));
        assert!(net("0.0.0.0/0").contains(ip("203.0.113.9")) && !net("0.0.0.0/0").contains(ip("::1")));
        assert!(!net("10.0.0.0/8").contains(ip("::a00:1")), "no IPv4 network holds an IPv6 address");
        for bad in ["10.42.0.0/33", "fd00::/129", "proxy.local", "10.42.0.0/x", ""] {
            assert!(bad.parse::<Net>().is_err(), "{bad}");
        }
        let lo = Net::loopback();
        assert!(lo.iter().any(|n| n.contains(ip("127.0.0.1"))) && lo.iter().any(|n| n.contains(ip("::1"))));
        assert!(!lo.iter().any(|n| n.contains(ip("10.42.0.1"))));
    }

    #[test]
    fn hosts_refuse_names_not_given() {
        let h = Hosts::new(&["gpu.factory.example:443".into()]);
        for ok in [
            "127.0.0.1:8080",
            "[::1]:8080",
            "10.42.0.7:8080",
            "localhost:8080",
            "gpudash.gpudash.svc:8080",
            "gpudash.gpudash.svc.cluster.local",
            "gpu.factory.example",
            "GPU.Factory.Example:8443",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for bad in ["evil.example", "evil.example:8080", "127.0.0.1.evil.example", "svc.evil.example"] {
            assert!(!h.allows(bad), "{bad}");
        }
        assert!(Hosts::new(&["*".into()]).allows("evil.example"));
    }

    #[test]
    fn cross_site_is_told_by_fetch_metadata_then_origin() {
        let h = |pairs: &[(&'static str, &'static str)]| {
            let mut m = axum::http::HeaderMap::new();
            for (k, v) in pairs {
                m.insert(*k, HeaderValue::from_static(v));
            }
            cross_site(&m)
        };
        assert!(!h(&[]), "curl");
        assert!(!h(&[("sec-fetch-site", "same-origin")]));
        assert!(!h(&[("sec-fetch-site", "none")]));
        assert!(h(&[("sec-fetch-site", "cross-site")]));
        assert!(h(&[("sec-fetch-site", "same-site")]));
        assert!(!h(&[("origin", "http://127.0.0.1:8080"), ("host", "127.0.0.1:8080")]));
        assert!(h(&[("origin", "http://evil.example"), ("host", "127.0.0.1:8080")]));
        assert!(h(&[("origin", "null"), ("host", "127.0.0.1:8080")]));
        assert!(!h(&[
            ("origin", "https://gpu.example"),
            ("host", "gpudash:8080"),
            ("x-forwarded-host", "gpu.example")
        ]));
    }

    #[test]
    fn the_throttle_counts_per_address_within_a_minute() {
        let t = Throttle::default();
        for i in 1..=10 {
            assert_eq!(t.fail("192.0.2.1", 1000), i);
        }
        assert_eq!(t.failures("192.0.2.1", 1030), 10);
        assert_eq!(t.failures("192.0.2.2", 1030), 0);
        assert_eq!(t.failures("192.0.2.1", 1060), 0, "a minute later");
        assert_eq!(t.fail("192.0.2.1", 1060), 1);
        t.clear("192.0.2.1");
        assert_eq!(t.failures("192.0.2.1", 1061), 0);
    }

    #[test]
    fn tokens_compare_exactly() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd"));
        assert!(!same("abc", "abcd"));
    }
}
