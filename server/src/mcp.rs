//! `gpudash mcp --server URL`: a read-only Model Context Protocol server over stdio, so that an
//! assistant can ask a gpudash site what an operator asks its pages — why a pod is Pending, what
//! holds the GPUs, whether a model fits, GPU-hours by team. It reads the site's JSON API (the
//! same facts, the same sentences) and writes nothing: every tool is `readOnlyHint`.
//!
//! The protocol (JSON-RPC 2.0, one message per line on stdin and stdout; revision 2025-06-18,
//! earlier ones accepted): `initialize`, `ping`, `tools/list`, `tools/call`, notifications
//! ignored. A tool answers with `structuredContent` (the API's objects) and a short text; a
//! tool that fails (an unknown pod, the site unreachable) answers `isError` with why.

use std::path::PathBuf;

use anyhow::Context as _;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};

/// `gpudash mcp`.
#[derive(Debug, clap::Parser, Clone)]
pub struct McpArgs {
    /// The gpudash site to read (e.g. http://gpudash.gpudash.svc:8080, or behind a proxy).
    #[arg(long, env = "GPUDASH_SERVER")]
    pub server: String,
    /// A file holding the site's bearer token (`--auth-token-file` on the site).
    #[arg(long, env = "GPUDASH_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,
    /// The answers' language when a tool call names none: en or ja (default: from $LANG).
    #[arg(long, env = "GPUDASH_MCP_LANG")]
    pub lang: Option<String>,
}

/// The protocol revisions this server speaks, newest first.
const REVISIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// The longest message read (a line): a longer one is answered with an error and skipped.
const MAX_MESSAGE: usize = 1 << 20;

/// Serves MCP on stdin and stdout until stdin ends.
pub async fn run(args: McpArgs) -> anyhow::Result<()> {
    let site = Site::new(&args)?;
    let mut input = tokio::io::BufReader::new(tokio::io::stdin());
    let mut out = tokio::io::stdout();
    loop {
        let mut line = Vec::new();
        let n = (&mut input).take(MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Ok(());
        }
        let reply = if line.len() > MAX_MESSAGE && !line.ends_with(b"\n") {
            // Skip the rest of the message.
            let mut rest = Vec::new();
            while !rest.ends_with(b"\n") {
                rest.clear();
                if (&mut input).take(MAX_MESSAGE as u64).read_until(b'\n', &mut rest).await? == 0 {
                    break;
                }
            }
            Some(error(Value::Null, -32600, &format!("a message longer than {MAX_MESSAGE} bytes")))
        } else if line.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            answer(&site, &line).await
        };
        if let Some(reply) = reply {
            let mut text = serde_json::to_vec(&reply)?;
            text.push(b'\n');
            out.write_all(&text).await?;
            out.flush().await?;
        }
    }
}

/// The reply to one JSON-RPC message (None for a notification).
pub async fn answer(site: &Site, message: &[u8]) -> Option<Value> {
    let Ok(msg) = serde_json::from_slice::<Value>(message) else {
        return Some(error(Value::Null, -32700, "not JSON"));
    };
    let Some(obj) = msg.as_object() else {
        return Some(error(Value::Null, -32600, "a request is one JSON object (batches are not part of 2025-06-18)"));
    };
    let id = obj.get("id").cloned();
    let method = obj.get("method").and_then(Value::as_str).unwrap_or_default();
    let params = obj.get("params").cloned().unwrap_or(Value::Null);
    let Some(id) = id else {
        // A notification (`notifications/initialized`, `notifications/cancelled`…): nothing to say.
        return None;
    };
    let result = match method {
        "initialize" => Ok(initialize(&params)),
        "ping" => Ok(json!({})),
        "tools/list" => Ok(json!({ "tools": tools() })),
        "tools/call" => call(site, &params).await,
        "" => Err((-32600, "a request without a method".to_string())),
        other => Err((-32601, format!("no such method: {other}"))),
    };
    Some(match result {
        Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
        Err((code, message)) => error(id, code, &message),
    })
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str).unwrap_or_default();
    let version = REVISIONS.iter().find(|r| **r == asked).copied().unwrap_or(REVISIONS[0]);
    json!({
        "protocolVersion": version,
        "capabilities": { "tools": { "listChanged": false } },
        "serverInfo": { "name": "gpudash", "title": "gpudash", "version": env!("CARGO_PKG_VERSION") },
        "instructions": "Read-only facts about a Kubernetes edge cluster's GPUs from its gpudash: which pods hold \
            which GPU units, why pods are Pending (with gpudash's diagnosis and advice), whether a workload \
            would fit, GPU-hours by team. Answers come in English or Japanese (the `lang` argument).",
    })
}

/// A tool's input schema: `props` (name, JSON type, description), the required names.
fn schema(props: &[(&str, &str, &str)], required: &[&str]) -> Value {
    let mut p = Map::new();
    for (name, ty, about) in props {
        p.insert((*name).into(), json!({ "type": ty, "description": about }));
    }
    p.insert("lang".into(), json!({ "type": "string", "enum": ["en", "ja"], "description": "the answer's language" }));
    json!({ "type": "object", "properties": p, "required": required })
}

fn tools() -> Vec<Value> {
    let tool = |name: &str, title: &str, about: &str, input: Value| {
        json!({
            "name": name,
            "title": title,
            "description": about,
            "inputSchema": input,
            "annotations": { "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false },
        })
    };
    vec![
        tool(
            "gpu_overview",
            "GPU overview",
            "Every node's GPU resources (capacity, allocatable, allocated, sharing mode, the pods holding units), \
             its memory, and the cluster's totals.",
            schema(&[("node", "string", "only this node")], &[]),
        ),
        tool(
            "why_pending",
            "Why is this pod waiting or failing",
            "Why a pod is Pending (the scheduler's reasons, normalised) and gpudash's diagnoses about it with their \
             advice — also for a pod that was bound and then refused, OOM-killed, evicted or never started.",
            schema(&[("namespace", "string", "the pod's namespace"), ("pod", "string", "the pod's name")], &["pod"]),
        ),
        tool(
            "will_it_fit",
            "Will it fit",
            "Whether a workload would be scheduled now, on which nodes, and what stops it elsewhere: a Pod or \
             Deployment in YAML, or a GPU count and memory request.",
            schema(
                &[
                    ("yaml", "string", "a Pod or Deployment manifest"),
                    ("gpu_count", "string", "GPUs (units of the GPU resource) per pod"),
                    ("gpu_resource", "string", "the resource, default nvidia.com/gpu"),
                    ("memory_request", "string", "memory per pod, e.g. 6Gi"),
                    ("namespace", "string", "the namespace it would run in"),
                ],
                &[],
            ),
        ),
        tool(
            "gpu_hours",
            "GPU-hours",
            "GPU-hours held (and measured, where agents report) per namespace, workload or pod for a month, from \
             the site's history.",
            schema(
                &[
                    ("month", "string", "YYYY-MM (default: this month)"),
                    ("by", "string", "namespace (default), workload or pod"),
                ],
                &[],
            ),
        ),
        tool(
            "diagnoses",
            "Diagnoses",
            "Everything gpudash finds wrong now, most severe first: code, severity, object, and one sentence of \
             what is wrong and what to do.",
            schema(
                &[
                    ("namespace", "string", "only this namespace"),
                    ("code", "string", "only this diagnosis code (e.g. insufficient-gpu)"),
                    ("severity", "string", "only this severity: critical, warning or info"),
                ],
                &[],
            ),
        ),
        tool(
            "node_history",
            "A node's history",
            "Recorded points of one of a node's series over a range: GPU units allocated, memory used, GPU busy.",
            schema(
                &[
                    ("node", "string", "the node"),
                    ("metric", "string", "gpu_allocated (default), mem_used, gpu_busy…"),
                    ("resource", "string", "the GPU resource, for GPU metrics"),
                    ("range", "string", "1h, 24h (default), 7d or 30d"),
                ],
                &["node"],
            ),
        ),
    ]
}

/// `tools/call`: the tool's answer, `isError` when it could not answer.
async fn call(site: &Site, params: &Value) -> Result<Value, (i64, String)> {
    let name = params.get("name").and_then(Value::as_str).ok_or((-32602, "tools/call needs a name".to_string()))?;
    let empty = Map::new();
    let args = params.get("arguments").and_then(Value::as_object).unwrap_or(&empty);
    let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    let lang = match arg("lang") {
        Some("ja") => "ja",
        Some(_) => "en",
        None => site.lang,
    };
    let answered = match name {
        "gpu_overview" => gpu_overview(site, lang, arg("node")).await,
        "why_pending" => why_pending(site, lang, arg("namespace"), arg("pod").unwrap_or_default()).await,
        "will_it_fit" => will_it_fit(site, lang, args).await,
        "gpu_hours" => gpu_hours(site, lang, arg("month"), arg("by")).await,
        "diagnoses" => diagnoses(site, lang, arg("namespace"), arg("code"), arg("severity")).await,
        "node_history" => node_history(site, &arg).await,
        other => return Err((-32602, format!("no such tool: {other}"))),
    };
    Ok(match answered {
        Ok((structured, text)) => json!({
            "content": [{ "type": "text", "text": text }],
            "structuredContent": structured,
            "isError": false,
        }),
        Err(e) => json!({ "content": [{ "type": "text", "text": format!("{e:#}") }], "isError": true }),
    })
}

type Answer = anyhow::Result<(Value, String)>;

/// A tool text's own words in `lang` (the sentences inside come from the site, in `lang`).
fn tr(lang: &str, en: &str, ja: &str) -> String {
    if lang == "ja" { ja } else { en }.to_string()
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or_default()
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or_default()
}

async fn gpu_overview(site: &Site, lang: &str, node: Option<&str>) -> Answer {
    let v = site.get(&format!("/api/v1/cluster?lang={lang}")).await?;
    let nodes: Vec<Value> = items(&v["nodes"])
        .iter()
        .filter(|n| node.is_none_or(|want| s(n, "name") == want))
        .map(|n| {
            let resources: Vec<Value> = items(&n["gpu_resources"])
                .iter()
                .map(|g| {
                    let holders: Vec<Value> = items(&g["holders"])
                        .iter()
                        .map(|h| json!({ "namespace": h["namespace"], "name": h["name"], "count": h["count"] }))
                        .collect();
                    json!({
                        "resource": g["resource"], "product": g["product"], "sharing": g["sharing"],
                        "capacity": g["capacity"], "allocatable": g["allocatable"], "allocated": g["allocated"],
                        "physical_gpus": g["physical_gpus"], "holders": holders,
                    })
                })
                .collect();
            let problems: Vec<Value> = items(&n["problems"])
                .iter()
                .map(|d| json!({ "code": d["code"], "severity": d["severity"], "message": d["message"] }))
                .collect();
            json!({
                "name": n["name"], "ready": n["ready"], "unified_memory": n["unified_memory"], "memory": n["memory"],
                "gpu_resources": resources, "pending_pods": n["pending_pods"], "problems": problems,
            })
        })
        .collect();
    if let Some(want) = node {
        anyhow::ensure!(!nodes.is_empty(), "no node {want} in this cluster");
    }
    let mut text = String::new();
    let t = &v["totals"];
    let (nodes_n, ready_n, used, all) = (&t["nodes"], &t["ready_nodes"], &t["gpu_allocated"], &t["gpu_allocatable"]);
    let (pending, critical, warnings) = (&t["pending"], &t["critical"], &t["warnings"]);
    text.push_str(&tr(
        lang,
        &format!(
            "{nodes_n} nodes ({ready_n} Ready); GPU units allocated {used} of {all}; {pending} Pending pods; \
             {critical} critical, {warnings} warnings.\n"
        ),
        &format!(
            "Node {nodes_n} 台（Ready {ready_n}）、GPU 割り当て {used} / {all}、Pending の Pod {pending} 個、\
             重大 {critical}・警告 {warnings}。\n"
        ),
    ));
    for n in &nodes {
        let ready =
            if n["ready"] == json!(true) { String::new() } else { tr(lang, " (not Ready)", "（Ready でない）") };
        for g in items(&n["gpu_resources"]) {
            let who: Vec<String> = items(&g["holders"])
                .iter()
                .map(|h| format!("{}/{}×{}", s(h, "namespace"), s(h, "name"), h["count"]))
                .collect();
            text.push_str(&format!(
                "{}{ready}: {} {}/{}{}{}\n",
                s(n, "name"),
                s(g, "resource"),
                g["allocated"],
                g["allocatable"],
                if s(g, "sharing") == "none" { String::new() } else { format!(" ({})", s(g, "sharing")) },
                if who.is_empty() { String::new() } else { format!(" — {}", who.join(", ")) },
            ));
        }
        for p in items(&n["problems"]) {
            text.push_str(&format!("{}: {} ({}) {}\n", s(n, "name"), s(p, "code"), s(p, "severity"), s(p, "message")));
        }
    }
    Ok((json!({ "totals": v["totals"], "nodes": nodes, "generated_at": v["generated_at"] }), text))
}

async fn why_pending(site: &Site, lang: &str, namespace: Option<&str>, pod: &str) -> Answer {
    anyhow::ensure!(!pod.is_empty(), "name the pod");
    let (namespace, pod) = match pod.split_once('/') {
        Some((ns, name)) if namespace.is_none() => (Some(ns), name),
        _ => (namespace, pod),
    };
    let v = site.get(&format!("/api/v1/cluster?lang={lang}")).await?;
    let is_it = |x: &Value| s(x, "name") == pod && namespace.is_none_or(|ns| s(x, "namespace") == ns);
    let pending: Vec<&Value> = items(&v["pending"]).iter().chain(items(&v["blocked"])).filter(|p| is_it(p)).collect();
    let about: Vec<&Value> = items(&v["diagnoses"]).iter().filter(|d| is_it(d)).collect();
    let namespaces: std::collections::BTreeSet<&str> =
        pending.iter().chain(about.iter()).map(|x| s(x, "namespace")).collect();
    anyhow::ensure!(
        namespaces.len() <= 1,
        "pods named {pod} in several namespaces ({}): name the namespace",
        namespaces.into_iter().collect::<Vec<_>>().join(", ")
    );
    if pending.is_empty() && about.is_empty() {
        anyhow::bail!(
            "{} is neither Pending nor the subject of any diagnosis: it is running, finished or does not exist",
            namespace.map_or_else(|| pod.to_string(), |ns| format!("{ns}/{pod}"))
        );
    }
    let mut text = String::new();
    for p in &pending {
        let (who, since) = (format!("{}/{}", s(p, "namespace"), s(p, "name")), s(p, "pending_since"));
        text.push_str(&tr(
            lang,
            &format!("{who} is Pending since {since}."),
            &format!("{who} は {since} から Pending です。"),
        ));
        let reasons: Vec<String> =
            items(&p["reasons"]).iter().map(|r| format!("{} ({})", s(r, "reason"), r["nodes"])).collect();
        if !reasons.is_empty() {
            let said = reasons.join("; ");
            text.push_str(&tr(lang, &format!(" The scheduler: {said}."), &format!(" スケジューラー: {said}。")));
        }
        text.push('\n');
    }
    for d in &about {
        text.push_str(&format!("{} ({}): {}\n", s(d, "code"), s(d, "severity"), s(d, "message")));
    }
    Ok((json!({ "pending": pending.first(), "diagnoses": about }), text))
}

async fn will_it_fit(site: &Site, lang: &str, args: &Map<String, Value>) -> Answer {
    let form: Map<String, Value> = ["gpu_count", "gpu_resource", "memory_request", "namespace"]
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str).map(|v| ((*k).to_string(), json!(v))))
        .collect();
    let body = match args.get("yaml").and_then(Value::as_str) {
        Some(yaml) => json!({ "yaml": yaml }),
        None if !form.is_empty() => Value::Object(form),
        None => anyhow::bail!("give a workload: `yaml`, or `gpu_count` and `memory_request`"),
    };
    let v = site.post(&format!("/api/v1/fit?lang={lang}"), &body).await?;
    let mut text = format!("{}\n", s(&v, "summary"));
    for n in items(&v["nodes"]) {
        let why: Vec<String> =
            items(&n["reasons"]).iter().map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string)).collect();
        let verdict = if n["fits"] == json!(true) { "fits".to_string() } else { why.join("; ") };
        text.push_str(&format!("{}: {verdict}\n", s(n, "node")));
    }
    for sug in items(&v["suggestions"]) {
        text.push_str(&format!("- {}\n", sug.as_str().map_or_else(|| sug.to_string(), str::to_string)));
    }
    Ok((v, text))
}

async fn gpu_hours(site: &Site, lang: &str, month: Option<&str>, by: Option<&str>) -> Answer {
    let month = match month {
        Some(m) => m.to_string(),
        None => jiff::Timestamp::now().strftime("%Y-%m").to_string(),
    };
    let by = by.unwrap_or("namespace");
    let q = |v: &str| app::boot::percent_encode(v);
    let v = site.get(&format!("/api/v1/reports?month={}&by={}&lang={lang}", q(&month), q(by))).await?;
    let mut text =
        tr(lang, &format!("GPU-hours held in {month} by {by}:\n"), &format!("{month} の GPU 時間（{by} ごと）:\n"));
    for r in items(&v["rows"]).iter().take(50) {
        let name =
            ["namespace", "workload", "pod"].iter().map(|k| s(r, k)).filter(|x| !x.is_empty()).collect::<Vec<_>>();
        let hours = r["held_gpu_seconds"].as_f64().map_or_else(|| "?".into(), |x| format!("{:.2}", x / 3600.0));
        text.push_str(&format!("{}: {hours} h\n", name.join("/")));
    }
    Ok((v, text))
}

async fn diagnoses(site: &Site, lang: &str, ns: Option<&str>, code: Option<&str>, severity: Option<&str>) -> Answer {
    let v = site.get(&format!("/api/v1/cluster?lang={lang}")).await?;
    let list: Vec<&Value> = items(&v["diagnoses"])
        .iter()
        .filter(|d| ns.is_none_or(|n| s(d, "namespace") == n))
        .filter(|d| code.is_none_or(|c| s(d, "code") == c))
        .filter(|d| severity.is_none_or(|x| s(d, "severity") == x))
        .collect();
    let mut text = tr(lang, &format!("{} diagnoses.\n", list.len()), &format!("診断 {} 件。\n", list.len()));
    for d in list.iter().take(100) {
        let what = [s(d, "namespace"), s(d, "name")].iter().filter(|x| !x.is_empty()).copied().collect::<Vec<_>>();
        text.push_str(&format!(
            "{} ({}) {} {}: {}\n",
            s(d, "code"),
            s(d, "severity"),
            s(d, "kind"),
            what.join("/"),
            s(d, "message")
        ));
    }
    Ok((json!({ "diagnoses": list }), text))
}

/// `arg`: the call's arguments by name, as `call` reads them.
async fn node_history<'a>(site: &Site, arg: &impl Fn(&str) -> Option<&'a str>) -> Answer {
    let node = arg("node").context("name the node")?;
    let metric = arg("metric").unwrap_or("gpu_allocated");
    let range = arg("range").unwrap_or("24h");
    let q = |v: &str| app::boot::percent_encode(v);
    let mut path = format!("/api/v1/history/series?node={}&metric={}&range={}", q(node), q(metric), q(range));
    if let Some(r) = arg("resource") {
        path.push_str(&format!("&resource={}", q(r)));
    }
    let v = site.get(&path).await?;
    let points = items(&v["points"]);
    let values: Vec<f64> =
        points.iter().filter_map(|p| p.get(1).or_else(|| p.get("value")).and_then(Value::as_f64)).collect();
    let text = match (values.iter().copied().reduce(f64::min), values.iter().copied().reduce(f64::max), values.last()) {
        (Some(lo), Some(hi), Some(last)) => {
            format!("{node} {metric} over {range}: {} points, from {lo} to {hi}, last {last}.\n", values.len())
        }
        _ => format!("{node} {metric} over {range}: no points recorded.\n"),
    };
    Ok((v, text))
}

/// The gpudash site the tools read, and the answers' language when a call names none.
pub struct Site {
    source: Source,
    lang: &'static str,
}

/// Where the site's API is: over HTTP (`gpudash mcp --server`), or this process's own routes
/// (`POST /mcp`, the request already through the site's sign-in).
enum Source {
    Remote { base: String, token: Option<String>, http: reqwest::Client },
    Local(axum::Router),
}

impl Site {
    /// From the command line.
    pub fn new(args: &McpArgs) -> anyhow::Result<Self> {
        let token = match &args.token_file {
            Some(f) => {
                Some(std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?.trim().to_string())
            }
            None => None,
        };
        let lang = match args.lang.clone().or_else(|| std::env::var("LANG").ok()) {
            Some(l) if l.starts_with("ja") => "ja",
            _ => "en",
        };
        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(30))
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        let base = args.server.trim_end_matches('/').to_string();
        Ok(Self { source: Source::Remote { base, token, http }, lang })
    }

    /// This process's API routes (`api`: the cluster, the what-if check, the reports, the series).
    pub fn local(api: axum::Router, lang: app::i18n::Lang) -> Self {
        Self { source: Source::Local(api), lang: lang.code() }
    }

    fn name(&self) -> &str {
        match &self.source {
            Source::Remote { base, .. } => base,
            Source::Local(_) => "this site",
        }
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        self.send(reqwest::Method::GET, path, None).await
    }

    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        self.send(reqwest::Method::POST, path, Some(body)).await
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Option<&Value>) -> anyhow::Result<Value> {
        let at = self.name();
        // At most 64 MiB of answer (a 1,000-node view is a few MB).
        const MAX: usize = 64 << 20;
        let (status, bytes) = match &self.source {
            Source::Remote { base, token, http } => {
                let mut rq = http.request(method, format!("{base}{path}"));
                if let Some(b) = body {
                    rq = rq.json(b);
                }
                if let Some(t) = token {
                    rq = rq.bearer_auth(t);
                }
                let r = rq.send().await.with_context(|| format!("reaching gpudash at {at}"))?;
                let status = r.status().as_u16();
                let bytes = r.bytes().await.with_context(|| format!("reading gpudash's answer from {at}"))?;
                anyhow::ensure!(bytes.len() <= MAX, "gpudash's answer is larger than 64 MiB");
                (status, bytes)
            }
            Source::Local(api) => {
                use tower::ServiceExt as _;
                let mut rq = axum::http::Request::builder().method(method.as_str()).uri(path);
                let body = match body {
                    Some(b) => {
                        rq = rq.header(axum::http::header::CONTENT_TYPE, "application/json");
                        axum::body::Body::from(serde_json::to_vec(b)?)
                    }
                    None => axum::body::Body::empty(),
                };
                let r = api.clone().oneshot(rq.body(body)?).await?;
                let status = r.status().as_u16();
                (status, axum::body::to_bytes(r.into_body(), MAX).await.context("reading the API's answer")?)
            }
        };
        let v: Value = serde_json::from_slice(&bytes)
            .with_context(|| format!("gpudash at {at} answered {status} with something that is not JSON"))?;
        if (200..300).contains(&status) || status == 422 && v.get("fits").is_some() {
            return Ok(v);
        }
        let why =
            v.get("error").and_then(|e| e.get("message").or(Some(e))).map_or_else(|| v.to_string(), |e| e.to_string());
        anyhow::bail!("gpudash at {at} answered {status}: {why}")
    }
}

/// `POST /mcp`: MCP's streamable HTTP transport, stateless (no session: every tool reads the
/// view as it is), each answer one JSON body; a notification gets `202` and nothing. Behind the
/// site's sign-in like the API. A request from a page of another origin is refused (the
/// transport's rule against DNS rebinding). `GET` and `DELETE` (a server's event stream, the
/// end of a session) are `405`: there is neither.
pub async fn http(
    api: axum::Router,
    default: app::i18n::Lang,
    headers: axum::http::HeaderMap,
    body: bytes::Bytes,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse as _;
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if let Some(origin) = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok()) {
        let same = origin.split_once("://").is_some_and(|(_, rest)| rest.trim_end_matches('/') == host);
        if !same {
            return (StatusCode::FORBIDDEN, axum::Json(error(Value::Null, -32600, "a request from another origin")))
                .into_response();
        }
    }
    let lang = gpudash_web::answer_lang(default, &headers, None);
    let site = Site::local(api, lang);
    match answer(&site, &body).await {
        Some(reply) => axum::Json(reply).into_response(),
        None => StatusCode::ACCEPTED.into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        let args = McpArgs { server: "http://127.0.0.1:9".into(), token_file: None, lang: Some("en".into()) };
        Site::new(&args).unwrap_or_else(|e| panic!("{e}"))
    }

    #[tokio::test]
    async fn the_protocol_answers_what_it_must_and_errs_as_json_rpc_says() {
        let site = site();
        let init = answer(
            &site,
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}"#,
        )
        .await
        .unwrap_or_default();
        assert_eq!(init["result"]["protocolVersion"], "2025-03-26", "{init}");
        assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], false);
        let newer = answer(
            &site,
            br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#,
        )
        .await
        .unwrap_or_default();
        assert_eq!(newer["result"]["protocolVersion"], REVISIONS[0]);
        assert!(answer(&site, br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await.is_none());
        let list = answer(&site, br#"{"jsonrpc":"2.0","id":"a","method":"tools/list"}"#).await.unwrap_or_default();
        let names: Vec<&str> = items(&list["result"]["tools"]).iter().map(|t| s(t, "name")).collect();
        assert_eq!(names, ["gpu_overview", "why_pending", "will_it_fit", "gpu_hours", "diagnoses", "node_history"]);
        assert!(items(&list["result"]["tools"]).iter().all(|t| t["annotations"]["readOnlyHint"] == json!(true)));
        for (msg, code) in [
            (&b"{nope"[..], -32700),
            (&b"[1,2]"[..], -32600),
            (&br#"{"jsonrpc":"2.0","id":3,"method":"resources/list"}"#[..], -32601),
            (&br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rm_rf"}}"#[..], -32602),
        ] {
            let r = answer(&site, msg).await.unwrap_or_default();
            assert_eq!(r["error"]["code"], code, "{r}");
        }
        // The site is not there: the tool says so, as a tool error (not a protocol error).
        let r = answer(
            &site,
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"gpu_overview","arguments":{}}}"#,
        )
        .await
        .unwrap_or_default();
        assert_eq!(r["result"]["isError"], true, "{r}");
        assert!(s(&r["result"]["content"][0], "text").contains("reaching gpudash at http://127.0.0.1:9"), "{r}");
    }
}
