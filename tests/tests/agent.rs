//! The node agent end to end: `gpudash serve --demo tests/scenarios/agent/agents.yaml` starts a
//! real `gpudash-agent` per GPU node against the simulator's kubelet sockets (and recorded
//! tegrastats on the Orin Nano); gpudash finds the agents' pods and pulls them. Checked through
//! the API and in Chromium: a two-GPU time-sliced node's slots placed exactly, the Jetson's GR3D
//! busy % and board RAM beside requests and limits — then an agent killed: shown stale, never
//! zero.

use std::time::Duration;

use fantoccini::Locator;
use gpudash_tests::browser::{shot, wait_text};
use gpudash_tests::{with_browser, Gpudash};
use serde_json::Value;

fn node<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == name).unwrap_or_else(|| panic!("node {name}"))
}

/// The chart at `url` once it names `what` (history is recorded as the agents answer), or what
/// it said last after 20 s.
async fn chart_naming(url: &str, what: &str) -> String {
    let t = std::time::Instant::now();
    let mut svg = String::new();
    while t.elapsed() < Duration::from_secs(20) && !svg.contains(what) {
        svg = match reqwest::get(url).await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    svg
}

/// The child process of `parent` whose command line names `--node <node>`.
fn agent_pid(parent: u32, node: &str) -> Option<u32> {
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // The parent pid is the second field after the parenthesised command name.
        let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<u32>().ok());
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent) && cmd.contains("gpudash-agent") && cmd.contains(&format!("--node\0{node}\0")) {
            return Some(pid);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_place_replicas_exactly_show_use_and_go_stale_when_killed() {
    let scenario = format!("{}/tests/scenarios/agent/agents.yaml", gpudash_tests::root().display());
    let gd = Gpudash::start(&[
        "--demo",
        "--demo-agents",
        "true",
        "--agent-interval",
        "0.5",
        "--history-resolution",
        "0.5",
        &scenario,
    ])
    .await
    .unwrap();
    let live = |v: &Value, n: &str| node(v, n)["agent"]["stale"] == false;
    let v = gd
        .wait_view(Duration::from_secs(30), |v| {
            v["source"]["synced"] == true
                && live(v, "gpu-ts-01")
                && live(v, "orin-nano-01")
                && node(v, "orin-nano-01")["memory"]["board_used_bytes"].is_u64()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gd.proc.output()));

    // Two GPUs × 4 replicas: each held slot is on the GPU the kubelet gave its pod.
    let g = &node(&v, "gpu-ts-01")["gpu_resources"][0];
    assert_eq!((&g["placement_known"], &g["physical_gpus"]), (&Value::Bool(true), &Value::from(2)));
    let rows = g["slots"].as_array().cloned().unwrap_or_default();
    assert_eq!(rows.iter().map(|r| r.as_array().map_or(0, Vec::len)).collect::<Vec<_>>(), [4, 4]);
    let holders = g["holders"].as_array().cloned().unwrap_or_default();
    for (i, dev) in g["devices"].as_array().into_iter().flatten().enumerate() {
        assert!(dev["uuid"].as_str().is_some_and(|u| u.starts_with("GPU-")), "{dev}");
        for h in dev["holders"].as_array().into_iter().flatten() {
            for r in h["replicas"].as_array().into_iter().flatten() {
                let slot = &rows[i][usize::try_from(r.as_u64().unwrap_or(99)).unwrap_or(99)];
                let idx = usize::try_from(slot["holder"].as_u64().unwrap_or(99)).unwrap_or(99);
                assert_eq!(holders[idx]["name"], h["name"], "GPU {i} replica {r}: {g}");
            }
        }
    }
    let held: u64 = holders.iter().map(|h| h["count"].as_u64().unwrap_or(0)).sum();
    let placed =
        rows.iter().flat_map(|r| r.as_array().cloned().unwrap_or_default()).filter(|s| s["state"] == "held").count();
    assert_eq!(u64::try_from(placed).unwrap_or(0), held, "every unit held is drawn once");

    // The Orin Nano: GR3D busy from the recorded board, its RAM in use beside requests/limits.
    let j = node(&v, "orin-nano-01");
    assert_eq!(j["gpu_resources"][0]["devices"][0]["busy_percent"], 0, "the recorded Orin Nano line says GR3D_FREQ 0%");
    assert_eq!(j["memory"]["board_used_bytes"], 2147u64 * 1024 * 1024);
    assert!(node(&v, "gpu-x86-02")["agent"].is_object(), "every GPU node of the demo has its agent");

    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/")).await?;
        let card = "article.node[data-node='gpu-ts-01']";
        wait_text(&c, &format!("{card} .slot-row-label"), "GPU 0", Duration::from_secs(10)).await?;
        let labels = c.find_all(Locator::Css(&format!("{card} .slot-row-label"))).await?;
        let mut texts = Vec::new();
        for l in labels {
            texts.push(l.text().await?);
        }
        assert_eq!(texts, ["GPU 0", "GPU 1"], "one row per physical GPU");
        assert_eq!(c.find_all(Locator::Css(&format!("{card} li.slot"))).await?.len(), 8);
        wait_text(&c, &format!("{card} .badge.agent"), "agent", Duration::from_secs(5)).await?;
        shot(&c, "agent-exact-placement.png").await?;
        c.goto(&format!("{url}/nodes/orin-nano-01")).await?;
        let row = c.find(Locator::Css("section.devices tr[data-device='tegra']")).await?.text().await?;
        assert!(row.contains("0%") && row.contains("vision/shelf-cam-8c9d0e1f2-u8i9o (replica 0)"), "{row}");
        wait_text(&c, "article.node .mem-row.board .mem-value", "2.1 GiB", Duration::from_secs(5)).await?;
        let mem = c.find(Locator::Css("article.node .memory")).await?.text().await?;
        assert!(mem.contains("requests") && mem.contains("limits") && mem.contains("board use"), "{mem}");
        shot(&c, "agent-jetson-node.png").await?;
        Ok(())
    })
    .await
    .unwrap();

    // History: each GPU's busy % and the board's RAM in use, recorded from the agent.
    let chart = format!("{}/charts/busy.svg?node=orin-nano-01&resource=nvidia.com%2Fgpu&range=1h", gd.url);
    let svg = chart_naming(&chart, "GPU 0 · tegra").await;
    assert!(svg.contains("GPU 0 · tegra") && svg.contains("100%"), "{svg}");
    let mem = reqwest::get(format!("{}/charts/memory.svg?node=orin-nano-01&range=1h", gd.url)).await;
    let mem = match mem {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    assert!(mem.contains("board use (agent)"), "{mem}");

    // Kill gpu-ts-01's agent: its node goes stale, its last map and use stay, nothing is zeroed.
    let pid = agent_pid(gd.proc.pid(), "gpu-ts-01").unwrap_or_else(|| panic!("no agent process for gpu-ts-01"));
    let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
    assert!(killed.is_ok_and(|s| s.success()));
    let v = gd.wait_view(Duration::from_secs(30), |v| node(v, "gpu-ts-01")["agent"]["stale"] == true).await.unwrap();
    let n = node(&v, "gpu-ts-01");
    assert!(n["agent"]["seen_at"].is_string(), "stale since a known time: {}", n["agent"]);
    assert_eq!(n["gpu_resources"][0]["placement_known"], true, "the last map is kept");
    assert!(
        n["gpu_resources"][0]["rows"][0].as_str().is_some_and(|r| r.ends_with("stale")),
        "{}",
        n["gpu_resources"][0]["rows"]
    );
    assert!(v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| d["code"] == "agent-stale" && d["name"] == "gpu-ts-01"));
    assert_eq!(node(&v, "orin-nano-01")["agent"]["stale"], false, "the other agents are live");
    let url = gd.url.clone();
    with_browser(|c| async move {
        c.goto(&format!("{url}/")).await?;
        wait_text(
            &c,
            "article.node[data-node='gpu-ts-01'] .badge.agent[data-stale='true']",
            "agent silent since",
            Duration::from_secs(10),
        )
        .await?;
        wait_text(&c, "article.node[data-node='gpu-ts-01'] .slot-row-label", "stale", Duration::from_secs(5)).await?;
        shot(&c, "agent-stale.png").await?;
        Ok(())
    })
    .await
    .unwrap();
}

/// Unified memory per model on the default demo: each Jetson's agent reads the simulated
/// board's nvmap table and maps each process to its pod by its cgroup; gpudash shows each pod's
/// GPU memory and the board split by holder on the node page (Chromium), diagnoses the pods
/// whose GPU memory and cgroup use exceed their limit, and records and charts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_jetson_shows_gpu_memory_per_pod_and_a_pod_beyond_its_limit_is_diagnosed() {
    let gd =
        Gpudash::start(&["--demo", "--demo-agents", "true", "--agent-interval", "0.5", "--history-resolution", "0.5"])
            .await
            .unwrap();
    let split = |v: &Value, n: &str| node(v, n)["memory"]["split"].is_object();
    let v = gd
        .wait_view(Duration::from_secs(30), |v| {
            v["source"]["synced"] == true
                && split(v, "orin-agx-01")
                && split(v, "orin-nano-01")
                && split(v, "xavier-nx-03")
        })
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", gd.proc.output()));
    for name in ["orin-agx-01", "orin-nano-01"] {
        let n = node(&v, name);
        let s = &n["memory"]["split"];
        let part = |k: &str| s[k].as_u64().unwrap_or(0);
        assert_eq!(
            part("gpu_pods_bytes") + part("other_pods_bytes") + part("system_bytes") + part("free_bytes"),
            part("total_bytes"),
            "{name}: {s}"
        );
        let gpu: u64 = n["pods"].as_array().into_iter().flatten().filter_map(|p| p["gpu_memory_bytes"].as_u64()).sum();
        assert!(gpu > 0 && gpu == part("gpu_pods_bytes"), "{name}: pods {gpu} vs split {s}");
        assert!(s["nvmap_used_bytes"].as_u64().is_some_and(|b| b >= gpu), "NvMapMemUsed counts the desktop too: {s}");
    }
    // The Xavier NX without the device plugin: Kubernetes counts no GPU there, but its agent
    // reads the board (a recorded Xavier NX line) and finds the model that reaches the GPU
    // through the NVIDIA runtime holding GPU memory.
    let xavier = node(&v, "xavier-nx-03");
    assert!(xavier["gpu_resources"].as_array().is_some_and(Vec::is_empty), "{xavier}");
    assert_eq!(xavier["memory"]["split"]["total_bytes"], 7772u64 << 20, "the recorded board's RAM: {xavier}");
    let counter =
        xavier["pods"].as_array().into_iter().flatten().find(|p| p["name"] == "people-counter-7f8e9d0c1-k2m4q");
    assert!(counter.is_some_and(|p| p["gpu_memory_bytes"].as_u64().is_some_and(|b| b > 0)), "{xavier}");
    // The simulated models hold ~30 % of their memory request as GPU memory: whisper (6.5 GiB
    // in its cgroup, 8 GiB limit) and the 3B LLM (13.5 GiB, 16 GiB) go over; yolo does not.
    let over: Vec<String> = v["diagnoses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["code"] == "gpu-memory-beyond-limit")
        .map(|d| {
            format!(
                "{}/{}@{}",
                d["namespace"].as_str().unwrap_or(""),
                d["name"].as_str().unwrap_or(""),
                d["node"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert!(over.iter().any(|d| d.starts_with("ml/whisper-asr") && d.ends_with("@orin-agx-01")), "{over:?}");
    assert!(!over.iter().any(|d| d.starts_with("vision/yolo-detector")), "{over:?}");

    // The built-in demo's GPUs work: the boards' GR3D and the x86 server's dcgm-exporter page
    // (the simulator's) give busy % that moves.
    let busy = |v: &Value, n: &str| node(v, n)["gpu_resources"][0]["devices"][0]["busy_percent"].as_u64();
    let unseen = |v: &Value| node(v, "xavier-nx-03")["agent"]["gpu_busy_percent"].as_u64();
    let mut seen: Vec<(Option<u64>, Option<u64>, Option<u64>)> = Vec::new();
    for _ in 0..12 {
        let v = gd.json("/api/v1/cluster").await.unwrap();
        seen.push((busy(&v, "orin-agx-01"), busy(&v, "gpu-x86-01"), unseen(&v)));
        tokio::time::sleep(Duration::from_millis(700)).await;
    }
    assert!(seen.iter().all(|(a, x, n)| a.is_some() && x.is_some() && n.is_some()), "every GPU measured: {seen:?}");
    let agx: Vec<u64> = seen.iter().filter_map(|s| s.0).collect();
    assert!(agx.windows(2).any(|w| w[0] != w[1]), "the board's busy % moves: {agx:?}");
    let nx: Vec<u64> = seen.iter().filter_map(|s| s.2).collect();
    assert!(nx.windows(2).any(|w| w[0] != w[1]), "the Xavier's busy % moves: {nx:?}");
    assert!(node(&v, "orin-agx-01")["agent"]["gpu_busy_percent"].is_null(), "a board's load sits on its GPU");
    let v = gd.json("/api/v1/cluster").await.unwrap();
    let x86 = &node(&v, "gpu-x86-01")["gpu_resources"][0]["devices"][0];
    assert!(x86["memory_used_bytes"].as_u64().is_some_and(|b| b > 0), "dcgm-exporter's framebuffer: {x86}");
    // The time-sliced two-GPU server: the scheduler counts 8 replicas; only its agent says which
    // pod's replica is on which GPU, and each GPU has its own busy % from the exporter.
    let l4 = &node(&v, "gpu-x86-02")["gpu_resources"][0];
    assert_eq!((&l4["allocated"], &l4["placement_known"]), (&8.into(), &true.into()), "{l4}");
    let gpus = l4["devices"].as_array().cloned().unwrap_or_default();
    assert_eq!(gpus.len(), 2, "{l4}");
    let mut holders: Vec<String> = Vec::new();
    for g in &gpus {
        assert!(g["busy_percent"].as_u64().is_some() && g["memory_used_bytes"].as_u64().is_some(), "{g}");
        let on: Vec<&Value> = g["holders"].as_array().into_iter().flatten().collect();
        assert_eq!(on.len(), 4, "the device plugin spreads the replicas over both GPUs: {g}");
        holders.extend(on.iter().map(|h| h["name"].as_str().unwrap_or("").to_string()));
    }
    holders.sort();
    holders.dedup();
    assert_eq!(holders.len(), 8, "each pod on one GPU: {holders:?}");
    // The DRA server's whole GPUs, found by the UUIDs its driver publishes, are measured too (on
    // its devices and rows); the MIG-enabled GPU's slices are not (dcgm-exporter reports none).
    let dra = &node(&v, "gpu-dra-01")["gpu_resources"][0];
    for d in dra["devices"].as_array().into_iter().flatten() {
        let whole = d["type"] == "gpu";
        assert_eq!(d["busy_percent"].is_u64(), whole, "{d}");
    }
    assert!(dra["rows"][0].as_str().unwrap_or("").contains("% busy"), "{dra}");

    let url = gd.url.clone();
    with_browser(|c| async move {
        for lang in ["en", "ja"] {
            c.goto(&format!("{url}/nodes/orin-agx-01?lang={lang}")).await?;
            let bar = c.find(Locator::Css("section.board-split")).await?;
            let segs = bar.find_all(Locator::Css(".split-bar .seg")).await?;
            assert_eq!(segs.len(), 4, "GPU memory of pods, pods' own, the rest, free");
            let width = segs[0].css_value("width").await?;
            assert!(
                width.trim_end_matches("px").parse::<f64>().is_ok_and(|w| w > 10.0),
                "the pods' GPU memory is drawn: {width}"
            );
            let legend = bar.text().await?;
            let want = if lang == "en" { "GPU memory of pods" } else { "Pod の GPU メモリ" };
            assert!(legend.contains(want) && legend.contains("NvMapMemUsed"), "{legend}");
            let row = c.find(Locator::Css("tr[data-pod^='ml/whisper-asr'] td.gpu-mem")).await?.text().await?;
            assert!(row.ends_with("GiB"), "whisper's GPU memory: {row}");
            shot(&c, &format!("jetson-gpu-memory-{lang}.png")).await?;
        }
        c.goto(&format!("{url}/nodes/orin-nano-01")).await?;
        assert_eq!(c.find_all(Locator::Css("section.board-split .split-bar .seg")).await?.len(), 4);
        // The node page updates itself: the revision moves (the agents' readings), the page's
        // panels follow, and the page is not reloaded.
        c.goto(&format!("{url}/nodes/orin-agx-01")).await?;
        c.execute("window.__gd_marker = 42", vec![]).await?;
        let rev = |c: fantoccini::Client| async move {
            c.execute("return document.querySelector('.node-page').getAttribute('data-revision')", vec![]).await
        };
        let first = rev(c.clone()).await?;
        let t = std::time::Instant::now();
        let mut now = first.clone();
        while now == first && t.elapsed() < Duration::from_secs(20) {
            tokio::time::sleep(Duration::from_millis(500)).await;
            now = rev(c.clone()).await?;
        }
        assert_ne!(now, first, "the node page did not update by itself");
        assert_eq!(c.execute("return window.__gd_marker", vec![]).await?, 42, "it was reloaded");
        // The page swaps its panels as the agents' readings move: wait_text finds the cell anew.
        let gpu_mem =
            wait_text(&c, "tr[data-pod^='ml/whisper-asr'] td.gpu-mem", "GiB", Duration::from_secs(10)).await?;
        assert!(gpu_mem.ends_with("GiB"), "{gpu_mem}");
        // The tour the README shows (docs/screenshots/, refreshed by scripts/readme-shots.sh):
        // the built-in demo with its agents, each page with something true on it.
        for (page, name, want) in [
            ("/", "tour-overview.png", "article.node[data-node='gpu-dra-01']"),
            ("/nodes/gpu-dra-01", "tour-dra-node.png", "section.dra"),
            ("/quotas", "tour-quotas.png", "section.quota-list"),
            ("/pending", "tour-pending.png", "article.pending"),
            ("/diagnoses", "tour-diagnoses.png", ".diagnosis-item"),
        ] {
            c.goto(&format!("{url}{page}")).await?;
            c.find(Locator::Css(want)).await?;
            shot(&c, name).await?;
        }
        Ok(())
    })
    .await
    .unwrap();

    // History: each pod's GPU memory, charted on the node page.
    let svg = chart_naming(&format!("{}/charts/gpumem.svg?node=orin-agx-01&range=1h", gd.url), "ml/whisper-asr").await;
    assert!(svg.contains("ml/whisper-asr") && svg.contains("all GPU memory (nvmap)"), "{svg}");
}

/// The demo's agents whose parent is `pid` (from /proc).
fn agents_of(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // "pid (comm) state ppid …"
            let rest = stat.rsplit_once(')').map(|(head, rest)| (head.contains("(gpudash-agent"), rest));
            rest.is_some_and(|(agent, rest)| agent && rest.split_whitespace().nth(1) == Some(pid.to_string().as_str()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_demo_gpudash_killed_outright_leaves_no_agents_behind() {
    let mut gd = Gpudash::start(&["--demo", "--demo-agents", "true"]).await.unwrap();
    let pid = gd.proc.pid();
    let agents = agents_of(pid);
    assert!(!agents.is_empty(), "demo mode started no agents:\n{}", gd.proc.output());
    // The Jetson agents' tegrastats players, each in a process group of its own.
    let mut groups: Vec<u32> = Vec::new();
    for _ in 0..40 {
        groups = agents.iter().flat_map(|a| gpudash_tests::children_of(*a)).collect();
        if !groups.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(!groups.is_empty(), "no tegrastats players under the demo's agents");
    gd.proc.kill();
    let left = || -> Vec<u32> {
        let mut l: Vec<u32> =
            agents.iter().copied().filter(|a| std::path::Path::new(&format!("/proc/{a}")).exists()).collect();
        l.extend(groups.iter().flat_map(|g| gpudash_tests::group_members(*g)));
        l
    };
    for _ in 0..40 {
        if left().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    panic!("agents or their tegrastats outlived a SIGKILLed gpudash: {:?}", left());
}
