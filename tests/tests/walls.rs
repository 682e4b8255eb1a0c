//! The walls the compiler keeps (docs/design.md): the core crate — the derivation, the what-if check
//! and what they read — has no async runtime, HTTP, database or filesystem crate in its
//! dependency graph, and its code outside tests reads no clock, file, socket, process or
//! environment. The site and the fleet depend on it; it depends on neither. The fleet is its own
//! crate: it never talks to a cluster and has no edge back to the site; what both serve with
//! (`gpudash-web`) knows neither of them nor of a cluster.

use std::path::Path;
use std::process::Command;

fn cargo_tree(package: &str) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["tree", "--offline", "-p", package, "-e", "normal", "--prefix", "none", "--color", "never"])
        .current_dir(gpudash_tests::root())
        .output()
        .expect("cargo tree");
    assert!(out.status.success(), "cargo tree -p {package}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn crates(tree: &str) -> Vec<String> {
    let mut names: Vec<String> = tree.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_core_crate_depends_on_no_runtime_network_database_or_server_crate() {
    let names = crates(&cargo_tree("gpudash-core"));
    assert!(names.iter().any(|n| n == "k8s-openapi"), "not the core's tree: {names:?}");
    for banned in [
        "tokio",
        "mio",
        "sqlx",
        "sqlx-core",
        "reqwest",
        "hyper",
        "hyper-util",
        "axum",
        "tower",
        "tower-http",
        "leptos_axum",
        "kube-client",
        "kube-runtime",
        "tonic",
        "plotters",
        "gpudash",
        "gpudash-sim",
        // The UI: the core reads the view model (gpudash-model), not the crate that renders it
        // (it reached Leptos, its reactive graph and wasm-bindgen through `app`: 182 crates).
        "app",
        "leptos",
        "reactive_graph",
        "tachys",
        "wasm-bindgen",
        "web-sys",
    ] {
        assert!(!names.iter().any(|n| n == banned), "gpudash-core depends on {banned}: {names:?}");
    }
    assert!(names.iter().any(|n| n == "gpudash-model"), "the core reads the view model: {names:?}");
    // The site depends on the core, not the other way round.
    assert!(crates(&cargo_tree("gpudash")).iter().any(|n| n == "gpudash-core"));
}

#[test]
fn the_fleet_is_its_own_crate_and_knows_no_cluster_and_no_site() {
    let fleet = crates(&cargo_tree("gpudash-fleet"));
    for needed in ["gpudash-core", "gpudash-web", "sqlx-postgres"] {
        assert!(fleet.iter().any(|n| n == needed), "gpudash-fleet lacks {needed}: {fleet:?}");
    }
    for banned in ["gpudash", "gpudash-sim", "kube", "kube-client", "kube-runtime", "leptos_axum", "sqlx-sqlite"] {
        assert!(!fleet.iter().any(|n| n == banned), "gpudash-fleet depends on {banned}: {fleet:?}");
    }
    let web = crates(&cargo_tree("gpudash-web"));
    assert!(web.iter().any(|n| n == "axum"), "not the web crate's tree: {web:?}");
    for banned in
        ["gpudash", "gpudash-core", "gpudash-fleet", "gpudash-sim", "kube", "kube-client", "k8s-openapi", "sqlx"]
    {
        assert!(!web.iter().any(|n| n == banned), "gpudash-web depends on {banned}: {web:?}");
    }
    // The site serves `gpudash fleet` too: core ← site, core ← fleet ← site's binary.
    let site = crates(&cargo_tree("gpudash"));
    assert!(["gpudash-core", "gpudash-web", "gpudash-fleet"].iter().all(|c| site.iter().any(|n| n == c)), "{site:?}");
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn the_core_code_reads_no_clock_file_socket_process_or_environment() {
    let mut files = Vec::new();
    rust_files(&gpudash_tests::root().join("core/src"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    let banned = [
        "std::fs",
        "std::net",
        "std::process",
        "std::thread",
        "std::env",
        "Timestamp::now",
        "SystemTime::now",
        "Instant::now",
        "Zoned::now",
        "async fn",
        ".await",
    ];
    let mut found = Vec::new();
    for f in files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") || name.ends_with("_scenarios.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // Code before an inline test module.
        let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
        for b in banned {
            if code.contains(b) {
                found.push(format!("{}: {b}", f.display()));
            }
        }
    }
    assert!(found.is_empty(), "impure code in the core: {found:?}");
}

#[test]
fn the_simulator_shares_no_code_with_the_derivation_or_the_agent() {
    // It is the oracle the derivation is tested against: a bug in one must not hide in the other.
    let sim = crates(&cargo_tree("gpudash-sim"));
    assert!(sim.iter().any(|n| n == "gpudash-sim"), "not the simulator's tree: {sim:?}");
    for banned in ["gpudash", "gpudash-core", "gpudash-agent", "gpudash-fleet", "gpudash-web", "app", "gpudash-model"] {
        assert!(!sim.iter().any(|n| n == banned), "gpudash-sim depends on {banned}: {sim:?}");
    }
}
