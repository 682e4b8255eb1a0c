//! `tegrastats` as simulated Jetson boards print it: lines recorded from real boards (the
//! agent's fixtures, each named with its public source in `agent/fixtures/README.md`), played
//! back once per interval, as `tegrastats --interval N` prints.

use std::io::Write;
use std::time::Duration;

use serde_json::Value;

/// Boards with recorded output: (name, lines).
pub const BOARDS: &[(&str, &str)] = &[
    ("agx-orin-64gb", include_str!("../../../agent/fixtures/tegrastats/agx-orin-64gb.txt")),
    ("orin-nano-8gb", include_str!("../../../agent/fixtures/tegrastats/orin-nano-8gb.txt")),
    ("agx-xavier", include_str!("../../../agent/fixtures/tegrastats/agx-xavier.txt")),
    ("tx1", include_str!("../../../agent/fixtures/tegrastats/tx1.txt")),
    ("xavier-nx-8gb", include_str!("../../../agent/fixtures/tegrastats/xavier-nx-8gb.txt")),
];

/// The recorded board that matches a node: by its `nvidia.com/gpu.product` label (GPU feature
/// discovery's), else — a Jetson (a `-tegra` kernel) that GPU feature discovery never labelled,
/// such as a board without the NVIDIA device plugin — the recording of a board with as many CPU
/// cores and the nearest RAM (within 2 %) to the node's capacity. A board with no recording of
/// its own gets none: its agent reads no tegrastats.
pub fn board_for(node: &Value) -> Option<&'static str> {
    let product = node.pointer("/metadata/labels/nvidia.com~1gpu.product").and_then(Value::as_str).unwrap_or("");
    if product.contains("AGX-Orin") {
        Some("agx-orin-64gb")
    } else if product.contains("Orin-Nano") {
        Some("orin-nano-8gb")
    } else if product.contains("AGX-Xavier") {
        Some("agx-xavier")
    } else if product.is_empty() {
        by_shape(node)
    } else {
        // No recording of this board: playing another board's lines would show a RAM total and
        // a load that are not this board's.
        None
    }
}

/// A recording's board: its CPU cores and RAM in MiB, as its first line prints them
/// (`RAM used/totalMB … CPU [a,b,…]`).
fn shape(text: &str) -> Option<(usize, u64)> {
    let line = text.lines().find(|l| !l.trim().is_empty())?;
    let ram = line.split_once("RAM ")?.1.split_once("MB")?.0.split_once('/')?.1.parse().ok()?;
    let cpus = line.split_once("CPU [")?.1.split_once(']')?.0.split(',').count();
    Some((cpus, ram))
}

/// The recording whose board has the node's cores and the RAM nearest its capacity (a Jetson
/// only, and within 2 %).
fn by_shape(node: &Value) -> Option<&'static str> {
    if !super::devices::jetson(node) {
        return None;
    }
    let cpus: usize = node.pointer("/status/capacity/cpu").and_then(Value::as_str)?.parse().ok()?;
    let kib: u64 = node.pointer("/status/capacity/memory").and_then(Value::as_str)?.strip_suffix("Ki")?.parse().ok()?;
    let mib = kib / 1024;
    BOARDS
        .iter()
        .filter_map(|(b, text)| shape(text).filter(|s| s.0 == cpus).map(|s| (*b, s.1.abs_diff(mib))))
        .filter(|(_, off)| off * 50 <= mib)
        .min_by_key(|(_, off)| *off)
        .map(|(b, _)| b)
}

/// The line's GPU load (`GR3D_FREQ 0%…`, `GR3D 0%@…`) set to `busy`: the recorded boards were
/// idle; with work the demo's models keep the GPU busy and idle in turns.
pub fn with_busy(line: &str, busy: u64) -> String {
    for key in ["GR3D_FREQ ", "GR3D "] {
        if let Some(at) = line.find(key) {
            let start = at + key.len();
            let digits = line[start..].chars().take_while(char::is_ascii_digit).count();
            if digits > 0 && line[start + digits..].starts_with('%') {
                return format!("{}{busy}{}", &line[..start], &line[start + digits..]);
            }
        }
    }
    line.to_string()
}

/// GR3D busy for the `i`th line: about 30 lines busy (60–94 %), 20 idle (0–4 %).
fn busy_at(i: u64) -> u64 {
    let jitter = i.wrapping_mul(2_654_435_761) % 35;
    if i % 50 < 30 {
        60 + jitter
    } else {
        jitter % 5
    }
}

/// Prints the board's lines, one per `interval`, `count` lines in all (looping over the
/// recording), with the GPU working in turns when `work`. Ends early when stdout is closed
/// (the reader went away).
pub fn replay(board: &str, interval: Duration, count: u64, work: bool) -> Result<(), String> {
    let lines: Vec<&str> = BOARDS
        .iter()
        .find(|(b, _)| *b == board)
        .map(|(_, text)| text.lines().filter(|l| !l.trim().is_empty()).collect())
        .ok_or_else(|| {
            format!("no recorded board {board:?}: one of {}", BOARDS.iter().map(|b| b.0).collect::<Vec<_>>().join(", "))
        })?;
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        let recorded = lines[usize::try_from(i).unwrap_or(0) % lines.len()];
        // Each board in its own phase.
        let phase = board.bytes().map(u64::from).sum::<u64>();
        let line = if work { with_busy(recorded, busy_at(i + phase)) } else { recorded.to_string() };
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return Ok(());
        }
        std::thread::sleep(interval);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_sets_the_gpu_load_in_every_boards_format() {
        for (board, text) in BOARDS {
            let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let busy = with_busy(line, 87);
            assert!(busy.contains("GR3D_FREQ 87%") || busy.contains("GR3D 87%"), "{board}: {busy}");
            let strip = |s: &str| s.replace(|c: char| c.is_ascii_digit(), "");
            assert_eq!(strip(&busy), strip(line), "{board}: only the load changed");
        }
        assert!((0..50).map(busy_at).any(|b| b >= 60) && (0..50).map(busy_at).any(|b| b < 5));
    }

    fn node(labels: Value, kernel: &str, cpu: &str, memory: &str) -> Value {
        serde_json::json!({"metadata": {"labels": labels},
                           "status": {"nodeInfo": {"kernelVersion": kernel}, "capacity": {"cpu": cpu, "memory": memory}}})
    }

    #[test]
    fn a_board_is_found_by_its_product_label_else_by_its_cores_and_ram() {
        let labelled = serde_json::json!({"nvidia.com/gpu.product": "NVIDIA-Jetson-Orin-Nano-8GB"});
        assert_eq!(board_for(&node(labelled, "5.15.148-tegra", "6", "7958676Ki")), Some("orin-nano-8gb"));
        // No GPU feature discovery: a six-core Jetson with a Xavier NX's 7,772 MiB.
        let none = serde_json::json!({});
        assert_eq!(board_for(&node(none.clone(), "4.9.337-tegra", "6", "7958676Ki")), Some("xavier-nx-8gb"));
        // … and one with an Orin Nano's 7,620 MiB.
        assert_eq!(board_for(&node(none.clone(), "5.15.148-tegra", "6", "7802880Ki")), Some("orin-nano-8gb"));
        // Not a Jetson, no board of that shape, or a labelled board with no recording: none.
        assert_eq!(board_for(&node(none.clone(), "6.8.0-49-generic", "6", "7958676Ki")), None);
        assert_eq!(board_for(&node(none.clone(), "4.9.337-tegra", "4", "7958676Ki")), None);
        assert_eq!(board_for(&node(none, "4.9.337-tegra", "6", "16105092Ki")), None);
        let nx = serde_json::json!({"nvidia.com/gpu.product": "NVIDIA-Jetson-Orin-NX-16GB-SHARED"});
        assert_eq!(board_for(&node(nx, "5.15.148-tegra", "8", "15757312Ki")), None);
        let other = serde_json::json!({"nvidia.com/gpu.product": "NVIDIA-Jetson-AGX-Thor"});
        assert_eq!(board_for(&node(other, "6.8.12-tegra", "14", "130000000Ki")), None);
    }
}
