//! One `tegrastats` line, parsed. Boards print different fields (the Orin line has per-GPC GPU
//! frequencies, rails in `mW`, sensors at `-256C` when off and a date prefix; Xavier rails have
//! no unit; the oldest boards print `GR3D` and `cpu`), so the line is read token by token and
//! what a board does not print stays `None` — never a zero.

use serde::{Deserialize, Serialize};

/// A power rail: instantaneous and average draw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rail {
    /// Rail name as printed (`VDD_GPU_SOC`, `VDD_IN`, `GPU`, `POM_5V_IN`).
    pub name: String,
    /// Now, milliwatts.
    pub now_mw: u32,
    /// Average since start, milliwatts.
    pub avg_mw: u32,
}

/// What one line says.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Sample {
    /// RAM in use (the board's memory, shared by CPU and GPU), bytes.
    pub ram_used_bytes: u64,
    /// RAM the kernel manages, bytes.
    pub ram_total_bytes: u64,
    /// Swap in use and total, bytes (absent on boards without swap).
    pub swap: Option<(u64, u64)>,
    /// GPU (GR3D) busy, percent; the busiest GPC when a board prints two (`GR3D2_FREQ`).
    pub gpu_busy_percent: Option<u8>,
    /// GPU frequencies, MHz, one per GPC when printed (`@[0,0]`).
    pub gpu_freq_mhz: Vec<u32>,
    /// Temperatures by sensor, °C (sensors printed as `-256C` are off and left out).
    pub temps_c: Vec<(String, f32)>,
    /// Power rails.
    pub rails: Vec<Rail>,
}

impl Sample {
    /// RAM free: the total less what is in use.
    pub fn ram_free_bytes(&self) -> u64 {
        self.ram_total_bytes.saturating_sub(self.ram_used_bytes)
    }
}

/// A line that is not a tegrastats sample.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// No `RAM used/totalMB` field: the one every board prints.
    #[error("not a tegrastats line: no RAM used/totalMB field")]
    NoRam,
    /// A field is there but its value is not what tegrastats prints.
    #[error("tegrastats field {field}: cannot read {value:?}")]
    Field {
        /// The field (`RAM`, `SWAP`, `GR3D_FREQ`).
        field: &'static str,
        /// What was there.
        value: String,
    },
}

const MIB: u64 = 1024 * 1024;

/// `4321/62801MB` → bytes.
fn used_total(field: &'static str, v: &str) -> Result<(u64, u64), ParseError> {
    let bad = || ParseError::Field { field, value: v.to_string() };
    let v = v.strip_suffix("MB").ok_or_else(bad)?;
    let (u, t) = v.split_once('/').ok_or_else(bad)?;
    let (u, t) = (u.parse::<u64>().map_err(|_| bad())?, t.parse::<u64>().map_err(|_| bad())?);
    Ok((u.saturating_mul(MIB), t.saturating_mul(MIB)))
}

/// `39%@76`, `0%@[0,0]`, `0%` → (busy, frequencies).
fn engine(v: &str) -> Result<(u8, Vec<u32>), ParseError> {
    let bad = || ParseError::Field { field: "GR3D_FREQ", value: v.to_string() };
    let (pct, freq) = v.split_once('@').map_or((v, ""), |(p, f)| (p, f));
    let pct = pct.strip_suffix('%').and_then(|p| p.parse::<u8>().ok()).filter(|p| *p <= 100).ok_or_else(bad)?;
    let freq = freq.trim_start_matches('[').trim_end_matches(']');
    let freqs = freq
        .split(',')
        .filter(|f| !f.is_empty())
        .map(|f| f.parse::<u32>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    Ok((pct, freqs))
}

/// `2340mW/2340mW` or `463/463` → (now, avg).
fn rail(v: &str) -> Option<(u32, u32)> {
    let (a, b) = v.split_once('/')?;
    Some((a.trim_end_matches("mW").parse().ok()?, b.trim_end_matches("mW").parse().ok()?))
}

/// Parses one line of `tegrastats` output.
pub fn parse(line: &str) -> Result<Sample, ParseError> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let mut s = Sample::default();
    let mut ram = false;
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let next = tokens.get(i + 1).copied().unwrap_or("");
        match t {
            "RAM" => {
                (s.ram_used_bytes, s.ram_total_bytes) = used_total("RAM", next)?;
                ram = true;
                i += 2;
                continue;
            }
            "SWAP" => {
                s.swap = Some(used_total("SWAP", next)?);
                i += 2;
                continue;
            }
            "GR3D_FREQ" | "GR3D2_FREQ" | "GR3D" => {
                let (pct, freqs) = engine(next)?;
                s.gpu_busy_percent = Some(s.gpu_busy_percent.map_or(pct, |p| p.max(pct)));
                s.gpu_freq_mhz.extend(freqs);
                i += 2;
                continue;
            }
            _ => {}
        }
        if let Some((name, temp)) = t.split_once('@').filter(|(n, v)| !n.is_empty() && v.ends_with('C')) {
            if let Ok(c) = temp.trim_end_matches('C').parse::<f32>() {
                if c > -100.0 {
                    s.temps_c.push((name.to_string(), c));
                }
                i += 1;
                continue;
            }
        }
        let is_name = !t.is_empty() && t.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if is_name && next.contains('/') && !next.contains('%') {
            if let Some((now_mw, avg_mw)) = rail(next) {
                s.rails.push(Rail { name: t.to_string(), now_mw, avg_mw });
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    if ram {
        Ok(s)
    } else {
        Err(ParseError::NoRam)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!("{}/fixtures/tegrastats/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    #[test]
    fn an_agx_orin_line_with_its_date_prefix_and_per_gpc_frequencies_is_read() {
        let s = parse(fixture("agx-orin-64gb.txt").trim()).unwrap();
        assert_eq!((s.ram_used_bytes, s.ram_total_bytes), (4321 * MIB, 62801 * MIB));
        assert_eq!(s.swap, Some((19 * MIB, 31400 * MIB)));
        assert_eq!((s.gpu_busy_percent, s.gpu_freq_mhz.clone()), (Some(0), vec![0, 0]));
        // Sensors at -256C are off: left out, not read as a temperature.
        assert!(s.temps_c.iter().all(|(n, _)| n != "GPU" && n != "CV0"), "{:?}", s.temps_c);
        assert!(s.temps_c.contains(&("tj".to_string(), 44.343)));
        let names: Vec<&str> = s.rails.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["VDD_GPU_SOC", "VDD_CPU_CV", "VIN_SYS_5V0", "NC", "VDDQ_VDD2_1V8AO", "NC"]);
        assert_eq!((s.rails[0].now_mw, s.rails[0].avg_mw), (2340, 2340));
    }

    /// The module boards' rails (`VDD_IN`, `VDD_CPU_GPU_CV`, `VDD_SOC`), in each release's form:
    /// the Orin Nano without a GPU frequency and lower-case sensors (R36), the Xavier NX at work
    /// with unitless rails (L4T 32), the Orin NX with cores off and CV sensors (L4T 35).
    #[test]
    fn lines_of_boards_with_the_module_rails_are_read() {
        type Want =
            (&'static str, (u64, u64), (u64, u64), Option<u8>, &'static [u32], (&'static str, f32), usize, (u32, u32));
        let boards: [Want; 3] = [
            ("orin-nano-8gb.txt", (2147, 7620), (1476, 3810), Some(0), &[], ("gpu", 48.625), 0, (4556, 4556)),
            ("xavier-nx-8gb.txt", (4412, 7772), (139, 3886), Some(62), &[306], ("thermal", 42.55), 1, (738, 738)),
            ("orin-nx-16gb.txt", (6334, 15388), (491, 7694), Some(0), &[611], ("CV2", 45.75), 0, (5299, 5299)),
        ];
        for (file, ram, swap, busy, freq, temp, rail, draw) in boards {
            let s = parse(fixture(file).trim()).unwrap();
            assert_eq!((s.ram_used_bytes, s.ram_total_bytes), (ram.0 * MIB, ram.1 * MIB), "{file}");
            assert_eq!(s.swap, Some((swap.0 * MIB, swap.1 * MIB)), "{file}");
            assert_eq!((s.gpu_busy_percent, s.gpu_freq_mhz.as_slice()), (busy, freq), "{file}");
            assert!(s.temps_c.contains(&(temp.0.to_string(), temp.1)), "{file}: {:?}", s.temps_c);
            let names: Vec<&str> = s.rails.iter().map(|r| r.name.as_str()).collect();
            assert_eq!(names, ["VDD_IN", "VDD_CPU_GPU_CV", "VDD_SOC"], "{file}");
            assert_eq!((s.rails[rail].now_mw, s.rails[rail].avg_mw), draw, "{file}");
        }
    }

    #[test]
    fn an_agx_xavier_line_with_unitless_rails_is_read() {
        let s = parse(fixture("agx-xavier.txt").trim()).unwrap();
        assert_eq!(s.ram_used_bytes, 14700 * MIB);
        assert_eq!((s.gpu_busy_percent, s.gpu_freq_mhz.len()), (Some(0), 0));
        assert!(s.temps_c.contains(&("GPU".to_string(), 30.5)));
        let gpu = s.rails.iter().find(|r| r.name == "GPU").map(|r| (r.now_mw, r.avg_mw));
        assert_eq!(gpu, Some((463, 463)));
        assert_eq!(s.rails.len(), 6, "{:?}", s.rails);
    }

    #[test]
    fn the_oldest_form_gives_the_gpu_load_and_no_rails() {
        let lines: Vec<Sample> = fixture("tx1.txt").lines().map(|l| parse(l).unwrap()).collect();
        assert_eq!(lines.iter().map(|s| s.gpu_busy_percent).collect::<Vec<_>>(), [Some(3), Some(39)]);
        assert_eq!(lines[1].gpu_freq_mhz, [76]);
        assert!(lines[0].rails.is_empty() && lines[0].temps_c.is_empty());
    }

    #[test]
    fn what_is_not_a_tegrastats_line_is_an_error_not_a_zero() {
        assert_eq!(parse(""), Err(ParseError::NoRam));
        assert_eq!(parse("tegrastats: command not found"), Err(ParseError::NoRam));
        assert!(matches!(parse("RAM lots"), Err(ParseError::Field { field: "RAM", .. })));
        assert!(matches!(parse("RAM 1/2MB GR3D_FREQ 250%"), Err(ParseError::Field { field: "GR3D_FREQ", .. })));
        // A board that prints no GPU field: unknown, not 0 %.
        assert_eq!(parse("RAM 1/2MB").map(|s| s.gpu_busy_percent), Ok(None));
    }
}
