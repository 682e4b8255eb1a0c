//! The zone a reader's times are shown in: the zone their browser reports (a first-visit script
//! stores it in the `gpudash_tz` cookie), else the site's (`--timezone`, else `TZ`), else UTC.
//! Pages get the zone's offsets around the moment they are made ([`page_zone`]), so that the
//! browser needs no time-zone database; charts get the zone itself.

use axum::http::HeaderMap;

/// The cookie the page's script sets to the browser's IANA zone.
pub const COOKIE: &str = app::time::ZONE_COOKIE;

/// How far around the page's moment its zone's offsets are given (a live page or a kiosk left
/// open that long keeps the right offset across a daylight-saving change).
const WINDOW_SECONDS: i64 = 40 * 86_400;

/// A zone name as the tz database spells them (`Asia/Tokyo`, `UTC`, `Etc/GMT-9`), or nothing.
fn plausible(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '_' | '-' | '+'))
        && !name.contains("..")
}

/// Looks a zone up by name; `None` for a name the database does not have.
pub fn resolve(name: &str) -> Option<jiff::tz::TimeZone> {
    if !plausible(name) {
        return None;
    }
    jiff::tz::TimeZone::get(name).ok()
}

/// The site's zone from `--timezone` or `TZ` (a leading `:` as in `TZ=:Asia/Tokyo` allowed):
/// `Err` says why a configured zone cannot be used.
pub fn site_zone(configured: Option<&str>) -> Result<String, String> {
    let Some(name) = configured.map(|n| n.trim().trim_start_matches(':')).filter(|n| !n.is_empty()) else {
        return Ok("UTC".into());
    };
    match resolve(name) {
        Some(_) => Ok(name.to_string()),
        None => {
            Err(format!("time zone {name:?} is not in the time-zone database: give an IANA name such as Asia/Tokyo"))
        }
    }
}

/// The site's zone at start: `configured` (`--timezone`; `Err` when the database does not
/// have it), else `TZ` as the host sets it (one that names no zone, such as `:/etc/localtime`,
/// is logged and UTC used), else UTC.
pub fn at_start(configured: Option<&str>) -> anyhow::Result<String> {
    if let Some(z) = configured {
        return site_zone(Some(z)).map_err(|e| anyhow::anyhow!("--timezone: {e}"));
    }
    Ok(match std::env::var("TZ") {
        Ok(tz) => site_zone(Some(&tz)).unwrap_or_else(|e| {
            tracing::warn!("TZ: {e}; times are shown in UTC until readers' browsers say their zone");
            "UTC".into()
        }),
        Err(_) => "UTC".into(),
    })
}

/// The zone of a request: its cookie's when the database has it, else `site`.
pub fn of_request(headers: &HeaderMap, site: &str) -> (String, jiff::tz::TimeZone) {
    let from_cookie = headers
        .get_all(axum::http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|kv| kv.trim().strip_prefix(COOKIE)?.strip_prefix('=').map(app::boot::percent_decode))
        .and_then(|name| resolve(&name).map(|tz| (name, tz)));
    from_cookie.unwrap_or_else(|| (site.to_string(), resolve(site).unwrap_or(jiff::tz::TimeZone::UTC)))
}

/// The zone's offsets from `now - WINDOW` to `now + WINDOW`, as pages carry them.
pub fn page_zone(name: &str, tz: &jiff::tz::TimeZone, now: jiff::Timestamp) -> app::time::Zone {
    let span = |ts: jiff::Timestamp| {
        let info = tz.to_offset_info(ts);
        (info.offset().seconds(), info.abbreviation().to_string())
    };
    let start = now.checked_sub(jiff::SignedDuration::from_secs(WINDOW_SECONDS)).unwrap_or(now);
    let end = now.as_second().saturating_add(WINDOW_SECONDS);
    let (off, abbr) = span(start);
    let mut spans = vec![(i64::MIN, off, abbr)];
    for t in tz.following(start).take(8) {
        if t.timestamp().as_second() > end {
            break;
        }
        spans.push((t.timestamp().as_second(), t.offset().seconds(), t.abbreviation().to_string()));
    }
    app::time::Zone { name: name.to_string(), spans }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(cookie: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Ok(v) = cookie.parse() {
            h.insert(axum::http::header::COOKIE, v);
        }
        h
    }

    #[test]
    fn the_readers_cookie_wins_a_bad_one_falls_back_to_the_sites() {
        assert_eq!(of_request(&headers("a=1; gpudash_tz=Asia%2FTokyo"), "UTC").0, "Asia/Tokyo");
        assert_eq!(of_request(&headers("gpudash_tz=Europe/Berlin"), "UTC").0, "Europe/Berlin");
        for bad in ["gpudash_tz=Mars/Olympus", "gpudash_tz=../../etc/passwd", "gpudash_tz=", "other=1"] {
            assert_eq!(of_request(&headers(bad), "Asia/Tokyo").0, "Asia/Tokyo", "{bad}");
        }
        assert_eq!(site_zone(Some(":Asia/Tokyo")), Ok("Asia/Tokyo".into()));
        assert_eq!(site_zone(None), Ok("UTC".into()));
        assert!(site_zone(Some("Tokio")).is_err_and(|e| e.contains("IANA")));
    }

    #[test]
    fn a_page_carries_the_offsets_around_its_moment() {
        let tz = resolve("Asia/Tokyo").unwrap_or(jiff::tz::TimeZone::UTC);
        let now: jiff::Timestamp = "2026-12-05T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let z = page_zone("Asia/Tokyo", &tz, now);
        assert_eq!(z.spans, vec![(i64::MIN, 9 * 3600, "JST".to_string())]);
        assert_eq!(z.clock(now.as_second()), "21:00:00 JST");
        // Berlin two weeks before summer time ends: both offsets, the change where it is.
        let tz = resolve("Europe/Berlin").unwrap_or(jiff::tz::TimeZone::UTC);
        let now: jiff::Timestamp = "2026-10-11T12:00:00Z".parse().unwrap_or(jiff::Timestamp::UNIX_EPOCH);
        let z = page_zone("Europe/Berlin", &tz, now);
        assert_eq!(z.clock(now.as_second()), "14:00:00 CEST");
        assert_eq!(z.clock(1_792_890_000), "02:00:00 CET", "{:?}", z.spans);
        assert_eq!(z.clock(1_792_890_000 - 1), "02:59:59 CEST");
    }
}
