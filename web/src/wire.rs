//! The live stream on the wire: server-sent events, compressed once per event as pieces of one
//! gzip stream that every client shares, and read back (the fleet's site streams, the bench).

/// One server-sent event: `event` (None: a plain message), `id`, and one line of JSON (serde_json
/// escapes newlines, so the data is always one line).
pub fn sse_frame(event: Option<&str>, id: u64, json: &str) -> bytes::Bytes {
    let mut out = String::with_capacity(json.len() + 40);
    if let Some(e) = event {
        out.push_str("event: ");
        out.push_str(e);
        out.push('\n');
    }
    out.push_str("id: ");
    out.push_str(&id.to_string());
    out.push_str("\ndata: ");
    out.push_str(json);
    out.push_str("\n\n");
    bytes::Bytes::from(out)
}

/// The start of a compressed stream response: a gzip header (no name, no time, unknown
/// system). What follows is [`deflate_piece`]s; the gzip trailer never comes, as the stream
/// ends only with its connection.
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// `bytes` as a piece of a raw deflate stream that any such stream can go on with: compressed
/// on its own (it refers to nothing before it) and ended with a sync flush (byte-aligned, no
/// final block). A compressed stream response is [`GZIP_HEADER`] followed by such pieces, so
/// each event is compressed once and the same bytes go to every client — 200 browsers opening
/// a 1,000-node site share one compression of its 7 MB view.
pub fn deflate_piece(bytes: &[u8]) -> bytes::Bytes {
    let mut c = flate2::Compress::new(flate2::Compression::fast(), false);
    let mut out: Vec<u8> = Vec::with_capacity(bytes.len() / 6 + 64);
    loop {
        let done = usize::try_from(c.total_in()).unwrap_or(bytes.len()).min(bytes.len());
        if c.compress_vec(&bytes[done..], &mut out, flate2::FlushCompress::Sync).is_err() {
            // Not reachable with a raw stream and a sync flush; an empty piece keeps the stream
            // valid, and the client's next full view repairs what it missed.
            return bytes::Bytes::new();
        }
        let all_in = usize::try_from(c.total_in()).is_ok_and(|n| n >= bytes.len());
        // The flush is complete when the output did not fill what room there was.
        if all_in && out.len() < out.capacity() {
            return bytes::Bytes::from(out);
        }
        out.reserve(out.capacity().max(64));
    }
}

/// A compressed stream being read ([`GZIP_HEADER`], then raw deflate to the end), for the
/// fleet's site streams and the benchmark's clients.
#[derive(Default)]
pub struct Inflate {
    header: usize,
    d: Option<flate2::Decompress>,
}

/// Why a compressed stream could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InflateError {
    /// Not a gzip header, or not deflate after it.
    #[error("not a gzip stream")]
    Corrupt,
    /// One chunk inflated to more than the limit (a bomb, or an event too large anyway).
    #[error("a chunk inflated beyond {0} bytes")]
    TooLarge(usize),
}

impl Inflate {
    /// Inflates `chunk` onto `out`, adding at most `limit` bytes.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<u8>, limit: usize) -> Result<(), InflateError> {
        let skip = (GZIP_HEADER.len() - self.header).min(chunk.len());
        if chunk[..skip] != GZIP_HEADER[self.header..self.header + skip] {
            return Err(InflateError::Corrupt);
        }
        self.header += skip;
        chunk = &chunk[skip..];
        let d = self.d.get_or_insert_with(|| flate2::Decompress::new(false));
        let start = d.total_in();
        let mut added = 0usize;
        // Into a small buffer, then appended: `decompress_vec` would zero the spare capacity of
        // the (megabytes) event buffer on every call.
        let mut scratch = [0u8; 64 * 1024];
        // Bounded: each call takes input or gives output (or the loop ends), and the output is
        // capped by `limit`.
        loop {
            let (i, o) = (d.total_in(), d.total_out());
            let at = usize::try_from(i - start).unwrap_or(chunk.len()).min(chunk.len());
            d.decompress(&chunk[at..], &mut scratch, flate2::FlushDecompress::Sync)
                .map_err(|_| InflateError::Corrupt)?;
            let made = usize::try_from(d.total_out() - o).unwrap_or(0).min(scratch.len());
            added += made;
            if added > limit {
                return Err(InflateError::TooLarge(limit));
            }
            out.extend_from_slice(&scratch[..made]);
            if d.total_in() == i && made == 0 {
                return Ok(());
            }
        }
    }
}

/// The keep-alive comment, compressed once.
pub fn keep_alive_piece() -> bytes::Bytes {
    static PIECE: std::sync::OnceLock<bytes::Bytes> = std::sync::OnceLock::new();
    PIECE.get_or_init(|| deflate_piece(KEEP_ALIVE)).clone()
}

/// A comment line that keeps proxies from closing a quiet stream.
pub const KEEP_ALIVE: &[u8] = b": keep-alive\n\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(events: &[&[u8]]) -> Vec<u8> {
        let mut out = GZIP_HEADER.to_vec();
        for e in events {
            out.extend_from_slice(&deflate_piece(e));
        }
        out
    }

    /// Pieces compressed apart read back as one stream, whatever the chunks it arrives in.
    #[test]
    fn a_compressed_stream_reads_back_in_any_chunks() {
        let big: String = (0..5000).map(|i| format!("{{\"node\":\"orin-{i}\"}}")).collect();
        let first = format!("id: 1\ndata: {big}\n\n");
        let events: [&[u8]; 3] = [first.as_bytes(), KEEP_ALIVE, b"event: delta\nid: 2\ndata: {}\n\n"];
        let want: Vec<u8> = events.concat();
        let gz = stream(&events);
        for size in [1, 7, 10, 11, 4096, gz.len()] {
            let (mut inf, mut out) = (Inflate::default(), Vec::new());
            for chunk in gz.chunks(size) {
                assert!(inf.push(chunk, &mut out, 1 << 20).is_ok(), "chunks of {size}");
            }
            assert!(out == want, "chunks of {size}: {} bytes of {}", out.len(), want.len());
        }
    }

    /// Not gzip, or a chunk that inflates past the limit, is an error, not memory.
    #[test]
    fn a_bad_or_too_large_stream_is_refused() {
        let (mut inf, mut out) = (Inflate::default(), Vec::new());
        assert!(matches!(inf.push(b"id: 1\ndata: {}\n\n", &mut out, 1 << 20), Err(InflateError::Corrupt)));
        let zeros = vec![0u8; 8 << 20];
        let gz = stream(&[&zeros]);
        assert!(gz.len() * 50 < zeros.len(), "{} bytes", gz.len());
        let (mut inf, mut out) = (Inflate::default(), Vec::new());
        assert!(matches!(inf.push(&gz, &mut out, 1 << 20), Err(InflateError::TooLarge(_))));
        assert!(out.len() <= 1 << 20, "stopped at the limit: {}", out.len());
    }
}
