//! Just enough time handling for the browser: RFC 3339 to Unix seconds and clock times,
//! without pulling a date library into the WASM bundle.

/// Days from 1970-01-01 to a civil date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month, day)` of a day number (days since 1970-01-01; Howard
/// Hinnant's algorithm, the inverse of [`days_from_civil`]).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Parses `2026-12-02T12:43:13Z` (fractional seconds and numeric offsets allowed).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let s = s.trim();
    let num = |a: usize, b: usize| s.get(a..b)?.parse::<i64>().ok();
    if s.len() < 20 || s.as_bytes().get(10).map(|c| c.to_ascii_uppercase()) != Some(b'T') {
        return None;
    }
    let (y, mo, d, h, mi, se) = (num(0, 4)?, num(5, 7)?, num(8, 10)?, num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        rest = r.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    let offset = match rest {
        "Z" | "z" => 0,
        r if r.len() == 6 && (r.starts_with('+') || r.starts_with('-')) => {
            let oh: i64 = r.get(1..3)?.parse().ok()?;
            let om: i64 = r.get(4..6)?.parse().ok()?;
            let o = oh * 3600 + om * 60;
            if r.starts_with('-') {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    Some(days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + se - offset)
}

/// The cookie in which the page's script keeps the browser's zone for the server.
pub const ZONE_COOKIE: &str = "gpudash_tz";

/// The script every page (the site's and the fleet's) runs first, from a `<script>` element
/// whose `data-zone` names the zone the page was made in: it stores the browser's zone in
/// [`ZONE_COOKIE`] for the server (pages and charts) and has the page made again once when it
/// was made in another zone (never more than once a session).
pub const ZONE_SCRIPT: &str = "(function(){try{var s=document.currentScript,\
z=Intl.DateTimeFormat().resolvedOptions().timeZone;if(!z)return;var c='gpudash_tz='+encodeURIComponent(z);\
if(document.cookie.split('; ').indexOf(c)<0)document.cookie=c+';path=/;max-age=31536000;samesite=lax';\
if(s&&z!==s.dataset.zone&&!sessionStorage.getItem('gd-tz')){sessionStorage.setItem('gd-tz','1');location.reload();}}\
catch(e){}})();";

/// The time zone a page shows times in: the reader's (the zone the browser reports, kept in a
/// cookie), else the site's (`--timezone`/`TZ`), else UTC. The server cuts from the time-zone
/// database the offsets the zone has around the page's moment, so that neither the browser
/// bundle nor a view carries a database: a view only looks its time up here.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Zone {
    /// IANA name (`Asia/Tokyo`), or `UTC`.
    pub name: String,
    /// `(from, offset, abbreviation)`: from Unix second `from` on, `offset` seconds east of UTC
    /// and its abbreviation (`JST`, `CEST`, `+0530`); sorted by `from`, the first applying
    /// before it too.
    pub spans: Vec<(i64, i32, String)>,
}

impl Default for Zone {
    fn default() -> Self {
        Self { name: "UTC".into(), spans: vec![(i64::MIN, 0, "UTC".into())] }
    }
}

impl Zone {
    /// The offset (seconds east of UTC) and abbreviation at a Unix time.
    pub fn at(&self, unix: i64) -> (i64, &str) {
        let i = self.spans.partition_point(|s| s.0 <= unix).saturating_sub(1);
        self.spans.get(i).map_or((0, "UTC"), |s| (i64::from(s.1), s.2.as_str()))
    }

    /// `HH:MM:SS ZONE` of a Unix time (`13:02:52 JST`).
    pub fn clock(&self, unix: i64) -> String {
        let (off, abbr) = self.at(unix);
        let t = (unix + off).rem_euclid(86_400);
        format!("{:02}:{:02}:{:02} {abbr}", t / 3600, (t % 3600) / 60, t % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_parses_to_unix_seconds() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2026-12-02T12:43:13Z"), Some(1_796_215_393));
        assert_eq!(parse_rfc3339("2026-12-02T12:43:13.123456Z"), Some(1_796_215_393));
        assert_eq!(parse_rfc3339("2026-12-02T13:43:13+01:00"), Some(1_796_215_393));
        for bad in ["", "yesterday", "2026-13-02T12:43:13Z", "2026-12-02 12:43:13Z", "2026-12-02T12:43:13"] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }

    #[test]
    fn clock_reads_utc() {
        assert_eq!(Zone::default().clock(3661), "01:01:01 UTC");
        assert!(ZONE_SCRIPT.contains(&format!("'{ZONE_COOKIE}='")), "the script sets the cookie the server reads");
        // Tokyo: one span; Berlin across the end of summer time (2026-10-25 01:00 UTC).
        let tokyo = Zone { name: "Asia/Tokyo".into(), spans: vec![(i64::MIN, 9 * 3600, "JST".into())] };
        assert_eq!(tokyo.clock(1_796_215_393), "21:43:13 JST");
        let end_of_summer = 1_792_890_000;
        let berlin = Zone {
            name: "Europe/Berlin".into(),
            spans: vec![(i64::MIN, 7200, "CEST".into()), (end_of_summer, 3600, "CET".into())],
        };
        assert_eq!(berlin.clock(end_of_summer - 1), "02:59:59 CEST");
        assert_eq!(berlin.clock(end_of_summer), "02:00:00 CET");
        assert_eq!(Zone { name: "x".into(), spans: Vec::new() }.clock(0), "00:00:00 UTC", "no span reads as UTC");
    }
}
