//! `/_sim/...`: the control endpoints that let a test in another process drive a running
//! simulator (apply, delete, advance, faults) and read its request log and state. They are not
//! Kubernetes paths and are not recorded in the request log.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};

use crate::{Shared, Simulator};

fn sim(shared: Arc<Shared>) -> Simulator {
    Simulator { shared }
}

/// The control routes.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_sim/requests", get(requests))
        .route("/_sim/state/{kind}", get(state))
        .route("/_sim/apply", post(apply))
        .route("/_sim/delete/{kind}/{namespace}/{name}", post(delete))
        .route("/_sim/delete/{kind}/{name}", post(delete_cluster))
        .route("/_sim/advance", post(advance))
        .route("/_sim/fault/{fault}", post(fault))
        .route("/_sim/dcgm/{node}", get(dcgm))
}

/// dcgm-exporter's page for a simulated server (what the demo's agents scrape).
async fn dcgm(State(s): State<Arc<Shared>>, Path(node): Path<String>) -> Response {
    let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (obj, slices, claims) = {
        let store = s.store();
        let obj = crate::resources::by_kind_name("Node")
            .and_then(|r| store.objects(r).get(&(String::new(), node.clone())).cloned());
        (obj, crate::kubelet::slices(&store), crate::kubelet::claims(&store))
    };
    match obj.and_then(|n| crate::kubelet::dcgm::page(&n, &slices, &claims, t)) {
        Some(p) => ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], p).into_response(),
        None => (StatusCode::NOT_FOUND, format!("no simulated node with whole GPUs named {node:?}\n")).into_response(),
    }
}

async fn requests(State(s): State<Arc<Shared>>) -> Response {
    let sim = sim(s);
    Json(serde_json::json!({"recent": sim.requests(), "by_verb": sim.verb_counts()})).into_response()
}

async fn state(State(s): State<Arc<Shared>>, Path(kind): Path<String>) -> Response {
    Json(sim(s).state(&kind)).into_response()
}

async fn apply(State(s): State<Arc<Shared>>, body: String) -> Response {
    match sim(s).apply_yaml(&body) {
        Ok(n) => (StatusCode::OK, format!("applied {n}\n")).into_response(),
        Err(e) => (StatusCode::BAD_REQUEST, format!("{e}\n")).into_response(),
    }
}

async fn delete(State(s): State<Arc<Shared>>, Path((kind, ns, name)): Path<(String, String, String)>) -> Response {
    if sim(s).delete(&kind, &ns, &name) {
        StatusCode::OK.into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

async fn delete_cluster(State(s): State<Arc<Shared>>, Path((kind, name)): Path<(String, String)>) -> Response {
    delete(State(s), Path((kind, String::new(), name))).await
}

async fn advance(State(s): State<Arc<Shared>>) -> Response {
    if sim(s).advance() {
        StatusCode::OK.into_response()
    } else {
        (StatusCode::CONFLICT, "no further timeline step\n").into_response()
    }
}

async fn fault(
    State(s): State<Arc<Shared>>,
    Path(f): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let sim = sim(s);
    let ms = q.get("ms").and_then(|m| m.parse::<u64>().ok()).unwrap_or(0);
    match f.as_str() {
        "close-watches" => sim.close_watches(),
        "expire" => sim.expire_versions(),
        "restart" => sim.restart(Duration::from_millis(ms)),
        "stall" => sim.stall(true),
        "unstall" => sim.stall(false),
        "slow" => sim.set_delay(Duration::from_millis(ms)),
        _ => {
            return (StatusCode::NOT_FOUND, "faults: close-watches, expire, restart?ms=, stall, unstall, slow?ms=\n")
                .into_response()
        }
    }
    StatusCode::OK.into_response()
}
