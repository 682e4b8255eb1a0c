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
];

/// The recorded board that matches a node, by its `nvidia.com/gpu.product` label (a board with
/// no recording of its own gets none: its agent reads no tegrastats).
pub fn board_for(node: &Value) -> Option<&'static str> {
    let product = node.pointer("/metadata/labels/nvidia.com~1gpu.product").and_then(Value::as_str).unwrap_or("");
    if product.contains("AGX-Orin") {
        Some("agx-orin-64gb")
    } else if product.contains("Orin-Nano") {
        Some("orin-nano-8gb")
    } else if product.contains("AGX-Xavier") {
        Some("agx-xavier")
    } else {
        // No recording of this board (or no product label to tell): playing another board's
        // lines would show a RAM total and a load that are not this board's.
        None
    }
}

/// Prints the board's lines, one per `interval`, `count` lines in all (looping over the
/// recording). Ends early when stdout is closed (the reader went away).
pub fn replay(board: &str, interval: Duration, count: u64) -> Result<(), String> {
    let lines: Vec<&str> = BOARDS
        .iter()
        .find(|(b, _)| *b == board)
        .map(|(_, text)| text.lines().filter(|l| !l.trim().is_empty()).collect())
        .ok_or_else(|| {
            format!("no recorded board {board:?}: one of {}", BOARDS.iter().map(|b| b.0).collect::<Vec<_>>().join(", "))
        })?;
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        let line = lines[usize::try_from(i).unwrap_or(0) % lines.len()];
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return Ok(());
        }
        std::thread::sleep(interval);
    }
    Ok(())
}
