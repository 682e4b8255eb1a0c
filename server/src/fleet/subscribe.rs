//! One site's live view: `GET {url}/api/v1/stream` with its bearer token, TLS verified; the
//! whole view first, then deltas applied to it. Anything the site sends (events, keep-alives)
//! counts as contact; a dropped or silent stream is reconnected with backoff, and the last view
//! is kept (shown stale, never zeroed).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use app::model::{ClusterView, ViewDelta};
use futures::StreamExt;

use super::sites::Site;
use super::view::Known;

/// Every site's state, in the sites file's order.
pub type Shared = Arc<Mutex<Vec<(String, String, Known)>>>;

/// A stream silent this long (the site sends a keep-alive every 15 s) is dropped and opened again.
const SILENCE: Duration = Duration::from_secs(40);

fn update(shared: &Shared, i: usize, f: impl FnOnce(&mut Known)) {
    if let Some(s) = shared.lock().unwrap_or_else(|e| e.into_inner()).get_mut(i) {
        f(&mut s.2);
    }
}

/// One server-sent event: its type and data.
fn event(block: &str) -> Option<(String, String)> {
    let mut kind = "message".to_string();
    let mut data: Vec<&str> = Vec::new();
    for line in block.lines() {
        if let Some(v) = line.strip_prefix("event:") {
            kind = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push(v.strip_prefix(' ').unwrap_or(v));
        }
    }
    (!data.is_empty()).then(|| (kind, data.join("\n")))
}

/// An error with its causes (reqwest's own text says only "error sending request").
fn chain(e: &reqwest::Error) -> String {
    // The URL is the site's own (in the sites file): the causes are what is new.
    let mut out = if e.is_connect() {
        "connection failed".to_string()
    } else if e.is_timeout() {
        "timed out".to_string()
    } else {
        "request failed".to_string()
    };
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        out.push_str(": ");
        out.push_str(&s.to_string());
        src = s.source();
    }
    out
}

/// Why a connection ended.
async fn follow(
    client: &reqwest::Client,
    site: &Site,
    i: usize,
    shared: &Shared,
    changed: &tokio::sync::Notify,
) -> String {
    let mut req = client.get(format!("{}/api/v1/stream", site.url)).header("Accept", "text/event-stream");
    if let Some(t) = &site.token {
        req = req.bearer_auth(t);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return format!("cannot connect: {}", chain(&e)),
    };
    if !resp.status().is_success() {
        let hint = if resp.status() == reqwest::StatusCode::UNAUTHORIZED { " (check its token_file)" } else { "" };
        return format!("{}/api/v1/stream answered {}{hint}", site.url, resp.status());
    }
    update(shared, i, |k| {
        k.connected = true;
        k.error = None;
    });
    let mut body = resp.bytes_stream();
    // Bytes, not text: a character split between two chunks is decoded once its event is whole.
    let mut buf: Vec<u8> = Vec::new();
    let mut view: Option<ClusterView> = None;
    loop {
        let chunk = match tokio::time::timeout(SILENCE, body.next()).await {
            Err(_) => return format!("silent for {} s", SILENCE.as_secs()),
            Ok(None) => return "the stream ended".into(),
            Ok(Some(Err(e))) => return format!("the stream broke: {}", chain(&e)),
            Ok(Some(Ok(c))) => c,
        };
        let now = jiff::Timestamp::now();
        update(shared, i, |k| k.last_contact = Some(now));
        buf.extend_from_slice(&chunk);
        if buf.len() > 64 << 20 {
            return "an event larger than 64 MiB".into();
        }
        while let Some(end) = buf.windows(2).position(|w| w == b"\n\n") {
            let raw: Vec<u8> = buf.drain(..end + 2).collect();
            let Ok(block) = String::from_utf8(raw) else { return "an event that is not UTF-8".into() };
            let Some((kind, data)) = event(&block) else { continue };
            match kind.as_str() {
                "message" => match serde_json::from_str::<ClusterView>(&data) {
                    Ok(v) => view = Some(v),
                    Err(e) => return format!("not a gpudash view: {e}"),
                },
                "delta" => {
                    let Some(v) = view.as_mut() else { return "a delta before the view".into() };
                    let applied = serde_json::from_str::<ViewDelta>(&data).map(|d| d.apply(v));
                    match applied {
                        Ok(true) => {}
                        // A delta from another base: open the stream again for the whole view.
                        Ok(false) => return "a delta from another revision: catching up".into(),
                        Err(e) => return format!("not a gpudash delta: {e}"),
                    }
                }
                _ => continue,
            }
            let snapshot = view.clone().map(Arc::new);
            update(shared, i, |k| {
                k.view = snapshot;
                k.down_since = None;
            });
            changed.notify_one();
        }
    }
}

/// Follows a site for as long as the task lives.
pub async fn run(site: Site, i: usize, client: reqwest::Client, shared: Shared, changed: Arc<tokio::sync::Notify>) {
    let mut pause = Duration::from_millis(500);
    loop {
        let began = std::time::Instant::now();
        let why = follow(&client, &site, i, &shared, &changed).await;
        let now = jiff::Timestamp::now();
        update(&shared, i, |k| {
            if k.connected || k.error.as_deref() != Some(why.as_str()) {
                tracing::warn!(site = %site.name, url = %site.url, "{why}; trying again");
            }
            k.connected = false;
            k.error = Some(why);
            k.down_since.get_or_insert(now);
        });
        changed.notify_one();
        // A connection that held for a while starts the backoff over.
        if began.elapsed() > Duration::from_secs(30) {
            pause = Duration::from_millis(500);
        }
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(30));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_read_as_browsers_read_them() {
        assert_eq!(event("id: 3\nevent: delta\ndata: {\"a\":1}\n\n"), Some(("delta".into(), "{\"a\":1}".into())));
        assert_eq!(event("data: x\ndata: y\n\n"), Some(("message".into(), "x\ny".into())));
        assert_eq!(event(": keep-alive\n\n"), None);
    }
}
