//! What both services (`gpudash serve` and `gpudash fleet`) are configured and started with:
//! sign-in flags, the base path, frame ancestors, logging and the shutdown signal.

use std::path::PathBuf;

use clap::ValueEnum;

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Sign-in and the Host names answered, the same for `gpudash serve` and `gpudash fleet`.
#[derive(Debug, Clone, clap::Args)]
pub struct AuthArgs {
    /// Require this token (file: one line, ≥ 32 characters) as a bearer token or via the login
    /// form; the probes stay open.
    #[arg(long, env = "GPUDASH_AUTH_TOKEN_FILE")]
    pub auth_token_file: Option<PathBuf>,
    /// Trust this header (e.g. X-Forwarded-User) set by an authenticating proxy in front, on
    /// requests from `--trusted-proxy` addresses only.
    #[arg(long, alias = "auth-proxy-header", env = "GPUDASH_TRUSTED_PROXY_HEADER")]
    pub trusted_proxy_header: Option<String>,
    /// Addresses or networks the authenticating proxy connects from (`10.42.0.0/16`,
    /// `127.0.0.1`); loopback only when none are given (a proxy in the same pod).
    #[arg(long, env = "GPUDASH_TRUSTED_PROXY", value_delimiter = ',')]
    pub trusted_proxy: Vec<crate::auth::Net>,
    /// Host names (with or without port) answered beside the listen address, `localhost` and
    /// `127.0.0.1`. With no sign-in, a request naming another Host is refused with 421 (a page
    /// on another site cannot read an open dashboard through DNS rebinding); `*` allows any.
    #[arg(long, env = "GPUDASH_ALLOWED_HOST", value_delimiter = ',')]
    pub allowed_host: Vec<String>,
    /// Sign people in through this OpenID Connect provider (its issuer URL, as its discovery
    /// document names it; https, or http on loopback). Needs --oidc-client-id,
    /// --oidc-client-secret-file and --oidc-redirect-url.
    #[arg(long, env = "GPUDASH_OIDC_ISSUER")]
    pub oidc_issuer: Option<String>,
    /// The client id gpudash is registered under at the provider.
    #[arg(long, env = "GPUDASH_OIDC_CLIENT_ID")]
    pub oidc_client_id: Option<String>,
    /// A file holding the client secret (one line).
    #[arg(long, env = "GPUDASH_OIDC_CLIENT_SECRET_FILE")]
    pub oidc_client_secret_file: Option<PathBuf>,
    /// gpudash's callback as browsers reach it, registered with the provider:
    /// `https://gpudash.example.com/login/oidc/callback` (with the base path, if any).
    #[arg(long, env = "GPUDASH_OIDC_REDIRECT_URL")]
    pub oidc_redirect_url: Option<String>,
    /// Let in only these verified addresses (`ops@example.com`) or domains (`@example.com`);
    /// none: anyone the provider signs in.
    #[arg(long, env = "GPUDASH_OIDC_ALLOWED_EMAIL", value_delimiter = ',')]
    pub oidc_allowed_email: Vec<String>,
}

impl AuthArgs {
    /// The access policy these flags give, under `base`.
    pub fn access(&self, base: &str) -> Result<crate::auth::Access, crate::auth::TokenError> {
        let mut access = crate::auth::Access::from_flags(
            self.auth_token_file.as_deref(),
            self.trusted_proxy_header.as_deref(),
            &self.trusted_proxy,
            base,
            &self.allowed_host,
        )?;
        access.oidc = self.oidc()?.map(std::sync::Arc::new);
        Ok(access)
    }

    /// The identity provider these flags name, checked: all four flags or none, an issuer and a
    /// redirect over https (http only on loopback), a secret that can be read.
    fn oidc(&self) -> Result<Option<crate::oidc::Oidc>, crate::auth::TokenError> {
        use crate::auth::TokenError::Oidc as Bad;
        let (issuer, id, secret, redirect) =
            match (&self.oidc_issuer, &self.oidc_client_id, &self.oidc_client_secret_file, &self.oidc_redirect_url) {
                (None, None, None, None) => return Ok(None),
                (Some(i), Some(c), Some(s), Some(r)) => (i.trim(), c.trim(), s, r.trim()),
                _ => return Err(Bad(
                    "--oidc-issuer, --oidc-client-id, --oidc-client-secret-file and --oidc-redirect-url go together"
                        .into(),
                )),
            };
        for (flag, url) in [("--oidc-issuer", issuer), ("--oidc-redirect-url", redirect)] {
            let local = ["http://127.0.0.1", "http://localhost", "http://[::1]"]
                .iter()
                .any(|p| url.strip_prefix(p).is_some_and(|rest| rest.is_empty() || rest.starts_with([':', '/'])));
            if !url.starts_with("https://") && !local {
                return Err(Bad(format!("{flag} {url:?}: must be https:// (http only on loopback)")));
            }
        }
        if !redirect.ends_with("/login/oidc/callback") {
            return Err(Bad(format!("--oidc-redirect-url {redirect:?}: must end in /login/oidc/callback")));
        }
        let secret = std::fs::read_to_string(secret)
            .map_err(|e| Bad(format!("--oidc-client-secret-file {}: {e}", secret.display())))?;
        let secret = secret.trim();
        if secret.is_empty() || id.is_empty() {
            return Err(Bad("--oidc-client-id and the client secret must not be empty".into()));
        }
        let cfg = crate::oidc::Config {
            issuer: issuer.to_string(),
            client_id: id.to_string(),
            client_secret: secret.into(),
            redirect_url: redirect.to_string(),
            allowed: self.oidc_allowed_email.iter().map(|a| a.trim().to_string()).filter(|a| !a.is_empty()).collect(),
        };
        crate::oidc::Oidc::new(cfg).map(Some).map_err(|e| Bad(e.to_string()))
    }
}

/// A `serve` setting that cannot be used, with what is accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `--base-path` is not a path prefix.
    #[error("--base-path {0:?} must look like /gpu or /tools/gpu (letters, digits, - _ . ~)")]
    BasePath(String),
    /// `--frame-ancestors` names a wildcard.
    #[error(
        "--frame-ancestors {0:?}: wildcards are refused; list each portal origin, e.g. https://portal.example.com"
    )]
    Wildcard(String),
    /// `--frame-ancestors` names something that is not an origin.
    #[error("--frame-ancestors {0:?}: expected an origin such as https://portal.example.com or 'self'")]
    NotAnOrigin(String),
}

/// Normalises and checks a base path: empty or `/x[/y]`, no trailing slash, no dot segments.
pub fn base_path(raw: &str) -> Result<String, ConfigError> {
    let t = raw.trim().trim_end_matches('/');
    if t.is_empty() {
        return Ok(String::new());
    }
    let ok = t.starts_with('/')
        && t[1..].split('/').all(|s| {
            !s.is_empty() && s != "." && s != ".." && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.~".contains(c))
        });
    if ok {
        Ok(t.to_string())
    } else {
        Err(ConfigError::BasePath(raw.to_string()))
    }
}

/// Checks the frame-ancestors allow-list: explicit origins only, wildcards refused.
pub fn frame_ancestors(list: &[String]) -> Result<Vec<String>, ConfigError> {
    let mut out = Vec::new();
    for raw in list.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        if raw.contains('*') {
            return Err(ConfigError::Wildcard(raw.to_string()));
        }
        let ok = (raw.starts_with("https://") || raw.starts_with("http://") || raw == "'self'")
            && !raw.contains(|c: char| c.is_whitespace() || c == ';' || c == ',' || c == '\'' && raw != "'self'");
        if !ok {
            return Err(ConfigError::NotAnOrigin(raw.to_string()));
        }
        out.push(raw.trim_end_matches('/').to_string());
    }
    Ok(out)
}

/// Logs to stderr as `format`, filtered by `GPUDASH_LOG`.
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("GPUDASH_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,kube=warn,tower_http=warn,hyper=warn,sqlx=warn"));
    let b = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Json => b.json().try_init(),
        LogFormat::Text => b.try_init(),
    };
}

/// SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_paths_are_normalised_or_refused() {
        assert_eq!(base_path(""), Ok(String::new()));
        assert_eq!(base_path("/"), Ok(String::new()));
        assert_eq!(base_path("/gpu/"), Ok("/gpu".into()));
        assert_eq!(base_path("/tools/gpu"), Ok("/tools/gpu".into()));
        for bad in ["gpu", "/a/../b", "/a//b", "/a b", "/<x>"] {
            assert!(base_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frame_ancestors_refuse_wildcards_and_junk() {
        assert_eq!(
            frame_ancestors(&["https://portal.example.com/".into()]),
            Ok(vec!["https://portal.example.com".into()])
        );
        assert_eq!(frame_ancestors(&["'self'".into()]), Ok(vec!["'self'".into()]));
        for bad in ["*", "https://*.example.com", "portal.example.com", "https://a; script-src *"] {
            assert!(frame_ancestors(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
