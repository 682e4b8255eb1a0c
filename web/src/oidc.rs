//! Sign-in through the site's identity provider: OpenID Connect's authorization code flow with
//! PKCE (RFC 7636, S256), for a confidential client (`client_secret_basic`). `GET /login/oidc`
//! sends the browser to the provider with a fresh `state`, `nonce` and code challenge (kept here,
//! bounded, ten minutes, and the state bound to the browser by a cookie); the provider sends it
//! back to `GET /login/oidc/callback` with a code, which is exchanged for an ID token. The token
//! is accepted only when its RS256 signature verifies against the provider's published keys
//! (`jwks_uri`) and its issuer, audience, expiry, issue time and nonce are the ones expected;
//! then the person gets the same session as the token form gives. With `--oidc-allowed-email`,
//! only those (verified) addresses or domains are let in.
//!
//! The provider is asked for nothing at start-up: its discovery document is read at the first
//! sign-in (and again after an hour), so gpudash starts and serves its probes while the provider
//! is down, and says so to whoever tries to sign in. Every answer from the provider is read
//! with a 10 s timeout, at most 1 MiB, no redirects followed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine as _;

/// Sign-ins started and not yet back, at most this many (the oldest dropped).
const MAX_PENDING: usize = 10_000;
/// How long a started sign-in may take, in seconds.
pub const PENDING_SECONDS: i64 = 600;
/// The clock skew allowed between gpudash and the provider, in seconds.
const SKEW: i64 = 60;
/// How long the discovery document and the keys are kept.
const KEEP: Duration = Duration::from_secs(3600);
/// The most a provider's answer may weigh.
const MAX_ANSWER: usize = 1 << 20;

/// How gpudash is registered with the provider (its `Debug` leaves the secret out).
#[derive(Clone)]
pub struct Config {
    /// The issuer, exactly as the provider's discovery document names it.
    pub issuer: String,
    /// The client id.
    pub client_id: String,
    /// The client secret.
    pub client_secret: Arc<str>,
    /// Where the provider sends the browser back: gpudash's `…/login/oidc/callback` as the
    /// browser reaches it (registered with the provider).
    pub redirect_url: String,
    /// Addresses (`ops@example.com`) or domains (`@example.com`) let in; empty: anyone the
    /// provider signs in.
    pub allowed: Vec<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &"…")
            .field("redirect_url", &self.redirect_url)
            .field("allowed", &self.allowed)
            .finish()
    }
}

/// Why a sign-in through the provider did not give a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OidcError {
    /// The provider could not be reached or answered something unusable.
    #[error("the identity provider could not be used: {0}")]
    Provider(String),
    /// The browser came back with a state gpudash did not give it, or gave another browser,
    /// or too late.
    #[error("this sign-in was not started here, was already used, or took longer than ten minutes: start again")]
    State,
    /// The provider refused (the person cancelled, or the client is not allowed).
    #[error("the identity provider refused: {0}")]
    Refused(String),
    /// The ID token failed a check.
    #[error("the identity provider's ID token was refused: {0}")]
    Token(String),
    /// The person is not one `--oidc-allowed-email` lets in.
    #[error("{0} may not use this gpudash: ask its operator to add the address")]
    NotAllowed(String),
}

/// What the provider's discovery document says (OpenID Connect Discovery 1.0).
#[derive(Debug, Clone, serde::Deserialize)]
struct Meta {
    issuer: String,
    authorization_endpoint: String,
    token_endpoint: String,
    jwks_uri: String,
    #[serde(default)]
    userinfo_endpoint: Option<String>,
}

/// One key of the provider's JWK set (RFC 7517); only RSA signing keys are used.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct Jwk {
    kty: String,
    kid: Option<String>,
    alg: Option<String>,
    #[serde(rename = "use")]
    use_: Option<String>,
    n: Option<String>,
    e: Option<String>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct JwkSet {
    keys: Vec<Jwk>,
}

/// A sign-in on its way: what the callback must find again.
#[derive(Debug, Clone)]
struct Pending {
    nonce: String,
    verifier: String,
    started: i64,
}

/// Who signed in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// The provider's subject.
    pub sub: String,
    /// The address, when the token carries one.
    pub email: Option<String>,
}

/// The provider, as gpudash uses it.
#[derive(Debug)]
pub struct Oidc {
    cfg: Config,
    http: reqwest::Client,
    meta: tokio::sync::Mutex<Option<(Meta, Instant)>>,
    keys: tokio::sync::Mutex<Option<(Vec<Jwk>, Instant)>>,
    pending: Mutex<HashMap<String, Pending>>,
}

/// 32 random bytes, base64url.
fn random() -> Option<String> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b).ok()?;
    Some(B64.encode(b))
}

impl Oidc {
    /// The provider from its configuration; nothing is asked of it yet.
    pub fn new(cfg: Config) -> Result<Self, OidcError> {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| OidcError::Provider(e.to_string()))?;
        Ok(Self {
            cfg,
            http,
            meta: tokio::sync::Mutex::default(),
            keys: tokio::sync::Mutex::default(),
            pending: Mutex::default(),
        })
    }

    /// The issuer (for the sign-in page).
    pub fn issuer(&self) -> &str {
        &self.cfg.issuer
    }

    async fn read<T: serde::de::DeserializeOwned>(&self, r: reqwest::RequestBuilder) -> Result<T, OidcError> {
        let bad = |e: String| OidcError::Provider(e);
        let mut resp = r.send().await.map_err(|e| bad(e.to_string()))?;
        let status = resp.status();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| bad(e.to_string()))? {
            body.extend_from_slice(&chunk);
            if body.len() > MAX_ANSWER {
                return Err(bad("an answer over 1 MiB".into()));
            }
        }
        if !status.is_success() {
            // An OAuth error answer says why (RFC 6749 §5.2).
            let why = serde_json::from_slice::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"].as_str().map(str::to_string))
                .unwrap_or_else(|| status.to_string());
            return Err(OidcError::Refused(why));
        }
        serde_json::from_slice(&body).map_err(|e| bad(format!("an answer that is not what OpenID Connect says: {e}")))
    }

    async fn meta(&self) -> Result<Meta, OidcError> {
        let mut kept = self.meta.lock().await;
        if let Some((m, _)) = kept.as_ref().filter(|(_, at)| at.elapsed() < KEEP) {
            return Ok(m.clone());
        }
        let url = format!("{}/.well-known/openid-configuration", self.cfg.issuer.trim_end_matches('/'));
        let m: Meta = self.read(self.http.get(&url)).await?;
        if m.issuer.trim_end_matches('/') != self.cfg.issuer.trim_end_matches('/') {
            return Err(OidcError::Provider(format!(
                "its discovery document names the issuer {:?}, not {:?} (--oidc-issuer)",
                m.issuer, self.cfg.issuer
            )));
        }
        *kept = Some((m.clone(), Instant::now()));
        Ok(m)
    }

    /// The provider's keys; read again when `fresh` (a token names a key not seen yet).
    async fn keys(&self, meta: &Meta, fresh: bool) -> Result<Vec<Jwk>, OidcError> {
        let mut kept = self.keys.lock().await;
        if let Some((k, _)) = kept.as_ref().filter(|(_, at)| !fresh && at.elapsed() < KEEP) {
            return Ok(k.clone());
        }
        let set: JwkSet = self.read(self.http.get(&meta.jwks_uri)).await?;
        *kept = Some((set.keys.clone(), Instant::now()));
        Ok(set.keys)
    }

    /// Starts a sign-in at `now`: where to send the browser, and the state to bind to it.
    pub async fn start(&self, now: i64) -> Result<(String, String), OidcError> {
        let meta = self.meta().await?;
        let no_random = || OidcError::Provider("the system gave no randomness".into());
        let (state, nonce, verifier) =
            (random().ok_or_else(no_random)?, random().ok_or_else(no_random)?, random().ok_or_else(no_random)?);
        let challenge = {
            use sha2::Digest;
            B64.encode(sha2::Sha256::digest(verifier.as_bytes()))
        };
        {
            let mut p = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            p.retain(|_, s| now - s.started < PENDING_SECONDS);
            if p.len() >= MAX_PENDING {
                if let Some(oldest) = p.iter().min_by_key(|(_, s)| s.started).map(|(k, _)| k.clone()) {
                    p.remove(&oldest);
                }
            }
            p.insert(state.clone(), Pending { nonce: nonce.clone(), verifier, started: now });
        }
        let query = form_urlencoded::Serializer::new(String::new())
            .append_pair("response_type", "code")
            .append_pair("client_id", &self.cfg.client_id)
            .append_pair("redirect_uri", &self.cfg.redirect_url)
            .append_pair("scope", "openid email profile")
            .append_pair("state", &state)
            .append_pair("nonce", &nonce)
            .append_pair("code_challenge", &challenge)
            .append_pair("code_challenge_method", "S256")
            .finish();
        let sep = if meta.authorization_endpoint.contains('?') { '&' } else { '?' };
        Ok((format!("{}{sep}{query}", meta.authorization_endpoint), state))
    }

    /// Finishes a sign-in: `state` and `code` as the provider sent the browser back,
    /// `bound` the state the browser's cookie holds.
    pub async fn finish(&self, state: &str, code: &str, bound: Option<&str>, now: i64) -> Result<Person, OidcError> {
        let pending = {
            let mut p = self.pending.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            p.remove(state)
        };
        let pending = pending
            .filter(|p| now - p.started < PENDING_SECONDS && bound.is_some_and(|b| same(b, state)))
            .ok_or(OidcError::State)?;
        let meta = self.meta().await?;
        #[derive(serde::Deserialize)]
        struct Tokens {
            id_token: String,
            #[serde(default)]
            access_token: Option<String>,
        }
        let form = [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", self.cfg.redirect_url.as_str()),
            ("code_verifier", pending.verifier.as_str()),
        ];
        // client_secret_basic: id and secret form-urlencoded, then Basic (RFC 6749 §2.3.1).
        let enc = |s: &str| form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
        let tokens: Tokens = self
            .read(
                self.http
                    .post(&meta.token_endpoint)
                    .basic_auth(enc(&self.cfg.client_id), Some(enc(&self.cfg.client_secret)))
                    .form(&form),
            )
            .await?;
        let kid = header(&tokens.id_token)?.kid;
        let mut keys = self.keys(&meta, false).await?;
        if kid.as_ref().is_some_and(|k| !keys.iter().any(|j| j.kid.as_ref() == Some(k))) {
            keys = self.keys(&meta, true).await?;
        }
        let mut claims = verify(&tokens.id_token, &keys, &meta.issuer, &self.cfg.client_id, &pending.nonce, now)?;
        // Many providers put the address in the UserInfo answer only (OpenID Connect Core
        // §5.4): asked there when an allow list needs it, for the same subject (§5.3.2).
        if !self.cfg.allowed.is_empty() && claims.email.is_none() {
            if let (Some(url), Some(at)) = (meta.userinfo_endpoint.as_deref(), tokens.access_token.as_deref()) {
                let info: UserInfo = self.read(self.http.get(url).bearer_auth(at)).await?;
                if info.sub != claims.sub {
                    return Err(OidcError::Token("the UserInfo answer is about another subject".into()));
                }
                (claims.email, claims.email_verified) = (info.email, info.email_verified);
            }
        }
        self.allow(&claims)
    }

    /// Whether the token's person is let in.
    fn allow(&self, c: &Claims) -> Result<Person, OidcError> {
        let person = Person { sub: c.sub.clone(), email: c.email.clone() };
        if self.cfg.allowed.is_empty() {
            return Ok(person);
        }
        let who = c.email.clone().unwrap_or_else(|| c.sub.clone());
        let Some(email) = c.email.as_deref().filter(|_| c.email_verified == Some(true)) else {
            return Err(OidcError::NotAllowed(format!("{who} (no verified address)")));
        };
        let email = email.to_ascii_lowercase();
        let ok = self.cfg.allowed.iter().any(|a| {
            let a = a.trim().to_ascii_lowercase();
            if a.starts_with('@') {
                email.ends_with(&a)
            } else {
                email == a
            }
        });
        if ok {
            Ok(person)
        } else {
            Err(OidcError::NotAllowed(who))
        }
    }
}

/// Equal, in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A JWT's header.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Header {
    alg: String,
    kid: Option<String>,
}

/// The ID token's claims gpudash checks (OpenID Connect Core §2, §3.1.3.7).
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(default)]
pub struct Claims {
    iss: String,
    sub: String,
    aud: Audience,
    azp: Option<String>,
    exp: i64,
    iat: i64,
    nbf: Option<i64>,
    nonce: Option<String>,
    email: Option<String>,
    email_verified: Option<bool>,
}

/// What gpudash reads of the UserInfo answer.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct UserInfo {
    sub: String,
    email: Option<String>,
    email_verified: Option<bool>,
}

/// `aud`: one string or several.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
    #[default]
    None,
}

fn part<T: serde::de::DeserializeOwned>(p: &str, what: &str) -> Result<T, OidcError> {
    let bytes =
        B64.decode(p.trim_end_matches('=')).map_err(|_| OidcError::Token(format!("its {what} is not base64url")))?;
    serde_json::from_slice(&bytes).map_err(|e| OidcError::Token(format!("its {what}: {e}")))
}

fn header(token: &str) -> Result<Header, OidcError> {
    part(token.split('.').next().unwrap_or(""), "header")
}

/// Checks an ID token at `now`: signed RS256 by one of `keys`, from `issuer`, for `client_id`,
/// not expired, issued no later than now, with `nonce`. Returns its claims.
pub fn verify(
    token: &str,
    keys: &[Jwk],
    issuer: &str,
    client_id: &str,
    nonce: &str,
    now: i64,
) -> Result<Claims, OidcError> {
    let bad = |s: &str| OidcError::Token(s.to_string());
    let parts: Vec<&str> = token.split('.').collect();
    let [h, c, s] = parts.as_slice() else { return Err(bad("not a signed JWT (three parts)")) };
    let head: Header = part(h, "header")?;
    if head.alg != "RS256" {
        return Err(OidcError::Token(format!("signed with {:?}; gpudash accepts RS256", head.alg)));
    }
    let sig = B64.decode(s.trim_end_matches('=')).map_err(|_| bad("its signature is not base64url"))?;
    let usable = keys.iter().filter(|k| {
        k.kty == "RSA"
            && k.use_.as_deref().is_none_or(|u| u == "sig")
            && k.alg.as_deref().is_none_or(|a| a == "RS256")
            && (head.kid.is_none() || k.kid == head.kid)
    });
    let signed = format!("{h}.{c}");
    let mut verified = false;
    for k in usable {
        let (Some(n), Some(e)) = (k.n.as_deref(), k.e.as_deref()) else { continue };
        let (Ok(n), Ok(e)) = (B64.decode(n.trim_end_matches('=')), B64.decode(e.trim_end_matches('='))) else {
            continue;
        };
        let key = ring::signature::RsaPublicKeyComponents { n: &n, e: &e };
        if key.verify(&ring::signature::RSA_PKCS1_2048_8192_SHA256, signed.as_bytes(), &sig).is_ok() {
            verified = true;
            break;
        }
    }
    if !verified {
        return Err(bad("its signature does not verify with the provider's keys"));
    }
    let claims: Claims = part(c, "claims")?;
    if claims.iss.trim_end_matches('/') != issuer.trim_end_matches('/') {
        return Err(OidcError::Token(format!("issued by {:?}, not {issuer:?}", claims.iss)));
    }
    let for_us = match &claims.aud {
        Audience::One(a) => a == client_id,
        Audience::Many(v) => {
            v.iter().any(|a| a == client_id) && (v.len() == 1 || claims.azp.as_deref() == Some(client_id))
        }
        Audience::None => false,
    };
    if !for_us {
        return Err(bad("issued for another client (aud)"));
    }
    if claims.exp + SKEW <= now {
        return Err(bad("expired"));
    }
    if claims.iat - SKEW > now || claims.nbf.is_some_and(|t| t - SKEW > now) {
        return Err(bad("issued in the future"));
    }
    if !claims.nonce.as_deref().is_some_and(|n| same(n, nonce)) {
        return Err(bad("its nonce is not this sign-in's"));
    }
    if claims.sub.is_empty() {
        return Err(bad("no subject"));
    }
    Ok(claims)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test key (web/testdata/README.md) and its public half as a provider publishes it.
    fn key() -> (ring::signature::RsaKeyPair, Jwk) {
        let kp = ring::signature::RsaKeyPair::from_der(include_bytes!("../testdata/oidc-test-key.der"))
            .unwrap_or_else(|e| panic!("test key: {e}"));
        let c: ring::signature::RsaPublicKeyComponents<Vec<u8>> = kp.public().into();
        let jwk = Jwk {
            kty: "RSA".into(),
            kid: Some("k1".into()),
            alg: Some("RS256".into()),
            use_: Some("sig".into()),
            n: Some(B64.encode(&c.n)),
            e: Some(B64.encode(&c.e)),
        };
        (kp, jwk)
    }

    fn sign(kp: &ring::signature::RsaKeyPair, header: &serde_json::Value, claims: &serde_json::Value) -> String {
        let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
        let mut sig = vec![0u8; kp.public().modulus_len()];
        kp.sign(&ring::signature::RSA_PKCS1_SHA256, &ring::rand::SystemRandom::new(), input.as_bytes(), &mut sig)
            .unwrap_or_else(|e| panic!("sign: {e}"));
        format!("{input}.{}", B64.encode(sig))
    }

    const NOW: i64 = 1_765_000_000;

    fn claims() -> serde_json::Value {
        serde_json::json!({"iss": "https://id.example.com/", "sub": "u1", "aud": "gpudash", "exp": NOW + 300,
                           "iat": NOW - 5, "nonce": "n-1", "email": "ops@factory.example", "email_verified": true})
    }

    /// A token signed by the provider's key, for this client, fresh, with this sign-in's nonce is
    /// accepted; each claim gpudash checks refuses it when wrong, and so does another key, a
    /// changed payload or another algorithm.
    #[test]
    fn an_id_token_is_checked_claim_by_claim() {
        let (kp, jwk) = key();
        let keys = [jwk.clone()];
        let head = serde_json::json!({"alg": "RS256", "kid": "k1", "typ": "JWT"});
        let check = |c: &serde_json::Value| {
            verify(&sign(&kp, &head, c), &keys, "https://id.example.com", "gpudash", "n-1", NOW)
        };
        let ok = check(&claims());
        assert!(ok.as_ref().is_ok_and(|c| c.sub == "u1"), "{ok:?}");
        let with = |k: &str, v: serde_json::Value| {
            let mut c = claims();
            c[k] = v;
            check(&c).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert!(with("iss", "https://evil.example".into()).contains("issued by"));
        assert!(with("aud", "someone-else".into()).contains("another client"));
        assert!(
            with("aud", serde_json::json!(["gpudash", "other"])).contains("another client"),
            "several audiences need azp"
        );
        assert!(with("exp", (NOW - 61).into()).contains("expired"));
        assert!(with("iat", (NOW + 120).into()).contains("future"));
        assert!(with("nonce", "n-2".into()).contains("nonce"));
        assert!(with("sub", "".into()).contains("subject"));
        // Within the skew: accepted.
        assert!(check(&{
            let mut c = claims();
            c["exp"] = (NOW - 30).into();
            c
        })
        .is_ok());
        // A payload changed after signing.
        let token = sign(&kp, &head, &claims());
        let mut parts: Vec<String> = token.split('.').map(str::to_string).collect();
        let mut forged = claims();
        forged["sub"] = "admin".into();
        parts[1] = B64.encode(forged.to_string());
        let e = verify(&parts.join("."), &keys, "https://id.example.com/", "gpudash", "n-1", NOW);
        assert!(e.is_err_and(|e| e.to_string().contains("signature")));
        // Another key under the same id.
        let other = Jwk { n: Some(B64.encode([0xC5u8; 256])), ..jwk };
        let e = verify(&token, &[other], "https://id.example.com/", "gpudash", "n-1", NOW);
        assert!(e.is_err_and(|e| e.to_string().contains("signature")));
        // alg none, HS256: refused before any key is tried.
        for alg in ["none", "HS256"] {
            let t = sign(&kp, &serde_json::json!({"alg": alg}), &claims());
            let e = verify(&t, &keys, "https://id.example.com/", "gpudash", "n-1", NOW);
            assert!(e.is_err_and(|e| e.to_string().contains("accepts RS256")), "{alg}");
        }
        assert!(verify("a.b", &keys, "x", "gpudash", "n", NOW).is_err());
    }

    /// The client secret never reaches a log through `Debug` (the access policy is `Debug`).
    #[test]
    fn the_secret_is_left_out_of_debug() {
        let o = Oidc::new(Config {
            issuer: "https://id.example.com/".into(),
            client_id: "gpudash".into(),
            client_secret: "very-secret-value".into(),
            redirect_url: "https://g.example.com/login/oidc/callback".into(),
            allowed: Vec::new(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let shown = format!("{o:?}");
        assert!(shown.contains("gpudash") && !shown.contains("very-secret-value"), "{shown}");
    }

    /// `--oidc-allowed-email`: addresses and domains, verified addresses only.
    #[test]
    fn only_allowed_verified_addresses_are_let_in() {
        let cfg = |allowed: &[&str]| Config {
            issuer: "https://id.example.com/".into(),
            client_id: "gpudash".into(),
            client_secret: "s".into(),
            redirect_url: "https://g.example.com/login/oidc/callback".into(),
            allowed: allowed.iter().map(|a| a.to_string()).collect(),
        };
        let c = |email: &str, verified: bool| Claims {
            sub: "u".into(),
            email: Some(email.into()),
            email_verified: Some(verified),
            ..Claims::default()
        };
        let anyone = Oidc::new(cfg(&[])).unwrap_or_else(|e| panic!("{e}"));
        assert!(anyone.allow(&c("x@y.example", false)).is_ok());
        let some = Oidc::new(cfg(&["@factory.example", "boss@hq.example"])).unwrap_or_else(|e| panic!("{e}"));
        assert!(some.allow(&c("Ops@Factory.example", true)).is_ok());
        assert!(some.allow(&c("boss@hq.example", true)).is_ok());
        assert!(matches!(some.allow(&c("ops@factory.example", false)), Err(OidcError::NotAllowed(_))));
        assert!(matches!(some.allow(&c("ops@evilfactory.example.com", true)), Err(OidcError::NotAllowed(_))));
        assert!(matches!(some.allow(&c("x@notfactory.example", true)), Err(OidcError::NotAllowed(_))));
    }

    /// A callback is accepted once, from the browser that started it, within ten minutes.
    #[tokio::test]
    async fn a_state_is_used_once_by_its_own_browser() {
        let o = Oidc::new(Config {
            issuer: "http://127.0.0.1:9/".into(),
            client_id: "gpudash".into(),
            client_secret: "s".into(),
            redirect_url: "http://127.0.0.1:9/login/oidc/callback".into(),
            allowed: Vec::new(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let put = |state: &str, started: i64| {
            o.pending
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(state.into(), Pending { nonce: "n".into(), verifier: "v".into(), started })
        };
        put("s1", NOW);
        assert_eq!(o.finish("s1", "c", Some("s2"), NOW).await, Err(OidcError::State), "another browser's");
        assert_eq!(o.finish("s1", "c", Some("s1"), NOW).await, Err(OidcError::State), "used (refused) once");
        put("s3", NOW - PENDING_SECONDS);
        assert_eq!(o.finish("s3", "c", Some("s3"), NOW).await, Err(OidcError::State), "too late");
        put("s4", NOW);
        assert_eq!(o.finish("s4", "c", None, NOW).await, Err(OidcError::State), "no cookie");
        put("s5", NOW);
        // Past the state checks: the provider (nothing listens on port 9) is asked.
        assert!(matches!(o.finish("s5", "c", Some("s5"), NOW).await, Err(OidcError::Provider(_))));
    }
}
