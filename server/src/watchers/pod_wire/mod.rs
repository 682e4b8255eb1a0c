//! The pod list as the API server writes it in protobuf, decoded into gpudash's pod projection.
//!
//! Why: at 30,000 pods the API server takes 4.3–5.8 s to write the list as JSON (239 MB) and
//! 1.0–1.4 s as protobuf (68 MB) — the JSON encoding was most of gpudash's first view on a real
//! API server (docs/benchmarks.md). Only the fields gpudash reads are declared (field numbers
//! from `k8s.io/api/core/v1/generated.proto` and apimachinery's, v0.36); protobuf skips the
//! rest, managed fields and annotations included. Kubernetes' generated code writes every
//! non-pointer string, number and time even when empty, where its JSON omits them: the
//! projection maps those to `None` so that both decodings give the same pod (tested against a
//! real API server in `server/tests/real_protobuf.rs`).

use bytes::{Buf, Bytes};
use prost::encoding::{decode_key, decode_varint, skip_field, DecodeContext, WireType};
use prost::Message;

use crate::pod::Pod;

mod project;
mod wire;

use project::pod;

/// Why a protobuf list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The body does not start with the `k8s\0` magic of Kubernetes' protobuf encoding.
    #[error("not a Kubernetes protobuf body (no k8s magic prefix)")]
    NoMagic,
    /// The envelope or a message in it is malformed.
    #[error("malformed protobuf: {0}")]
    Decode(#[source] prost::DecodeError),
    /// A length runs past the end of the body (a cut-off response).
    #[error("truncated protobuf: {0} runs past the end of the body")]
    Truncated(&'static str),
    /// The envelope holds another kind than expected.
    #[error("expected a {expected}, the API server sent a {got}")]
    Kind {
        /// The kind asked for.
        expected: &'static str,
        /// The kind in the envelope.
        got: String,
    },
}

impl From<prost::DecodeError> for WireError {
    fn from(e: prost::DecodeError) -> Self {
        Self::Decode(e)
    }
}

/// The four bytes every Kubernetes protobuf body starts with.
const MAGIC: &[u8] = b"k8s\0";

/// A list's items, decoded one at a time from the body as they are asked for (the decoded
/// list is never held beside the body).
pub struct PodItems {
    rest: Bytes,
}

/// One page of a list: its resourceVersion, the token for the next page (empty on the last)
/// and its items.
pub struct Page {
    /// The list's resourceVersion.
    pub version: String,
    /// Where the next page starts; empty when this is the last.
    pub next: String,
    /// The pods.
    pub items: PodItems,
}

/// Opens a protobuf `PodList` body.
pub fn open_list(body: Bytes) -> Result<Page, WireError> {
    let raw = envelope(body, "PodList")?;
    // The list's metadata may come before or after the items: find it first, skipping the items
    // (which also checks that every length stays within the body).
    let mut scan = raw.clone();
    let (mut version, mut next) = (String::new(), String::new());
    while let Some(m) = next_message(&mut scan, 1, "the list's metadata")? {
        let meta = wire::ListMeta::decode(m)?;
        (version, next) = (meta.resource_version, meta.continue_);
    }
    Ok(Page { version, next, items: PodItems { rest: raw } })
}

impl Iterator for PodItems {
    type Item = Result<Pod, WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = next_message(&mut self.rest, 2, "a pod")
            .and_then(|m| m.map(|m| wire::Pod::decode(m).map(pod).map_err(WireError::from)).transpose());
        if item.is_err() {
            // A malformed body ends the list; the caller lists again.
            self.rest = Bytes::new();
        }
        item.transpose()
    }
}

/// The next message in `buf` in field `tag` (length-delimited), skipping other fields; `None`
/// at the end. `what` names it when its length runs past the body.
fn next_message(buf: &mut Bytes, tag: u32, what: &'static str) -> Result<Option<Bytes>, WireError> {
    while buf.has_remaining() {
        let (t, wt) = decode_key(buf)?;
        if t == tag && wt == WireType::LengthDelimited {
            let len = usize::try_from(decode_varint(buf)?).unwrap_or(usize::MAX);
            if len > buf.remaining() {
                return Err(WireError::Truncated(what));
            }
            return Ok(Some(buf.split_to(len)));
        }
        skip_field(wt, t, buf, DecodeContext::default())?;
    }
    Ok(None)
}

/// A protobuf `Status` (an error the API server wrote in protobuf): (code, reason, message).
pub fn status(body: Bytes) -> Result<(u16, String, String), WireError> {
    let s = wire::Status::decode(envelope(body, "Status")?)?;
    Ok((u16::try_from(s.code).unwrap_or(500), s.reason, s.message))
}

/// The object inside the `k8s\0` + `runtime.Unknown` envelope, checked to be of `kind`.
fn envelope(mut body: Bytes, kind: &'static str) -> Result<Bytes, WireError> {
    if !body.starts_with(MAGIC) {
        return Err(WireError::NoMagic);
    }
    body.advance(MAGIC.len());
    let u = wire::Unknown::decode(body)?;
    let got = u.type_meta.map(|t| t.kind).unwrap_or_default();
    if got != kind {
        return Err(WireError::Kind { expected: kind, got });
    }
    Ok(u.raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `PodList` with its metadata after its items (the decoder must not assume an order).
    #[derive(Clone, PartialEq, prost::Message)]
    struct PodList {
        #[prost(message, repeated, tag = "2")]
        items: Vec<wire::Pod>,
        #[prost(message, optional, tag = "1")]
        metadata: Option<wire::ListMeta>,
    }

    fn body(kind: &str, raw: Vec<u8>) -> Bytes {
        let u = wire::Unknown {
            type_meta: Some(wire::TypeMeta { api_version: "v1".into(), kind: kind.into() }),
            raw: raw.into(),
        };
        [MAGIC.to_vec(), u.encode_to_vec()].concat().into()
    }

    fn wire_pod(name: &str, node: &str) -> wire::Pod {
        // As Kubernetes writes it: every plain string present, empty ones too.
        wire::Pod {
            metadata: Some(wire::ObjectMeta {
                name: name.into(),
                namespace: "vision".into(),
                creation_timestamp: Some(wire::Time { seconds: Some(1_796_533_200) }),
                deletion_timestamp: None,
                // HAMi's record of the card it gave the pod is kept; the rest is not.
                annotations: [
                    ("hami.io/vgpu-devices-allocated".to_string(), "GPU-a,NVIDIA,3000,0:;".to_string()),
                    ("kubectl.kubernetes.io/last-applied-configuration".to_string(), "{}".to_string()),
                ]
                .into(),
                ..Default::default()
            }),
            spec: Some(wire::PodSpec { node_name: node.into(), scheduler_name: String::new(), ..Default::default() }),
            status: Some(wire::PodStatus { phase: "Pending".into(), ..Default::default() }),
        }
    }

    fn list_body() -> Bytes {
        let list = PodList {
            items: vec![wire_pod("a", "orin-1"), wire_pod("b", "")],
            metadata: Some(wire::ListMeta {
                resource_version: "4711".into(),
                continue_: "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ".into(),
            }),
        };
        body("PodList", list.encode_to_vec())
    }

    #[test]
    fn a_list_gives_its_version_and_its_pods_with_empty_strings_as_absent() {
        let Page { version, next, items } = open_list(list_body()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((version.as_str(), next.as_str()), ("4711", "eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ"));
        let pods: Vec<Pod> = items.collect::<Result<_, _>>().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pods.len(), 2);
        assert_eq!(pods[0].metadata.name.as_deref(), Some("a"));
        assert_eq!(
            pods[0].metadata.creation_timestamp.as_ref().map(|t| t.0.to_string()).as_deref(),
            Some("2026-12-06T05:00:00Z")
        );
        assert_eq!(pods[0].spec.as_ref().and_then(|s| s.node_name.as_deref()), Some("orin-1"));
        let kept: Vec<&String> = pods[0].metadata.annotations.iter().flat_map(|a| a.keys()).collect();
        assert_eq!(kept, ["hami.io/vgpu-devices-allocated"]);
        // Written empty on the wire, absent in JSON: absent here too.
        assert_eq!(pods[1].spec.as_ref().map(|s| (s.node_name.clone(), s.scheduler_name.clone())), Some((None, None)));
        assert_eq!(pods[1].metadata.generate_name, None);
    }

    #[test]
    fn a_cut_off_or_foreign_body_is_an_error_and_ends_the_list() {
        let full = list_body();
        let cut = full.slice(..full.len() - 7);
        // The envelope's own length runs past the end: refused when opened.
        assert!(open_list(cut).is_err());
        // A pod cut inside a well-formed envelope: refused when opened (the list is read
        // through once for its metadata).
        let list = PodList { items: vec![wire_pod("a", "orin-1")], metadata: None }.encode_to_vec();
        assert!(open_list(body("PodList", list[..list.len() - 3].to_vec())).is_err());
        // A pod whose own bytes are garbage: one error, then nothing more.
        let mut list = PodList { items: vec![wire_pod("a", "orin-1")], metadata: None }.encode_to_vec();
        list.extend_from_slice(&[0x12, 3, 0xff, 0xff, 0xff]);
        list.extend(PodList { items: vec![wire_pod("c", "orin-1")], metadata: None }.encode_to_vec());
        let mut items = open_list(body("PodList", list)).unwrap_or_else(|e| panic!("{e}")).items;
        assert!(items.next().is_some_and(|p| p.is_ok()));
        assert!(matches!(items.next(), Some(Err(WireError::Decode(_)))));
        assert!(items.next().is_none());
        assert!(matches!(open_list(Bytes::from_static(b"{\"kind\":\"PodList\"}")), Err(WireError::NoMagic)));
        assert!(matches!(open_list(body("NodeList", Vec::new())), Err(WireError::Kind { .. })));
        assert!(open_list(Bytes::from_static(b"k8s\0\xff\xff\xff")).is_err());
    }

    #[test]
    fn a_refusal_in_protobuf_reads_as_its_code_reason_and_message() {
        let s = wire::Status {
            message: "pods is forbidden: User \"x\" cannot list".into(),
            reason: "Forbidden".into(),
            code: 403,
        };
        let got = status(body("Status", s.encode_to_vec())).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, (403, "Forbidden".to_string(), "pods is forbidden: User \"x\" cannot list".to_string()));
    }
}
