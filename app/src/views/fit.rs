//! `/fit`: "Will my next model fit?" — a form (or a pasted manifest) and the per-node verdict
//! in the scheduler's words. Works without WASM: the form posts and the server renders.

use leptos::prelude::*;

use crate::boot::Boot;
use crate::i18n::{fill, Say, S};
use crate::model::{FitInput, FitResult};
use crate::units::bytes;

/// A textarea's content as the server writes it. Leptos writes a textarea's children without
/// escaping (the element is RCDATA), so a pasted `</textarea>` would end it and the rest would be
/// markup on gpudash's origin; `&` and `<` are written as character references, which the browser
/// decodes back to the text pasted. In the browser the text node is already the text.
fn rcdata(s: &str) -> String {
    if cfg!(feature = "ssr") {
        s.replace('&', "&amp;").replace('<', "&lt;")
    } else {
        s.to_string()
    }
}

fn signed_bytes(v: i64, s: &S) -> String {
    if v < 0 {
        fill(s.fit_over, &[&bytes(v.unsigned_abs())])
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
    let lang = expect_context::<Boot>().lang;
    let s = lang.s();
    let ok = r.placeable > 0;
    view! {
        <section class="panel fit-result" data-fits=ok.to_string()>
            <h2>{if ok { s.fit_yes } else { s.fit_no }}</h2>
            <p class="fit-summary mono" lang="en">{r.summary.clone()}</p>
            {r.update.as_ref().map(|u| view! {
                <div class="fit-update" data-completes=u.completes.to_string()>
                    <h3>{if u.completes { s.fit_update_completes } else { s.fit_update_stuck }}</h3>
                    <p>{u.message.say(lang).to_string()}</p>
                </div>
            })}
            {(!r.suggestions.is_empty()).then(|| view! {
                <h3>{s.fit_suggestions}</h3>
                <ul class="suggestions">{r.suggestions.iter().map(|x| view! { <li>{x.say(lang).to_string()}</li> }).collect_view()}</ul>
            })}
            <table class="table">
                <thead><tr>
                    <th>{s.fit_col_node}</th><th>{s.fit_col_verdict}</th><th>{s.fit_col_reasons}</th>
                    <th>{s.fit_col_replicas}</th><th>{s.fit_col_headroom}</th>
                </tr></thead>
                <tbody>
                    {r.nodes.iter().map(|n| view! {
                        <tr data-node=n.node.clone() class=if n.fits { "fits" } else { "nofit" }>
                            <td class="mono">{n.node.clone()}</td>
                            <td>{if n.fits { s.fit_fits } else { s.fit_no_fit }}</td>
                            <td lang="en">{n.reasons.join(", ")}</td>
                            <td>{n.capacity_for}</td>
                            <td>{n.headroom.as_ref().map(|h| {
                                let (req, lim) = (signed_bytes(h.after_requests_bytes, s), signed_bytes(h.after_limits_bytes, s));
                                let said = fill(s.fit_headroom, &[&req, &lim, &bytes(h.board_bytes)]);
                                match h.board_free_bytes { Some(f) => fill(s.fit_board_free, &[&said, &bytes(f)]), None => said }
                            }).unwrap_or_else(|| "—".into())}</td>
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
    let s = boot.lang.s();
    let (input, result): (FitInput, Option<FitResult>) = match boot.fit.clone() {
        Some((i, r)) => (i, Some(r)),
        None => (FitInput::default(), None),
    };
    let bad_field = result.as_ref().and_then(|r| r.error.as_ref()).map(|e| e.field.clone()).unwrap_or_default();
    let bad = move |f: &str| bad_field == f || (f == "yaml" && (bad_field.starts_with("spec") || bad_field == "kind"));
    let action = format!("{}/fit{}", boot.base, boot.keep_query());
    view! {
        <h1 class="page-title">{s.fit_title}</h1>
        <p class="muted">{s.fit_intro}</p>
        {result.as_ref().and_then(|r| r.error.clone()).map(|e| view! {
            <p class="status fit-error" data-state="stale" role="alert">"▲ " <b class="mono">{e.field}</b> ": " <span lang="en">{e.message}</span></p>
        })}
        <form class="fit-form panel" method="post" action=action>
            <div class="fit-grid">
                <Field name="gpu_resource" label=s.fit_gpu_resource value=input.gpu_resource.clone() placeholder="nvidia.com/gpu" bad=bad("gpu_resource")/>
                <Field name="gpu_count" label=s.fit_gpu_count value=input.gpu_count.clone() placeholder="1" bad=bad("gpu_count")/>
                <Field name="cpu_request" label=s.fit_cpu_request value=input.cpu_request.clone() placeholder="500m" bad=bad("cpu_request")/>
                <Field name="cpu_limit" label=s.fit_cpu_limit value=input.cpu_limit.clone() placeholder="2" bad=bad("cpu_limit")/>
                <Field name="memory_request" label=s.fit_memory_request value=input.memory_request.clone() placeholder="2Gi" bad=bad("memory_request")/>
                <Field name="memory_limit" label=s.fit_memory_limit value=input.memory_limit.clone() placeholder="4Gi" bad=bad("memory_limit")/>
                <Field name="node_selector" label=s.fit_node_selector value=input.node_selector.clone()
                    placeholder="kubernetes.io/arch=arm64" bad=bad("node_selector")/>
                <Field name="tolerations" label=s.fit_tolerations value=input.tolerations.clone() placeholder="key=value:NoSchedule" bad=bad("tolerations")/>
                <Field name="runtime_class" label="runtimeClassName" value=input.runtime_class.clone() placeholder="nvidia" bad=bad("runtime_class")/>
                <Field name="replicas" label=s.fit_replicas value=input.replicas.clone() placeholder="1" bad=bad("replicas")/>
                <Field name="namespace" label=s.col_namespace value=input.namespace.clone() placeholder="default" bad=bad("namespace")/>
            </div>
            <label class="fit-yaml" data-bad=bad("yaml").to_string()>
                <span>{s.fit_yaml}</span>
                <textarea name="yaml" rows="10" spellcheck="false">{rcdata(&input.yaml)}</textarea>
            </label>
            <button type="submit">{s.fit_check}</button>
        </form>
        {result.filter(|r| r.error.is_none()).map(|r| view! { <Verdict r/> })}
    }
}
