//! Where a request comes from, as the access policy asks it: a trusted proxy's network, the Host
//! names an open dashboard answers to (against DNS rebinding), and whether a browser sent it
//! from another site.

/// An address or network a trusted proxy's requests come from: `10.42.0.0/16`, `fd00::/8`,
/// `127.0.0.1` (a single address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Net {
    addr: std::net::IpAddr,
    bits: u8,
}

impl std::str::FromStr for Net {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        let (a, b) = s.split_once('/').map_or((s, None), |(a, b)| (a, Some(b)));
        let addr: std::net::IpAddr = a
            .parse()
            .map_err(|_| format!("{s:?} is not an IP address or network (10.42.0.0/16, fd00::/8, 127.0.0.1)"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let bits = match b {
            None => max,
            Some(b) => b
                .parse::<u8>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| format!("{s:?}: the prefix length must be 0–{max}"))?,
        };
        Ok(Self { addr, bits })
    }
}

impl Net {
    /// Whether `ip` is in this network (an IPv4 address written as IPv6 counts as IPv4).
    pub fn contains(&self, ip: std::net::IpAddr) -> bool {
        use std::net::IpAddr;
        let ip = ip.to_canonical();
        let (a, b, width) = match (self.addr, ip) {
            (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(u32::from(a)), u128::from(u32::from(b)), 32),
            (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a), u128::from(b), 128),
            _ => return false,
        };
        let shift = width - u32::from(self.bits);
        shift >= width || (a >> shift) == (b >> shift)
    }

    /// 127.0.0.0/8 and ::1: a proxy in the same pod (a sidecar).
    pub fn loopback() -> Vec<Net> {
        vec![
            Net { addr: std::net::IpAddr::V4(std::net::Ipv4Addr::new(127, 0, 0, 0)), bits: 8 },
            Net { addr: std::net::IpAddr::V6(std::net::Ipv6Addr::LOCALHOST), bits: 128 },
        ]
    }
}

/// The Host names an open dashboard answers to. IP literals, `localhost` and in-cluster Service
/// names (`….svc`, `….svc.cluster.local`) always; others only when named (`--allowed-host`).
/// A page on another site that rebinds its own DNS name to gpudash's address sends its own name
/// as Host, and is refused with 421.
#[derive(Debug, Clone, Default)]
pub struct Hosts {
    /// `*` was given: any Host.
    pub any: bool,
    /// Names given (lower case, without port).
    pub names: Vec<String>,
}

impl Hosts {
    /// From `--allowed-host` values (`name`, `name:port`, `*`).
    pub fn new(given: &[String]) -> Self {
        let mut h = Hosts::default();
        for g in given.iter().map(|g| g.trim().to_ascii_lowercase()).filter(|g| !g.is_empty()) {
            if g == "*" {
                h.any = true;
            } else {
                h.names.push(host_name(&g).to_string());
            }
        }
        h
    }

    /// Whether a request with this Host header value is answered.
    pub fn allows(&self, host: &str) -> bool {
        let name = host_name(host).trim_end_matches('.').to_ascii_lowercase();
        self.any
            || name.parse::<std::net::IpAddr>().is_ok()
            || name == "localhost"
            || name.ends_with(".localhost")
            || name.ends_with(".svc")
            || name.ends_with(".svc.cluster.local")
            || self.names.contains(&name)
    }
}

/// The name part of a Host value: `[::1]:8080` → `::1`, `gpu.example:443` → `gpu.example`.
fn host_name(host: &str) -> &str {
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) && !name.contains(':') => name,
        _ => host,
    }
}

/// Whether a state-changing request comes from another site, as browsers tell it: a
/// `Sec-Fetch-Site` other than `same-origin` or `none` (typed, bookmarked), else an `Origin`
/// whose host is not the request's Host (nor the proxy's `X-Forwarded-Host`). A request with
/// neither header is not from a browser page (curl, scripts) and passes. This is the check Go's
/// `net/http.CrossOriginProtection` makes.
pub fn cross_site(headers: &axum::http::HeaderMap) -> bool {
    let get = |h: &str| headers.get(h).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(site) = get("sec-fetch-site") {
        return !matches!(site, "same-origin" | "none");
    }
    let Some(origin) = get("origin") else { return false };
    let origin_host = origin.split_once("://").map_or("", |(_, rest)| rest);
    let host = get("host").unwrap_or("");
    let fwd = get("x-forwarded-host").and_then(|f| f.split(',').next()).map(str::trim);
    !(origin_host.eq_ignore_ascii_case(host) || fwd.is_some_and(|f| origin_host.eq_ignore_ascii_case(f)))
}
