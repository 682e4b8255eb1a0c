//! The browser's wire: how the boot state and the live stream reach the browser's bundle.
//!
//! JSON is the API's and every other reader's. The bundle reads postcard instead (positional:
//! a struct is its fields in order, no names), as base64 text (a server-sent event and a
//! `<script>` element carry text). Decoding JSON into the view model was a third of the
//! bundle — serde's map visitors, field-name matching and error messages, one copy per type —
//! and decoding postcard is a sequence of reads: the same bundle is 46 KB gzip lighter
//! (docs/benchmarks.md, "Page weight, round four").
//!
//! Positional means both sides must agree on every field: the server writes, through
//! [`crate::i18n::to_postcard`], exactly the fields the browser's build has. The browser's
//! build leaves some out (or does not read them); they are listed in [`LEFT_OUT`] and the
//! server does not write them. A field the server skips when `None` is written as `None`.

/// The fields (struct, field) the server does not write to the browser: those the browser's
/// build (the `hydrate` feature) does not have (`#[cfg(not(feature = "hydrate"))]`) or does
/// not read (`skip_deserializing`). A field added to either list in the model must be added
/// here, or the browser cannot read the stream (the Chromium tests fail on it).
pub const LEFT_OUT: &[(&str, &str)] = &[
    ("Boot", "range"),
    ("Boot", "pod"),
    ("Boot", "fit"),
    ("ClusterView", "quotas"),
    ("ViewDelta", "quotas"),
    ("MemoryView", "board_free_bytes"),
    ("MemoryView", "split"),
    ("Holder", "share_permille"),
    ("GpuResource", "devices"),
    ("AgentView", "error"),
    ("AgentView", "gpu_busy_percent"),
    ("GpuUser", "evidence"),
    ("PodMemory", "gpu_memory_bytes"),
    ("NodeView", "gpu_users_outside_more"),
    ("NodeView", "down"),
];

/// `value` for the browser: postcard, every sentence in `lang`, as base64 text.
#[cfg(not(feature = "hydrate"))]
pub fn to_browser<T: serde::Serialize + ?Sized>(lang: crate::i18n::Lang, value: &T) -> Result<String, String> {
    crate::i18n::to_postcard(lang, value).map(|b| base64(&b)).map_err(|e| e.to_string())
}

/// What [`to_browser`] wrote, read back (None when it is not base64 or not a `T`).
pub fn from_browser<T: serde::de::DeserializeOwned>(text: &str) -> Option<T> {
    postcard::from_bytes(&unbase64(text.trim())?).ok()
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// [`base64`] read back; None on a character outside the alphabet or a wrong length.
pub fn unbase64(text: &str) -> Option<Vec<u8>> {
    let t = text.trim_end_matches('=').as_bytes();
    if t.len() % 4 == 1 || !text.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(t.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in t {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_rfc_4648() {
        // RFC 4648 §10's test vectors.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), coded);
            assert_eq!(unbase64(coded).as_deref(), Some(plain.as_bytes()));
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(unbase64(&base64(&all)), Some(all));
        for bad in ["Zg=", "Z", "Zm9v!A==", "Zm 9v"] {
            assert_eq!(unbase64(bad), None, "{bad}");
        }
    }
}
