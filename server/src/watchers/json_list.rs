//! A Kubernetes list's JSON read as it arrives: each item handed on as soon as its last byte is
//! in, while the rest of the body is still on its way.
//!
//! Why: a 1.34+ API server writes a list item by item as it encodes it (streaming list encoding,
//! KEP-5116), and at 30,000 pods the body is 28 MB. Read whole, the first pod waits for the
//! last byte; read as it comes, decoding runs beside the server's encoding (docs/benchmarks.md).
//!
//! Only the list's own structure is followed here (`{"metadata": …, "items": [ … ]}`, keys in
//! any order); each item is returned as its bytes for serde to decode, and the metadata's bytes
//! are kept for the end. Scanning resumes where the last bytes ended, so an item cut across any
//! number of reads costs one pass.

use std::ops::Range;

/// Why a body is not a JSON list.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// A byte that cannot be where it is.
    #[error("malformed JSON list at byte {at}: {what}")]
    Malformed {
        /// Its offset in the body.
        at: usize,
        /// What was expected there.
        what: &'static str,
    },
    /// The body ended inside the list.
    #[error("the JSON list ended early, after {0} bytes")]
    Truncated(usize),
}

/// Where in the list's outer object the reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the opening `{`.
    Open,
    /// After `{`: a key or `}`.
    FirstKey,
    /// After `,`: a key.
    Key,
    /// Inside a key's string, which began at the offset.
    InKey(usize),
    /// After a key, before `:`.
    Colon(Field),
    /// A field's value (not the items).
    Value(Field),
    /// After `"items":`, before `[`.
    ItemsOpen,
    /// After `[`: an item or `]`.
    FirstItem,
    /// After `,` in the items: an item.
    Item,
    /// After an item: `,` or `]`.
    AfterItem,
    /// After a field's value: `,` or `}`.
    AfterValue,
    /// After the closing `}`.
    Done,
}

/// The outer object's fields the reader keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Items,
    Metadata,
    Other,
}

/// A value being scanned, from `start` in the buffer; resumable.
#[derive(Debug, Clone, Copy)]
struct Scan {
    start: usize,
    depth: u32,
    in_str: bool,
    escaped: bool,
}

/// Splits a list's JSON into its items as its bytes are pushed.
#[derive(Debug)]
pub struct Splitter {
    buf: Vec<u8>,
    /// How many bytes of the body came before `buf[0]` (for error offsets).
    base: usize,
    /// Where reading goes on in `buf`.
    pos: usize,
    at: At,
    scan: Option<Scan>,
    metadata: Option<Vec<u8>>,
}

impl Default for Splitter {
    fn default() -> Self {
        Self { buf: Vec::new(), base: 0, pos: 0, at: At::Open, scan: None, metadata: None }
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl Splitter {
    /// Adds the next bytes of the body. Bytes before anything still being read are let go.
    pub fn push(&mut self, bytes: &[u8]) {
        let keep = match (self.scan, self.at) {
            (Some(s), _) => s.start,
            (None, At::InKey(start)) => start,
            _ => self.pos,
        };
        if keep > 0 {
            self.buf.drain(..keep);
            self.base += keep;
            self.pos -= keep;
            if let Some(s) = &mut self.scan {
                s.start -= keep;
            }
            if let At::InKey(start) = &mut self.at {
                *start -= keep;
            }
        }
        self.buf.extend_from_slice(bytes);
    }

    fn malformed(&self, what: &'static str) -> ListError {
        ListError::Malformed { at: self.base + self.pos, what }
    }

    /// The next byte that is not whitespace, not consumed; None when more bytes are needed.
    fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.buf.get(self.pos) {
            if !is_ws(b) {
                return Some(b);
            }
            self.pos += 1;
        }
        None
    }

    /// Expects `want` (after whitespace) and moves past it to `next`.
    fn expect(&mut self, want: u8, next: At, what: &'static str) -> Result<bool, ListError> {
        match self.peek() {
            None => Ok(false),
            Some(b) if b == want => {
                self.pos += 1;
                self.at = next;
                Ok(true)
            }
            Some(_) => Err(self.malformed(what)),
        }
    }

    /// After a value: `,` moves on to `next`, `close` to `closed` (false: more bytes needed).
    fn separator(&mut self, close: u8, next: At, closed: At, what: &'static str) -> Result<bool, ListError> {
        match self.peek() {
            None => Ok(false),
            Some(b',') => {
                self.pos += 1;
                self.at = next;
                Ok(true)
            }
            Some(b) if b == close => {
                self.pos += 1;
                self.at = closed;
                Ok(true)
            }
            Some(_) => Err(self.malformed(what)),
        }
    }

    /// The next whole item, as a range of [`Splitter::item`]'s buffer; None when more bytes are
    /// needed (or the list is read to its end: see [`Splitter::finish`]).
    pub fn next_item(&mut self) -> Result<Option<Range<usize>>, ListError> {
        loop {
            match self.at {
                At::Open => {
                    if !self.expect(b'{', At::FirstKey, "expected '{' opening the list")? {
                        return Ok(None);
                    }
                }
                At::FirstKey | At::Key => match self.peek() {
                    None => return Ok(None),
                    Some(b'}') if self.at == At::FirstKey => {
                        self.pos += 1;
                        self.at = At::Done;
                    }
                    Some(b'"') => {
                        self.pos += 1;
                        self.at = At::InKey(self.pos);
                    }
                    Some(_) => return Err(self.malformed("expected a key")),
                },
                At::InKey(start) => {
                    // Keys are short: one cut in two is read again from its start.
                    let Some(end) = string_end(&self.buf, start) else { return Ok(None) };
                    let field = match &self.buf[start..end] {
                        b"items" => Field::Items,
                        b"metadata" => Field::Metadata,
                        _ => Field::Other,
                    };
                    self.pos = end + 1;
                    self.at = At::Colon(field);
                }
                At::Colon(field) => {
                    let next = if field == Field::Items { At::ItemsOpen } else { At::Value(field) };
                    if !self.expect(b':', next, "expected ':' after a key")? {
                        return Ok(None);
                    }
                }
                At::ItemsOpen => match self.peek() {
                    None => return Ok(None),
                    Some(b'[') => {
                        self.pos += 1;
                        self.at = At::FirstItem;
                    }
                    // `"items": null` (an empty list, as some servers write it).
                    Some(_) => self.at = At::Value(Field::Other),
                },
                At::FirstItem | At::Item => {
                    if self.scan.is_none() {
                        match self.peek() {
                            None => return Ok(None),
                            Some(b']') if self.at == At::FirstItem => {
                                self.pos += 1;
                                self.at = At::AfterValue;
                                continue;
                            }
                            Some(_) => {}
                        }
                    }
                    let Some(r) = self.value()? else { return Ok(None) };
                    self.at = At::AfterItem;
                    return Ok(Some(r));
                }
                At::AfterItem => {
                    if !self.separator(b']', At::Item, At::AfterValue, "expected ',' or ']' after an item")? {
                        return Ok(None);
                    }
                }
                At::Value(field) => {
                    if self.scan.is_none() && self.peek().is_none() {
                        return Ok(None);
                    }
                    let Some(r) = self.value()? else { return Ok(None) };
                    if field == Field::Metadata {
                        self.metadata = Some(self.buf[r].to_vec());
                    }
                    self.at = At::AfterValue;
                }
                At::AfterValue => {
                    if !self.separator(b'}', At::Key, At::Done, "expected ',' or '}' after a value")? {
                        return Ok(None);
                    }
                }
                At::Done => {
                    return match self.peek() {
                        None => Ok(None),
                        Some(_) => Err(self.malformed("bytes after the list")),
                    };
                }
            }
        }
    }

    /// The bytes of a range [`Splitter::next_item`] returned (valid until the next push).
    pub fn item(&self, r: Range<usize>) -> &[u8] {
        &self.buf[r]
    }

    /// Scans the value starting at `pos` (not whitespace, and in the buffer), or resumes the
    /// scan begun earlier.
    fn value(&mut self) -> Result<Option<Range<usize>>, ListError> {
        let mut s = match self.scan {
            Some(s) => s,
            None => match self.buf[self.pos] {
                b'{' | b'[' => {
                    self.pos += 1;
                    Scan { start: self.pos - 1, depth: 1, in_str: false, escaped: false }
                }
                b'"' => {
                    self.pos += 1;
                    Scan { start: self.pos - 1, depth: 0, in_str: true, escaped: false }
                }
                _ => {
                    // A number, true, false or null: up to the next delimiter.
                    let start = self.pos;
                    let end = self.buf[start..].iter().position(|&b| is_ws(b) || matches!(b, b',' | b'}' | b']'));
                    let Some(len) = end else { return Ok(None) };
                    if len == 0 {
                        return Err(self.malformed("expected a value"));
                    }
                    self.pos = start + len;
                    return Ok(Some(start..self.pos));
                }
            },
        };
        let buf = &self.buf;
        let mut i = self.pos;
        let end = loop {
            if s.in_str {
                if s.escaped {
                    if i >= buf.len() {
                        break None;
                    }
                    s.escaped = false;
                    i += 1;
                }
                match memchr::memchr2(b'"', b'\\', &buf[i..]) {
                    None => {
                        i = buf.len();
                        break None;
                    }
                    Some(k) => {
                        i += k + 1;
                        if buf[i - 1] == b'\\' {
                            s.escaped = true;
                        } else {
                            s.in_str = false;
                            if s.depth == 0 {
                                break Some(i);
                            }
                        }
                    }
                }
            } else {
                let Some(&b) = buf.get(i) else { break None };
                i += 1;
                match b {
                    b'"' => s.in_str = true,
                    b'{' | b'[' => s.depth += 1,
                    b'}' | b']' => {
                        s.depth -= 1;
                        if s.depth == 0 {
                            break Some(i);
                        }
                    }
                    _ => {}
                }
            }
        };
        self.pos = i;
        match end {
            Some(end) => {
                self.scan = None;
                Ok(Some(s.start..end))
            }
            None => {
                self.scan = Some(s);
                Ok(None)
            }
        }
    }

    /// After the last push: the list's metadata (its JSON), or why the body was no whole list.
    pub fn finish(&mut self) -> Result<Option<Vec<u8>>, ListError> {
        if self.at != At::Done {
            // A number at the very end could still be pending: only `}` ends a list.
            return Err(ListError::Truncated(self.base + self.buf.len()));
        }
        if self.peek().is_some() {
            return Err(self.malformed("bytes after the list"));
        }
        Ok(self.metadata.take())
    }
}

/// The offset of the quote closing the string whose contents start at `from`.
fn string_end(buf: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        let k = memchr::memchr2(b'"', b'\\', buf.get(i..)?)?;
        if buf[i + k] == b'"' {
            return Some(i + k);
        }
        i += k + 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `body` fed `step` bytes at a time: the items (as text) and the metadata.
    fn split(body: &str, step: usize) -> Result<(Vec<String>, Option<String>), ListError> {
        let mut s = Splitter::default();
        let mut items = Vec::new();
        for chunk in body.as_bytes().chunks(step.max(1)) {
            s.push(chunk);
            while let Some(r) = s.next_item()? {
                items.push(String::from_utf8_lossy(s.item(r)).into_owned());
            }
        }
        let meta = s.finish()?.map(|m| String::from_utf8_lossy(&m).into_owned());
        Ok((items, meta))
    }

    #[test]
    fn items_come_out_whole_however_the_body_is_cut() {
        let items = [
            r#"{"metadata":{"name":"a \"quoted\" {brace} [bracket]","namespace":"ml"},"spec":{"nodeName":"jetson-1"}}"#,
            r#"{"metadata":{"name":"b\\","labels":{"x":"]}\\\"}"}},"status":{"phase":"Running","conditions":[]}}"#,
            r#"{"metadata":{"name":"日本語"},"n":[1,2.5e3,-0,true,false,null]}"#,
        ];
        let body = format!(
            "{{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"metadata\":{{\"resourceVersion\":\"42\",\"continue\":\"x\"}},\
             \"items\":[{}]}}",
            items.join(",")
        );
        for step in [1, 2, 3, 7, 64, body.len()] {
            let (got, meta) = split(&body, step).unwrap_or_else(|e| panic!("{step}: {e}"));
            assert_eq!(got, items, "cut every {step} bytes");
            assert_eq!(meta.as_deref(), Some(r#"{"resourceVersion":"42","continue":"x"}"#));
            for i in &got {
                let _: serde_json::Value = serde_json::from_str(i).unwrap_or_else(|e| panic!("{i}: {e}"));
            }
        }
        // Whitespace anywhere, the metadata after the items, other fields of any kind.
        let spaced = " {\n \"items\" : [ {\"a\": 1} ,\n{\"b\": [2]} ] , \"extra\": [1, {\"}\": \"]\"}], \"n\": 5 ,\
                      \"metadata\" : {\"resourceVersion\": \"7\"}\n}\n";
        for step in [1, 5, spaced.len()] {
            let (got, meta) = split(spaced, step).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(got, [r#"{"a": 1}"#, r#"{"b": [2]}"#]);
            assert_eq!(meta.as_deref(), Some(r#"{"resourceVersion": "7"}"#));
        }
        assert_eq!(split(r#"{"metadata":{},"items":[]}"#, 3).map(|x| x.0.len()).ok(), Some(0));
        assert_eq!(split(r#"{"metadata":{},"items":null}"#, 3).map(|x| x.0.len()).ok(), Some(0));
        assert_eq!(split("{}", 1).map(|x| x.1).ok(), Some(None));
    }

    #[test]
    fn a_body_that_is_no_whole_list_is_an_error() {
        let whole = r#"{"metadata":{"resourceVersion":"1"},"items":[{"a":"b"},{"c":1}]}"#;
        // Cut anywhere before its closing brace.
        for cut in 0..whole.len() {
            assert!(
                matches!(split(&whole[..cut], 4), Err(ListError::Truncated(_))),
                "a list cut after {cut} bytes was taken whole"
            );
        }
        for bad in [
            "[1,2]",
            r#"{"items":[{"a":1} {"b":2}]}"#,
            r#"{"items" [1]}"#,
            r#"{"items":[1,]}"#,
            r#"{"metadata":{}}x"#,
            r#"{"metadata":{},}"#,
            r#"{,"items":[]}"#,
        ] {
            assert!(matches!(split(bad, 2), Err(ListError::Malformed { .. })), "{bad} was read as a list");
        }
    }

    #[test]
    fn memory_is_let_go_as_items_are_read() {
        let item = format!(r#"{{"metadata":{{"name":"{}"}}}}"#, "x".repeat(1000));
        let mut s = Splitter::default();
        s.push(br#"{"metadata":{"resourceVersion":"1"},"items":["#);
        for i in 0..1000 {
            if i > 0 {
                s.push(b",");
            }
            s.push(item.as_bytes());
            let r = s.next_item().ok().flatten().expect("an item");
            assert_eq!(s.item(r), item.as_bytes());
            assert!(s.buf.len() < 3 * item.len(), "the buffer holds {} bytes after {i} items", s.buf.len());
        }
        s.push(b"]}");
        assert!(s.next_item().ok().flatten().is_none());
        assert!(s.finish().is_ok());
    }
}
