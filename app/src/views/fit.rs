//! `/fit`: "Will my next model fit?" — a form (or a pasted manifest) and the per-node verdict
//! in the scheduler's words. Works without WASM: the form posts and the server renders.

use leptos::prelude::*;

use crate::boot::Boot;
use crate::model::{FitInput, FitResult};
use crate::units::bytes;

fn signed_bytes(v: i64) -> String {
    if v < 0 {
        format!("−{} (over)", bytes(v.unsigned_abs()))
    } else {
        bytes(v as u64)
    }
}

#[component]
fn Field(
    name: &'static str,
    label: &'static str,
    value: String,
    placeholder: &'static str,
    bad: bool,
) -> impl IntoView {
    view! {
        <label class="fit-field" data-bad=bad.to_string()>
            <span>{label}</span>
            <input type="text" name=name value=value placeholder=placeholder aria-invalid=bad.to_string()/>
        </label>
    }
}

#[component]
fn Verdict(r: FitResult) -> impl IntoView {
    let ok = r.placeable > 0;
    view! {
        <section class="panel fit-result" data-fits=ok.to_string()>
            <h2>{if ok { "✓ It fits" } else { "✗ It does not fit" }}</h2>
            <p class="fit-summary mono">{r.summary.clone()}</p>
            {(!r.suggestions.is_empty()).then(|| view! {
                <h3>"What would make it fit"</h3>
                <ul class="suggestions">{r.suggestions.iter().map(|s| view! { <li>{s.clone()}</li> }).collect_view()}</ul>
            })}
            <table class="table">
                <thead><tr><th>"Node"</th><th>"Verdict"</th><th>"Reasons"</th><th>"Replicas it can take"</th><th>"Unified memory headroom after placing (requests / limits)"</th></tr></thead>
                <tbody>
                    {r.nodes.iter().map(|n| view! {
                        <tr data-node=n.node.clone() class=if n.fits { "fits" } else { "nofit" }>
                            <td class="mono">{n.node.clone()}</td>
                            <td>{if n.fits { "✓ fits" } else { "✗ does not fit" }}</td>
                            <td>{n.reasons.join(", ")}</td>
                            <td>{n.capacity_for}</td>
                            <td>{n.headroom.as_ref().map(|h| format!("{} / {} of {}", signed_bytes(h.after_requests_bytes), signed_bytes(h.after_limits_bytes), bytes(h.board_bytes))).unwrap_or_else(|| "—".into())}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </section>
    }
}

/// `/fit`.
#[component]
pub fn FitPage() -> impl IntoView {
    let boot = expect_context::<Boot>();
    let (input, result): (FitInput, Option<FitResult>) = match boot.fit.clone() {
        Some((i, r)) => (i, Some(r)),
        None => (FitInput::default(), None),
    };
    let bad_field = result.as_ref().and_then(|r| r.error.as_ref()).map(|e| e.field.clone()).unwrap_or_default();
    let bad = move |f: &str| bad_field == f || (f == "yaml" && (bad_field.starts_with("spec") || bad_field == "kind"));
    let action = format!("{}/fit{}", boot.base, boot.keep_query());
    view! {
        <h1 class="page-title">"Will my next model fit?"</h1>
        <p class="muted">"Checks a workload against the cluster's current allocation with the default scheduler's filters. Nothing is created in the cluster."</p>
        {result.as_ref().and_then(|r| r.error.clone()).map(|e| view! {
            <p class="status fit-error" data-state="stale" role="alert">"▲ " <b class="mono">{e.field}</b> ": " {e.message}</p>
        })}
        <form class="fit-form panel" method="post" action=action>
            <div class="fit-grid">
                <Field name="gpu_resource" label="GPU resource" value=input.gpu_resource.clone() placeholder="nvidia.com/gpu" bad=bad("gpu_resource")/>
                <Field name="gpu_count" label="GPUs per replica" value=input.gpu_count.clone() placeholder="1" bad=bad("gpu_count")/>
                <Field name="cpu_request" label="CPU request" value=input.cpu_request.clone() placeholder="500m" bad=bad("cpu_request")/>
                <Field name="cpu_limit" label="CPU limit" value=input.cpu_limit.clone() placeholder="2" bad=bad("cpu_limit")/>
                <Field name="memory_request" label="Memory request" value=input.memory_request.clone() placeholder="2Gi" bad=bad("memory_request")/>
                <Field name="memory_limit" label="Memory limit" value=input.memory_limit.clone() placeholder="4Gi" bad=bad("memory_limit")/>
                <Field name="node_selector" label="Node selector" value=input.node_selector.clone() placeholder="kubernetes.io/arch=arm64" bad=bad("node_selector")/>
                <Field name="tolerations" label="Tolerations" value=input.tolerations.clone() placeholder="key=value:NoSchedule" bad=bad("tolerations")/>
                <Field name="runtime_class" label="runtimeClassName" value=input.runtime_class.clone() placeholder="nvidia" bad=bad("runtime_class")/>
                <Field name="replicas" label="Replicas" value=input.replicas.clone() placeholder="1" bad=bad("replicas")/>
                <Field name="namespace" label="Namespace" value=input.namespace.clone() placeholder="default" bad=bad("namespace")/>
            </div>
            <label class="fit-yaml" data-bad=bad("yaml").to_string()>
                <span>"…or paste a Pod or Deployment (YAML or JSON; replaces the fields above), with the ResourceClaimTemplates it uses as further --- documents"</span>
                <textarea name="yaml" rows="10" spellcheck="false">{input.yaml.clone()}</textarea>
            </label>
            <button type="submit">"Check"</button>
        </form>
        {result.filter(|r| r.error.is_none()).map(|r| view! { <Verdict r/> })}
    }
}
