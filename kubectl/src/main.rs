//! `kubectl gpudash`: gpudash where operators already are. A kubectl plugin (a binary named
//! `kubectl-gpudash` on the PATH) that reads a gpudash site and prints what it knows as kubectl
//! prints objects:
//!
//! - `kubectl gpudash nodes`: each node's GPU resources and their slots, by GPU;
//! - `kubectl gpudash pending`: the Pending pods with their reasons and diagnosis codes;
//! - `kubectl gpudash why [-n NS] POD`: why a pod waits (or what the node decided about it);
//! - `kubectl gpudash fit -f model.yaml`: the what-if check for a Pod or Deployment;
//!
//! with `-o json|yaml|wide`, sentences in Japanese where the locale is (`LANG=ja_JP.UTF-8`).
//! The site is `--server URL` (or `GPUDASH_SERVER`), else the cluster's gpudash Service reached
//! through the API server's service proxy with the kubectl context (`kubectl get --raw`), so no
//! port-forward is needed. Exit status as kubectl's: 0, or 1 with `error: …` on stderr.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{anyhow, bail, Context};
use clap::{Parser, Subcommand, ValueEnum};
use serde_json::{json, Value};

#[derive(Parser)]
#[command(
    name = "kubectl gpudash",
    version,
    about = "gpudash from kubectl: GPU slots, Pending pods and why, the what-if check"
)]
struct Cli {
    /// gpudash's URL (http://host:port, with its base path); else the cluster's gpudash
    /// Service through the API server's service proxy.
    #[arg(long, env = "GPUDASH_SERVER", global = true)]
    server: Option<String>,
    /// A file holding the site's token (a site started with --auth-token-file).
    #[arg(long, env = "GPUDASH_TOKEN_FILE", global = true)]
    token_file: Option<PathBuf>,
    /// The namespace of gpudash's Service (without --server).
    #[arg(long, default_value = "gpudash", global = true)]
    gpudash_namespace: String,
    /// The name of gpudash's Service (without --server).
    #[arg(long, default_value = "gpudash", global = true)]
    gpudash_service: String,
    /// kubectl's kubeconfig (without --server).
    #[arg(long, global = true)]
    kubeconfig: Option<String>,
    /// kubectl's context (without --server).
    #[arg(long, global = true)]
    context: Option<String>,
    /// Output format: json, yaml or wide (more columns); a table when not given.
    #[arg(short = 'o', long, value_enum, global = true)]
    output: Option<Output>,
    /// The pod's namespace (why).
    #[arg(short = 'n', long, global = true)]
    namespace: Option<String>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Each node's GPU resources and their slots, by GPU.
    Nodes,
    /// The Pending pods, their reasons and diagnosis codes.
    Pending,
    /// Why a pod waits, or what the node decided about it.
    Why {
        /// The pod (NAME, or NAMESPACE/NAME).
        pod: String,
    },
    /// The what-if check: would this Pod or Deployment fit now?
    Fit {
        /// The Pod or Deployment as YAML or JSON (`-` for stdin).
        #[arg(short = 'f', long)]
        filename: PathBuf,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    Json,
    Yaml,
    Wide,
}

/// Where the site is.
enum Site {
    Url { base: String, token: Option<String> },
    Proxy { path: String, kubectl: Vec<String> },
}

impl Site {
    fn of(cli: &Cli) -> anyhow::Result<Self> {
        if let Some(url) = &cli.server {
            let token = match &cli.token_file {
                Some(f) => Some(
                    std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?.trim().to_string(),
                ),
                None => None,
            };
            return Ok(Self::Url { base: url.trim_end_matches('/').to_string(), token });
        }
        let mut kubectl = Vec::new();
        if let Some(k) = &cli.kubeconfig {
            kubectl.extend(["--kubeconfig".to_string(), k.clone()]);
        }
        if let Some(c) = &cli.context {
            kubectl.extend(["--context".to_string(), c.clone()]);
        }
        let path = format!("/api/v1/namespaces/{}/services/{}:http/proxy", cli.gpudash_namespace, cli.gpudash_service);
        Ok(Self::Proxy { path, kubectl })
    }

    async fn get(&self, path: &str) -> anyhow::Result<Value> {
        match self {
            Self::Url { base, token } => {
                let mut rq = reqwest::Client::new().get(format!("{base}{path}"));
                if let Some(t) = token {
                    rq = rq.bearer_auth(t);
                }
                let r = rq.send().await.with_context(|| format!("reaching gpudash at {base}"))?;
                answer(r).await.map(|(_, v)| v)
            }
            Self::Proxy { path: proxy, kubectl } => {
                let out = Command::new("kubectl")
                    .args(kubectl)
                    .args(["get", "--raw", &format!("{proxy}{path}")])
                    .output()
                    .context("running kubectl (it must be on the PATH)")?;
                if !out.status.success() {
                    bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
                }
                serde_json::from_slice(&out.stdout).context("gpudash's answer is not JSON")
            }
        }
    }

    /// Posts a workload to the what-if check: its answer (a 422 is an answer too).
    async fn fit(&self, yaml: &str, lang: &str) -> anyhow::Result<Value> {
        let path = format!("/api/v1/fit?lang={lang}");
        match self {
            Self::Url { base, token } => {
                let mut rq = reqwest::Client::new()
                    .post(format!("{base}{path}"))
                    .header("content-type", "application/yaml")
                    .body(yaml.to_string());
                if let Some(t) = token {
                    rq = rq.bearer_auth(t);
                }
                let r = rq.send().await.with_context(|| format!("reaching gpudash at {base}"))?;
                answer(r).await.map(|(_, v)| v)
            }
            Self::Proxy { path: proxy, kubectl } => {
                let dir = std::env::temp_dir().join(format!("kubectl-gpudash-{}", std::process::id()));
                std::fs::write(&dir, yaml)?;
                let out = Command::new("kubectl")
                    .args(kubectl)
                    .args(["create", "--raw", &format!("{proxy}{path}"), "-f"])
                    .arg(&dir)
                    .output()
                    .context("running kubectl (it must be on the PATH)");
                let _ = std::fs::remove_file(&dir);
                let out = out?;
                if !out.status.success() {
                    bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
                }
                serde_json::from_slice(&out.stdout).context("gpudash's answer is not JSON")
            }
        }
    }
}

/// A response's JSON; an error answer as gpudash words it (`{"error": {"message"}}`), except
/// the what-if check's 422, which is a result.
async fn answer(r: reqwest::Response) -> anyhow::Result<(u16, Value)> {
    let status = r.status().as_u16();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    if status == 200 || (status == 422 && body.get("summary").is_some()) {
        return Ok((status, body));
    }
    let msg = body["error"]["message"].as_str().unwrap_or("no message");
    Err(anyhow!("gpudash answered {status}: {msg}"))
}

/// `ja` where the locale is Japanese (the first of LC_ALL, LC_MESSAGES, LANG that is set).
fn lang() -> &'static str {
    let locale = ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .find(|v| !v.is_empty())
        .unwrap_or_default();
    if locale.starts_with("ja") {
        "ja"
    } else {
        "en"
    }
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

fn items(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// Columns padded to their widest cell, two spaces apart, as kubectl prints them.
fn table(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|i| rows.iter().map(|r| r.get(i).map_or(0, |c| c.chars().count())).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| if i + 1 == r.len() { c.clone() } else { format!("{c:<w$}", w = widths[i]) })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// How long since an RFC 3339 time, as kubectl's AGE column says it (`3h4m`, `2d`).
fn age(since: &str, now: jiff::Timestamp) -> String {
    let Ok(t) = since.parse::<jiff::Timestamp>() else { return "<unknown>".into() };
    let secs = now.duration_since(t).as_secs().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

/// A pending pod as this plugin prints it in JSON and YAML: who, since when, the reasons with
/// their node counts, the diagnosis codes.
fn pending_entry(p: &Value) -> Value {
    json!({
        "namespace": p["namespace"], "name": p["name"], "pending_since": p["pending_since"],
        "gpu_request": p["gpu_request"],
        "reasons": items(&p["reasons"]).map(|r| json!({"reason": r["reason"], "nodes": r["nodes"]})).collect::<Vec<_>>(),
        "diagnoses": p["diagnoses"],
    })
}

fn reason_text(r: &Value) -> String {
    match r["nodes"].as_u64() {
        Some(n) => format!("{} ({n})", s(&r["reason"])),
        None => s(&r["reason"]).to_string(),
    }
}

fn pending(v: &Value, out: Option<Output>, now: jiff::Timestamp) -> anyhow::Result<String> {
    let list: Vec<Value> = items(&v["pending"]).map(pending_entry).collect();
    match out {
        Some(Output::Json) => return Ok(serde_json::to_string_pretty(&list)? + "\n"),
        Some(Output::Yaml) => return Ok(serde_yaml::to_string(&list)?),
        _ => {}
    }
    let wide = out == Some(Output::Wide);
    let mut rows = vec![if wide {
        ["NAMESPACE", "NAME", "WAITING", "GPU", "REASONS", "DIAGNOSES"].map(String::from).to_vec()
    } else {
        ["NAMESPACE", "NAME", "WAITING", "REASONS", "DIAGNOSES"].map(String::from).to_vec()
    }];
    for p in items(&v["pending"]) {
        let reasons: Vec<String> = items(&p["reasons"]).map(reason_text).collect();
        let codes: Vec<&str> = items(&p["diagnoses"]).map(s).collect();
        let mut row = vec![s(&p["namespace"]).to_string(), s(&p["name"]).to_string(), age(s(&p["pending_since"]), now)];
        if wide {
            let g = &p["gpu_request"];
            row.push(if g.is_null() { "-".into() } else { format!("{} {}", g["count"], s(&g["resource"])) });
        }
        row.push(if reasons.is_empty() { "-".into() } else { reasons.join("; ") });
        row.push(if codes.is_empty() { "-".into() } else { codes.join(",") });
        rows.push(row);
    }
    if rows.len() == 1 {
        return Ok(if lang() == "ja" { "Pending の Pod はありません。\n" } else { "No Pending pods.\n" }.into());
    }
    Ok(table(&rows))
}

/// One resource's slots as text, one line per GPU (or row): `GPU 0: vision/a, vision/b, free`.
fn slot_lines(g: &Value, wide: bool) -> Vec<String> {
    let holders: Vec<&Value> = items(&g["holders"]).collect();
    let mut lines = Vec::new();
    for (i, row) in items(&g["slots"]).enumerate() {
        // The derivation's name for the row, else the GPU's number where placement is known.
        let label = match (g["rows"][i].as_str(), g["placement_known"] == true) {
            (Some(l), _) => l.to_string(),
            (None, true) => format!("GPU {i}"),
            (None, false) => "units (which GPU each is on is not known)".to_string(),
        };
        let cells: Vec<String> = items(row)
            .map(|slot| {
                let state = s(&slot["state"]);
                let who = slot["holder"].as_u64().and_then(|h| holders.get(h as usize)).map(|h| {
                    let name = format!("{}/{}", s(&h["namespace"]), s(&h["name"]));
                    match (wide, h["workload"].as_str()) {
                        (true, Some(w)) => format!("{name} ({w})"),
                        _ => name,
                    }
                });
                let label = slot["label"].as_str();
                let extra = label.filter(|_| wide).map(|l| format!(" [{l}]")).unwrap_or_default();
                match (state, who, label) {
                    ("held", Some(w), _) => format!("{w}{extra}"),
                    (st, Some(w), _) => format!("{w} ({st}){extra}"),
                    // A slot the derivation names without a pod (a claim no pod uses).
                    (st, None, Some(l)) => format!("{st} [{l}]"),
                    (st, None, None) => st.to_string(),
                }
            })
            .collect();
        lines.push(format!("  {label}: {}", cells.join(", ")));
    }
    lines
}

fn nodes(v: &Value, out: Option<Output>) -> anyhow::Result<String> {
    let list: Vec<Value> = items(&v["nodes"])
        .map(|n| {
            json!({"name": n["name"], "ready": n["ready"], "unified_memory": n["unified_memory"],
                   "gpu_resources": items(&n["gpu_resources"]).map(|g| json!({
                       "resource": g["resource"], "sharing": g["sharing"], "capacity": g["capacity"],
                       "allocatable": g["allocatable"], "allocated": g["allocated"], "physical_gpus": g["physical_gpus"],
                       "placement_known": g["placement_known"], "holders": g["holders"], "slots": g["slots"], "rows": g["rows"]})).collect::<Vec<_>>()})
        })
        .collect();
    match out {
        Some(Output::Json) => return Ok(serde_json::to_string_pretty(&list)? + "\n"),
        Some(Output::Yaml) => return Ok(serde_yaml::to_string(&list)?),
        _ => {}
    }
    let wide = out == Some(Output::Wide);
    let mut rows = vec![["NODE", "READY", "RESOURCE", "SHARING", "HELD", "PENDING"].map(String::from).to_vec()];
    let mut slots = String::new();
    for n in items(&v["nodes"]) {
        let ready = if n["ready"] == true { "True" } else { "False" };
        let pending = n["pending_pods"].as_u64().unwrap_or(0).to_string();
        for g in items(&n["gpu_resources"]) {
            rows.push(vec![
                s(&n["name"]).to_string(),
                ready.into(),
                s(&g["resource"]).to_string(),
                s(&g["sharing"]).to_string(),
                format!("{}/{}", g["allocated"], g["allocatable"]),
                pending.clone(),
            ]);
            slots.push_str(&format!("\n{} {}\n", s(&n["name"]), s(&g["resource"])));
            for l in slot_lines(g, wide) {
                slots.push_str(&l);
                slots.push('\n');
            }
        }
    }
    if rows.len() == 1 {
        return Ok(if lang() == "ja" {
            "GPU を持つ Node はありません。\n"
        } else {
            "No node offers a GPU.\n"
        }
        .into());
    }
    Ok(table(&rows) + &slots)
}

/// Why `pod` waits: its reasons and diagnoses; else what gpudash says about it (a pod the node
/// refused or evicted, one that holds a GPU without running).
fn why(v: &Value, ns: Option<&str>, pod: &str, out: Option<Output>, now: jiff::Timestamp) -> anyhow::Result<String> {
    let (ns, name) = match pod.split_once('/') {
        Some((n, p)) => (Some(n), p),
        None => (ns, pod),
    };
    let is = |x: &Value| x["name"] == name && ns.is_none_or(|n| x["namespace"] == n);
    let waiting = items(&v["pending"]).find(|p| is(p));
    let said: Vec<&Value> = items(&v["diagnoses"]).filter(|d| is(d)).collect();
    if waiting.is_none() && said.is_empty() {
        let where_ = ns.map(|n| format!(" in namespace \"{n}\"")).unwrap_or_default();
        bail!("gpudash knows nothing about pod \"{name}\"{where_}: it is neither Pending nor diagnosed");
    }
    let doc = json!({
        "pending": waiting.map(pending_entry),
        "diagnoses": said.iter().map(|d| json!({"code": d["code"], "severity": d["severity"], "kind": d["kind"],
            "namespace": d["namespace"], "name": d["name"], "message": d["message"]})).collect::<Vec<_>>(),
    });
    match out {
        Some(Output::Json) => return Ok(serde_json::to_string_pretty(&doc)? + "\n"),
        Some(Output::Yaml) => return Ok(serde_yaml::to_string(&doc)?),
        _ => {}
    }
    let ja = lang() == "ja";
    let mut text = String::new();
    if let Some(p) = waiting {
        let who = format!("{}/{}", s(&p["namespace"]), s(&p["name"]));
        let since = age(s(&p["pending_since"]), now);
        text.push_str(&if ja {
            format!("{who} は {since} Pending です:\n")
        } else {
            format!("{who} has been Pending for {since}:\n")
        });
        for r in items(&p["reasons"]) {
            text.push_str(&format!("  {}\n", reason_text(r)));
        }
        if let Some(m) = p["message"].as_str().filter(|_| p["reasons"].as_array().is_none_or(Vec::is_empty)) {
            text.push_str(&format!("  {m}\n"));
        }
    }
    for d in said {
        text.push_str(&format!("\n{} ({}):\n  {}\n", s(&d["code"]), s(&d["severity"]), s(&d["message"])));
    }
    Ok(text)
}

fn fit(v: &Value, out: Option<Output>) -> anyhow::Result<String> {
    match out {
        Some(Output::Json) => return Ok(serde_json::to_string_pretty(v)? + "\n"),
        Some(Output::Yaml) => return Ok(serde_yaml::to_string(v)?),
        _ => {}
    }
    if let Some(e) = v["error"].as_object() {
        bail!(
            "{}: {}",
            e.get("field").and_then(Value::as_str).unwrap_or(""),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        );
    }
    let mut text = format!("{}\n", s(&v["summary"]));
    let mut rows = vec![["NODE", "FITS", "REASONS"].map(String::from).to_vec()];
    for n in items(&v["nodes"]) {
        let reasons: Vec<&str> = items(&n["reasons"]).map(s).collect();
        let fits = if n["fits"] == true { "yes" } else { "no" };
        rows.push(vec![
            s(&n["node"]).to_string(),
            fits.into(),
            if reasons.is_empty() { "-".into() } else { reasons.join("; ") },
        ]);
    }
    if rows.len() > 1 {
        text.push_str(&table(&rows));
    }
    for sug in items(&v["suggestions"]) {
        text.push_str(&format!("- {}\n", sug.as_str().map(str::to_string).unwrap_or_else(|| sug.to_string())));
    }
    Ok(text)
}

async fn run(cli: Cli) -> anyhow::Result<String> {
    let site = Site::of(&cli)?;
    let lang = lang();
    let now = jiff::Timestamp::now();
    match &cli.command {
        Cmd::Fit { filename } => {
            let yaml = if filename.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(filename).with_context(|| format!("reading {}", filename.display()))?
            };
            fit(&site.fit(&yaml, lang).await?, cli.output)
        }
        cmd => {
            let v = site.get(&format!("/api/v1/cluster?lang={lang}")).await?;
            match cmd {
                Cmd::Nodes => nodes(&v, cli.output),
                Cmd::Pending => pending(&v, cli.output, now),
                Cmd::Why { pod } => why(&v, cli.namespace.as_deref(), pod, cli.output, now),
                Cmd::Fit { .. } => unreachable!("handled above"),
            }
        }
    }
}

fn main() {
    let cli = Cli::parse();
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    match rt.block_on(run(cli)) {
        Ok(text) => print!("{text}"),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_pad_columns_and_ages_read_as_kubectl_prints_them() {
        let t = table(&[vec!["A".into(), "BB".into(), "C".into()], vec!["long".into(), "x".into(), "y".into()]]);
        assert_eq!(t, "A     BB  C\nlong  x   y\n");
        let now: jiff::Timestamp = "2026-12-07T12:00:00Z".parse().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(age("2026-12-07T08:56:00Z", now), "3h4m");
        assert_eq!(age("2026-12-05T11:00:00Z", now), "2d1h");
        assert_eq!(age("not a time", now), "<unknown>");
    }

    #[test]
    fn why_names_the_pod_by_namespace_or_not_at_all() {
        let v = json!({"pending": [{"namespace": "vision", "name": "m", "reasons": [{"reason": "Insufficient nvidia.com/gpu", "nodes": 2}],
                                    "diagnoses": ["insufficient-gpu"], "pending_since": "2026-12-07T11:00:00Z"}],
                       "diagnoses": [{"code": "insufficient-gpu", "severity": "critical", "namespace": "vision", "name": "m",
                                      "message": "Every unit is held."}]});
        let now: jiff::Timestamp = "2026-12-07T12:00:00Z".parse().unwrap_or_else(|e| panic!("{e}"));
        let t = why(&v, None, "vision/m", None, now).unwrap_or_else(|e| panic!("{e}"));
        assert!(t.contains("Insufficient nvidia.com/gpu (2)") && t.contains("insufficient-gpu (critical)"), "{t}");
        assert!(why(&v, Some("ml"), "m", None, now).is_err(), "another namespace");
        assert!(why(&v, None, "gone", None, now).is_err());
    }
}
