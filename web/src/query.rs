//! [`Params`]: a request's query string read into a typed struct, refused in gpudash's words.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// The query string as `T` (a struct deriving `Deserialize`, its fields defaulted with
/// `#[serde(default)]` where they are optional). Unlike axum's `Query`, a query that does not
/// fit is the API's JSON 400 naming the parameter (`range: unknown variant "2h", expected one
/// of "1h", "24h", "7d", "30d"`), and a parameter given twice counts once, its last value, as
/// a browser's form and a hand-edited link may repeat one.
#[derive(Debug, Clone, Default)]
pub struct Params<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse(parts.uri.query().unwrap_or("")).map(Params)
    }
}

/// `query` (without the `?`) as `T`: see [`Params`].
pub fn parse<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    let pairs: Vec<(String, String)> =
        form_urlencoded::parse(query.as_bytes()).map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
    from_pairs(&pairs)
}

/// A form's `application/x-www-form-urlencoded` body as `T`, by [`parse`]'s rules (the body
/// read with its own limit first; its content type is not insisted on).
pub fn form<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    parse(&String::from_utf8_lossy(body))
}

/// Decoded `(key, value)` pairs as `T`, as [`parse`] reads a query string.
pub fn from_pairs<T: DeserializeOwned>(pairs: &[(String, String)]) -> Result<T, ApiError> {
    let mut last: Vec<&(String, String)> = Vec::with_capacity(pairs.len());
    for p in pairs {
        last.retain(|seen| seen.0 != p.0);
        last.push(p);
    }
    let once = form_urlencoded::Serializer::new(String::new()).extend_pairs(last).finish();
    let de = serde_urlencoded::Deserializer::new(form_urlencoded::parse(once.as_bytes()));
    serde_path_to_error::deserialize(de).map_err(|e| {
        let field = e.path().to_string();
        let message = format!("{field}: {}", e.inner());
        ApiError::bad(&field, message)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::model::Range;

    #[derive(Debug, Default, serde::Deserialize, PartialEq)]
    #[serde(default)]
    struct Q {
        node: String,
        range: Range,
        lang: Option<String>,
        top: Option<u32>,
    }

    #[test]
    fn a_query_reads_into_its_type_with_defaults_and_the_last_of_a_repeated_key() {
        let q: Q = parse("node=orin%2001&range=7d&range=1h&top=3").unwrap();
        assert_eq!(q, Q { node: "orin 01".into(), range: Range::Hour, lang: None, top: Some(3) });
        let q: Q = parse("").unwrap();
        assert_eq!(q, Q::default());
        assert_eq!(q.range, Range::Day, "a page's default range");
        // Unknown keys are ignored, as they always were.
        assert!(parse::<Q>("utm=1&lang=ja").is_ok_and(|q| q.lang.as_deref() == Some("ja")));
    }

    #[test]
    fn a_bad_value_is_a_400_naming_its_parameter() {
        for (query, field, says) in
            [("range=2h", "range", "1h"), ("range=", "range", "30d"), ("top=many", "top", "invalid")]
        {
            let Err(ApiError::BadRequest { field: Some(f), message }) = parse::<Q>(query) else {
                panic!("{query}: not refused")
            };
            assert_eq!(f, field, "{query}");
            assert!(message.starts_with(&format!("{field}: ")) && message.contains(says), "{query}: {message}");
        }
    }
}
