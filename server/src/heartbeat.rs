//! Watch liveness. kube-rs' watcher hides bookmarks and re-watches silently when a connection
//! goes quiet, so a stalled API server (watches accepted, nothing sent) would look exactly like
//! a quiet cluster. This layer sits under the Kubernetes client and notes, per resource, when
//! the API server last sent something: a body chunk (an event, a bookmark, a list page) or the
//! clean end of a watch at its `timeoutSeconds`. A healthy server does one or the other at least
//! once per watch timeout; [`crate::watchers`] marks a kind stale when it hears nothing for longer.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type DynBody = dyn Body<Data = Bytes, Error = BoxError> + Send + Unpin;

/// What the server did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// Answered a request with a 2xx status: it is up (a stalled server does this too).
    Answered,
    /// Sent a body chunk, or ended a response cleanly: it is working.
    Spoke,
}

/// Called with the resource (the path's last segment, e.g. `pods`) and what its server did.
pub type Beat = Arc<dyn Fn(&str, Signal) + Send + Sync>;

/// The watched resource a request is for: the path's last segment. metrics.k8s.io answers
/// (polled, same resource names) say nothing about the watches.
fn resource(path: &str) -> Option<String> {
    if path.starts_with("/apis/metrics.k8s.io/") {
        return None;
    }
    path.rsplit('/').next().filter(|s| !s.is_empty()).map(str::to_string)
}

/// A [`tower::Layer`] that reports server activity per resource.
#[derive(Clone)]
pub struct HeartbeatLayer(pub Beat);

impl<S> tower::Layer<S> for HeartbeatLayer {
    type Service = Heartbeat<S>;
    fn layer(&self, inner: S) -> Self::Service {
        Heartbeat { inner, beat: self.0.clone() }
    }
}

/// The service [`HeartbeatLayer`] makes.
#[derive(Clone)]
pub struct Heartbeat<S> {
    inner: S,
    beat: Beat,
}

impl<S, B> tower::Service<Request<B>> for Heartbeat<S>
where
    S: tower::Service<Request<B>, Response = Response<Box<DynBody>>>,
    S::Future: Send + 'static,
{
    type Response = Response<Box<DynBody>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let res = resource(req.uri().path());
        let beat = self.beat.clone();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            Ok(match res {
                Some(res) => {
                    if resp.status().is_success() {
                        beat(&res, Signal::Answered);
                    }
                    resp.map(|inner| Box::new(Watched { inner, beat, res }) as Box<DynBody>)
                }
                None => resp,
            })
        })
    }
}

/// A response body that reports each frame and its clean end.
struct Watched {
    inner: Box<DynBody>,
    beat: Beat,
    res: String,
}

impl Body for Watched {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        let r = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(r, Poll::Ready(None) | Poll::Ready(Some(Ok(_)))) {
            (self.beat)(&self.res, Signal::Spoke);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::resource;

    #[test]
    fn the_resource_is_the_last_path_segment() {
        assert_eq!(resource("/api/v1/pods").as_deref(), Some("pods"));
        assert_eq!(resource("/apis/apps/v1/replicasets").as_deref(), Some("replicasets"));
        assert_eq!(resource("/apis/node.k8s.io/v1/runtimeclasses").as_deref(), Some("runtimeclasses"));
        assert_eq!(resource("/api/v1/namespaces/x/events").as_deref(), Some("events"));
        assert_eq!(resource("/apis/metrics.k8s.io/v1beta1/nodes"), None);
    }
}
