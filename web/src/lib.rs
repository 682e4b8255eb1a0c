//! What gpudash's two services, the site (`gpudash serve`) and the fleet (`gpudash fleet`),
//! serve with: access control and its login page, errors as answers, the accept loop with its
//! limits, the language and time zone of a request, the live stream's wire format, the flags
//! both take, and history's series and charts. It knows nothing of a cluster or of the fleet.

pub mod auth;
pub mod charts;
pub mod cli;
pub mod error;
pub mod oidc;
pub mod origin;
pub mod query;
pub mod series;
pub mod serve;
pub mod wire;
pub mod zone;

/// The language of an answer: `?lang=` (`ja`, `en`), else the best of ours in the request's
/// `Accept-Language`, else the server's `--lang` (so a kiosk browser can be pinned either way).
pub fn answer_lang(default: app::i18n::Lang, headers: &axum::http::HeaderMap, query: Option<&str>) -> app::i18n::Lang {
    use app::i18n::Lang;
    let from_query = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .filter(|(k, _)| k == "lang")
        .find_map(|(_, v)| Lang::parse(&v));
    let from_header = || {
        headers
            .get(axum::http::header::ACCEPT_LANGUAGE)
            .and_then(|v| v.to_str().ok())
            .and_then(Lang::from_accept_language)
    };
    from_query.or_else(from_header).unwrap_or(default)
}
