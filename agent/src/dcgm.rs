//! The node-local dcgm-exporter's `/metrics` text, read into per-GPU use: utilisation and
//! framebuffer, with the pods dcgm-exporter names on each GPU (its Kubernetes mode). A metric a
//! GPU does not report stays `None` — never a zero.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One GPU's use as dcgm-exporter reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GpuUse {
    /// `gpu` label: the index on the node.
    pub index: String,
    /// `UUID` label.
    pub uuid: Option<String>,
    /// `modelName` label.
    pub model: Option<String>,
    /// `DCGM_FI_DEV_GPU_UTIL`, percent.
    pub busy_percent: Option<f64>,
    /// `DCGM_FI_DEV_FB_USED` (MiB in the exporter), bytes.
    pub memory_used_bytes: Option<u64>,
    /// `DCGM_FI_DEV_FB_FREE`, bytes.
    pub memory_free_bytes: Option<u64>,
    /// Pods dcgm-exporter names on this GPU (`namespace`, `pod`), when it runs in Kubernetes mode.
    pub pods: Vec<(String, String)>,
}

/// A line of the exposition that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dcgm-exporter metrics line {line}: {why}")]
pub struct ParseError {
    /// The line, counted from 1.
    pub line: usize,
    /// What is wrong.
    pub why: &'static str,
}

/// `{a="x",b="y \" z"}` → labels; the rest of the line after `}`.
fn labels(s: &str) -> Option<(BTreeMap<String, String>, &str)> {
    let mut out = BTreeMap::new();
    let mut rest = s.strip_prefix('{')?;
    loop {
        rest = rest.trim_start_matches([',', ' ']);
        if let Some(after) = rest.strip_prefix('}') {
            return Some((out, after));
        }
        let (key, after) = rest.split_once("=\"")?;
        let mut value = String::new();
        let mut chars = after.char_indices();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '\\' => match chars.next()?.1 {
                    'n' => value.push('\n'),
                    other => value.push(other),
                },
                '"' => break i,
                c => value.push(c),
            }
        };
        out.insert(key.trim().to_string(), value);
        rest = &after[end + 1..];
    }
}

const MIB: f64 = 1024.0 * 1024.0;

/// Parses dcgm-exporter's metrics text into per-GPU use, by GPU index.
pub fn parse(text: &str) -> Result<Vec<GpuUse>, ParseError> {
    let mut gpus: BTreeMap<String, GpuUse> = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let err = |why| ParseError { line: n + 1, why };
        let brace = line.find('{').ok_or_else(|| err("no labels"))?;
        let name = &line[..brace];
        let (l, rest) = labels(&line[brace..]).ok_or_else(|| err("labels not closed"))?;
        let value: f64 = rest.split_whitespace().next().and_then(|v| v.parse().ok()).ok_or_else(|| err("no value"))?;
        let Some(index) = l.get("gpu").cloned() else { continue };
        let g = gpus.entry(index.clone()).or_insert_with(|| GpuUse { index, ..GpuUse::default() });
        g.uuid = g.uuid.take().or_else(|| l.get("UUID").or_else(|| l.get("uuid")).cloned());
        g.model = g.model.take().or_else(|| l.get("modelName").cloned());
        let (ns, pod) =
            (l.get("namespace").or_else(|| l.get("pod_namespace")), l.get("pod").or_else(|| l.get("pod_name")));
        if let (Some(ns), Some(pod)) = (ns.filter(|s| !s.is_empty()), pod.filter(|s| !s.is_empty())) {
            if !g.pods.iter().any(|(a, b)| a == ns && b == pod) {
                g.pods.push((ns.clone(), pod.clone()));
            }
        }
        let bytes = |mib: f64| (mib.is_finite() && mib >= 0.0).then_some((mib * MIB) as u64);
        match name {
            "DCGM_FI_DEV_GPU_UTIL" => g.busy_percent = Some(value),
            "DCGM_FI_DEV_FB_USED" => g.memory_used_bytes = bytes(value),
            "DCGM_FI_DEV_FB_FREE" => g.memory_free_bytes = bytes(value),
            _ => {}
        }
    }
    Ok(gpus.into_values().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/fixtures/dcgm/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn a_real_exporters_utilisation_and_framebuffer_are_read() {
        let g = parse(&fixture("rtx-a5000.prom")).unwrap();
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].model.as_deref(), Some("NVIDIA RTX A5000"));
        assert_eq!(g[0].busy_percent, Some(0.0), "0 % reported is 0, not unknown");
        assert_eq!(g[0].memory_used_bytes, Some(21383 * 1024 * 1024));
        assert_eq!(g[0].memory_free_bytes, None, "not reported: unknown");
        assert!(g[0].pods.is_empty());
    }

    #[test]
    fn four_gpus_are_told_apart_and_empty_pod_labels_name_no_pod() {
        let g = parse(&fixture("a100-fake-gpu-operator.prom")).unwrap();
        assert_eq!(g.iter().map(|g| g.index.as_str()).collect::<Vec<_>>(), ["0", "1", "2", "3"]);
        assert_eq!(g[0].uuid.as_deref(), Some("GPU-cc0557e3-8fbd-51f0-b7d3-7a548c581d7f"));
        assert!(g.iter().all(|g| g.busy_percent.is_none() && g.pods.is_empty()));
    }

    /// An exporter that trickles its page a byte at a time, each within the read timeout: the
    /// scrape ends with an error after twice the timeout (it never ended before).
    #[test]
    fn a_trickling_exporter_is_given_up_with_an_error() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let halt = stop.clone();
        let trickle = std::thread::spawn(move || {
            if let Ok((mut c, _)) = listener.accept() {
                let _ = c.write_all(b"HTTP/1.0 200 OK\r\n\r\n");
                for _ in 0..100 {
                    if halt.load(std::sync::atomic::Ordering::Relaxed) || c.write_all(b"#").is_err() {
                        break;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
        });
        let t = std::time::Instant::now();
        let e = scrape(&format!("http://{addr}/metrics"), std::time::Duration::from_millis(300)).err();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = trickle.join();
        let said = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(said.contains("longer than 0.6 s in all"), "{said}");
        assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
    }

    #[test]
    fn pods_escapes_and_bad_lines() {
        let text = "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",UUID=\"GPU-x\",namespace=\"ml\",pod=\"a \\\"b\\\"\"} 97\n";
        let g = parse(text).unwrap();
        assert_eq!(g[0].pods, [("ml".to_string(), "a \"b\"".to_string())]);
        assert_eq!(g[0].busy_percent, Some(97.0));
        assert_eq!(parse("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 5").map_err(|e| e.why), Err("labels not closed"));
        assert_eq!(parse("garbage 5").map_err(|e| e.line), Err(1));
    }
}

/// Why dcgm-exporter could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ScrapeError {
    /// Only `http://host:port/path` is read (the exporter is node-local and plain HTTP).
    #[error("dcgm-exporter address {0:?}: expected http://host:port/path")]
    Url(String),
    /// The connection or the read failed.
    #[error("dcgm-exporter at {url}: {source}")]
    Io {
        /// The address.
        url: String,
        /// Why.
        source: std::io::Error,
    },
    /// It answered, but not 200.
    #[error("dcgm-exporter at {url} answered {status:?}")]
    Status {
        /// The address.
        url: String,
        /// The status line.
        status: String,
    },
    /// The text is not metrics.
    #[error(transparent)]
    Parse(#[from] ParseError),
}

/// Reads dcgm-exporter's `/metrics` once (HTTP/1.0): `timeout` to connect and for each read,
/// and twice `timeout` in all — an exporter that trickles its page (a byte within each read's
/// timeout) held the agent's reader for good, with no error.
pub fn scrape(url: &str, timeout: std::time::Duration) -> Result<Vec<GpuUse>, ScrapeError> {
    use std::io::{Read, Write};
    let deadline = std::time::Instant::now() + timeout * 2;
    let rest = url.strip_prefix("http://").ok_or_else(|| ScrapeError::Url(url.into()))?;
    let (host, path) = rest.split_once('/').map_or((rest, "/metrics".to_string()), |(h, p)| (h, format!("/{p}")));
    let io = |source| ScrapeError::Io { url: url.into(), source };
    let addr = std::net::ToSocketAddrs::to_socket_addrs(host)
        .map_err(io)?
        .next()
        .ok_or_else(|| ScrapeError::Url(url.into()))?;
    let mut s = std::net::TcpStream::connect_timeout(&addr, timeout).map_err(io)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes()).map_err(io)?;
    // dcgm-exporter's page is a few hundred KiB at most; more is not an exporter.
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 << 10];
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            let e = std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the page took longer than {} s in all", (timeout * 2).as_secs_f64()),
            );
            return Err(io(e));
        }
        let cut = left < timeout;
        s.set_read_timeout(Some(left.min(timeout))).map_err(io)?;
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            // A read cut short by the deadline: said as the deadline (at the loop's top).
            Err(e) if cut && matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                std::thread::sleep(deadline.saturating_duration_since(std::time::Instant::now()));
            }
            Err(e) => return Err(io(e)),
        }
        if raw.len() > 8 << 20 {
            break;
        }
    }
    raw.truncate(8 << 20);
    let body = String::from_utf8(raw)
        .map_err(|_| io(std::io::Error::new(std::io::ErrorKind::InvalidData, "the page is not UTF-8")))?;
    let (head, text) = body.split_once("\r\n\r\n").unwrap_or((&body, ""));
    let status = head.lines().next().unwrap_or("");
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(ScrapeError::Status { url: url.into(), status: status.into() });
    }
    Ok(parse(text)?)
}
