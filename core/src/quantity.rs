//! Kubernetes resource quantities (`500m`, `1.5Gi`, `12e6`, `64335836Ki`) parsed exactly into
//! unit newtypes. The full grammar of `k8s.io/apimachinery/pkg/api/resource`:
//! `[+-]digits[.digits](Ki|Mi|Gi|Ti|Pi|Ei|m||k|M|G|T|P|E|e<int>|E<int>)`, rounded up as the API
//! server's `Value()` and `MilliValue()` do.

use std::fmt;

use thiserror::Error;

/// Why a quantity was refused.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// Empty input.
    #[error("empty quantity")]
    Empty,
    /// Not of the quantity grammar.
    #[error("{0:?} is not a quantity (expected e.g. 500m, 2Gi, 1.5, 3e6)")]
    Syntax(String),
    /// Too large to represent.
    #[error("{0:?} is out of range")]
    Overflow(String),
    /// Negative where only non-negative amounts make sense.
    #[error("{0:?} is negative")]
    Negative(String),
    /// A fraction where the resource is counted in whole units (extended resources).
    #[error("{0:?} is not a whole number")]
    Fractional(String),
}

/// An exactly parsed quantity: `sign × mantissa × 10^exp10 × 2^exp2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

fn pow10(n: u32) -> Option<u128> {
    10u128.checked_pow(n)
}

impl Quantity {
    /// Parses the full Kubernetes quantity grammar.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        let syntax = || QuantityError::Syntax(s.to_string());
        let t = s.trim();
        if t.is_empty() {
            return Err(QuantityError::Empty);
        }
        let (negative, rest) = match t.as_bytes()[0] {
            b'-' => (true, &t[1..]),
            b'+' => (false, &t[1..]),
            _ => (false, t),
        };
        let num_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (num, suffix) = rest.split_at(num_end);
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if (int.is_empty() && frac.is_empty()) || frac.contains('.') {
            return Err(syntax());
        }
        let (mut exp10, exp2): (i32, u32) = match suffix {
            "" => (0, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            _ => {
                let e = suffix.strip_prefix('e').or_else(|| suffix.strip_prefix('E')).ok_or_else(syntax)?;
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(syntax());
                }
                let v: i32 = e.parse().map_err(|_| QuantityError::Overflow(s.to_string()))?;
                if !(-1000..=1000).contains(&v) {
                    return Err(QuantityError::Overflow(s.to_string()));
                }
                (v, 0)
            }
        };
        let frac = frac.trim_end_matches('0');
        let digits = format!("{}{}", int, frac);
        let digits = digits.trim_start_matches('0');
        exp10 -= i32::try_from(frac.len()).map_err(|_| QuantityError::Overflow(s.to_string()))?;
        let mantissa = if digits.is_empty() {
            0
        } else {
            digits.parse::<u128>().map_err(|_| QuantityError::Overflow(s.to_string()))?
        };
        Ok(Self { negative: negative && mantissa != 0, mantissa, exp10, exp2 })
    }

    /// The value times `10^scale`, rounded up (towards positive infinity), as Kubernetes'
    /// `ScaledValue` does.
    pub fn scaled_ceil(&self, scale: i32) -> Option<i128> {
        if self.mantissa == 0 {
            return Some(0);
        }
        let num = self.mantissa.checked_mul(1u128.checked_shl(self.exp2)?)?;
        let p = self.exp10.checked_add(scale)?;
        let magnitude: u128 = if p >= 0 {
            num.checked_mul(pow10(u32::try_from(p).ok()?)?)?
        } else {
            let den_exp = u32::try_from(-p).ok()?;
            match pow10(den_exp) {
                Some(den) => {
                    let q = num / den;
                    let r = num % den;
                    // Round away from zero for positives (ceil), towards zero for negatives.
                    if r != 0 && !self.negative {
                        q + 1
                    } else {
                        q
                    }
                }
                // Divisor beyond u128: the value is a tiny fraction.
                None => u128::from(!self.negative),
            }
        };
        let m = i128::try_from(magnitude).ok()?;
        Some(if self.negative { -m } else { m })
    }

    /// Whether the quantity is below zero.
    pub fn is_negative(&self) -> bool {
        self.negative && self.mantissa != 0
    }

    /// Whether the quantity is a whole number.
    pub fn is_integer(&self) -> bool {
        match (self.scaled_ceil(0), self.scaled_ceil(3)) {
            (Some(v), Some(milli)) => v.checked_mul(1000) == Some(milli),
            _ => false,
        }
    }
}

fn non_negative(s: &str, scale: i32) -> Result<u64, QuantityError> {
    let q = Quantity::parse(s)?;
    if q.negative {
        return Err(QuantityError::Negative(s.to_string()));
    }
    let v = q.scaled_ceil(scale).ok_or_else(|| QuantityError::Overflow(s.to_string()))?;
    u64::try_from(v).map_err(|_| QuantityError::Overflow(s.to_string()))
}

/// Bytes of memory or storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Parses a memory quantity, rounding fractions of a byte up.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        non_negative(s, 0).map(Self)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
        let mut v = self.0 as f64;
        let mut i = 0;
        while v >= 1024.0 && i < UNITS.len() - 1 {
            v /= 1024.0;
            i += 1;
        }
        if i == 0 {
            write!(f, "{} B", self.0)
        } else {
            write!(f, "{v:.1} {}", UNITS[i])
        }
    }
}

/// CPU in thousandths of a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct MilliCpu(pub u64);

impl MilliCpu {
    /// Parses a CPU quantity (`500m`, `2`, `0.25`), rounding up to whole millicores.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        non_negative(s, 3).map(Self)
    }
}

/// Units of an extended resource (GPUs, replicas, MIG slices), which are always whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub struct GpuCount(pub u64);

impl GpuCount {
    /// Parses a whole count; fractions are refused, as the API server refuses them for
    /// extended resources.
    pub fn parse(s: &str) -> Result<Self, QuantityError> {
        let q = Quantity::parse(s)?;
        if !q.is_integer() {
            return Err(QuantityError::Fractional(s.to_string()));
        }
        non_negative(s, 0).map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn binary_suffixes_multiply_by_powers_of_1024() {
        assert_eq!(Bytes::parse("1Ki"), Ok(Bytes(1024)));
        assert_eq!(Bytes::parse("64335836Ki"), Ok(Bytes(64_335_836 * 1024)));
        assert_eq!(Bytes::parse("1.5Gi"), Ok(Bytes(1_610_612_736)));
        assert_eq!(Bytes::parse("2Ti"), Ok(Bytes(2 << 40)));
        assert_eq!(Bytes::parse("1Pi"), Ok(Bytes(1 << 50)));
        assert_eq!(Bytes::parse("1Ei"), Ok(Bytes(1 << 60)));
        assert_eq!(Bytes::parse("1536Mi"), Ok(Bytes(1536 << 20)));
    }

    #[test]
    fn decimal_suffixes_multiply_by_powers_of_1000() {
        assert_eq!(Bytes::parse("1k"), Ok(Bytes(1000)));
        assert_eq!(Bytes::parse("129M"), Ok(Bytes(129_000_000)));
        assert_eq!(Bytes::parse("8G"), Ok(Bytes(8_000_000_000)));
        assert_eq!(Bytes::parse("1T"), Ok(Bytes(1_000_000_000_000)));
        assert_eq!(Bytes::parse("1P"), Ok(Bytes(1_000_000_000_000_000)));
        assert_eq!(Bytes::parse("2E"), Ok(Bytes(2_000_000_000_000_000_000)));
        assert_eq!(Bytes::parse("59537674430"), Ok(Bytes(59_537_674_430)));
    }

    #[test]
    fn milli_units_round_up_like_the_api_server() {
        assert_eq!(MilliCpu::parse("500m"), Ok(MilliCpu(500)));
        assert_eq!(MilliCpu::parse("2"), Ok(MilliCpu(2000)));
        assert_eq!(MilliCpu::parse("0.25"), Ok(MilliCpu(250)));
        assert_eq!(MilliCpu::parse("0.0001"), Ok(MilliCpu(1)));
        assert_eq!(MilliCpu::parse("1.0005"), Ok(MilliCpu(1001)));
        // A memory quantity in millibytes rounds up to whole bytes.
        assert_eq!(Bytes::parse("1500m"), Ok(Bytes(2)));
        assert_eq!(Bytes::parse("129e6"), Ok(Bytes(129_000_000)));
    }

    #[test]
    fn exponents_and_signs_parse() {
        assert_eq!(Bytes::parse("12e6"), Ok(Bytes(12_000_000)));
        assert_eq!(Bytes::parse("12E6"), Ok(Bytes(12_000_000)));
        assert_eq!(Bytes::parse("1e-3"), Ok(Bytes(1)));
        assert_eq!(Bytes::parse("+1e+3"), Ok(Bytes(1000)));
        assert_eq!(MilliCpu::parse("1e-3"), Ok(MilliCpu(1)));
        assert_eq!(Bytes::parse(".5Ki"), Ok(Bytes(512)));
        assert_eq!(Bytes::parse("5."), Ok(Bytes(5)));
        assert_eq!(Bytes::parse("0"), Ok(Bytes(0)));
        assert_eq!(Bytes::parse("-0"), Ok(Bytes(0)));
        assert_eq!(Bytes::parse("-1Gi"), Err(QuantityError::Negative("-1Gi".into())));
        assert_eq!(Quantity::parse("-1500m").map(|q| q.scaled_ceil(0)), Ok(Some(-1)));
    }

    #[test]
    fn malformed_quantities_are_refused() {
        for s in [
            "",
            " ",
            "Gi",
            "1GB",
            "1gi",
            "1.2.3",
            "1 Gi",
            "abc",
            "1e",
            "1e+",
            "1Kii",
            "--1",
            ".",
            "1e99999999999",
            "0x10",
        ] {
            assert!(Bytes::parse(s).is_err(), "{s:?} should not parse");
        }
    }

    #[test]
    fn out_of_range_quantities_are_errors_not_wraps() {
        assert!(matches!(Bytes::parse("16Ei"), Err(QuantityError::Overflow(_))));
        assert!(matches!(Bytes::parse("1e30"), Err(QuantityError::Overflow(_))));
        assert!(matches!(Bytes::parse("999999999999999999999999999999999999999999"), Err(QuantityError::Overflow(_))));
        assert_eq!(Bytes::parse("1e-500"), Ok(Bytes(1)));
        assert_eq!(Bytes::parse("0.00000000000000000000000000000000000000000001"), Ok(Bytes(1)));
        assert_eq!(Bytes::parse("1.000000000000000000000000000000000000000000000"), Ok(Bytes(1)));
    }

    #[test]
    fn gpu_counts_are_whole_numbers() {
        assert_eq!(GpuCount::parse("4"), Ok(GpuCount(4)));
        assert_eq!(GpuCount::parse("1k"), Ok(GpuCount(1000)));
        assert_eq!(GpuCount::parse("2000m"), Ok(GpuCount(2)));
        assert!(matches!(GpuCount::parse("500m"), Err(QuantityError::Fractional(_))));
        assert!(matches!(GpuCount::parse("1.5"), Err(QuantityError::Fractional(_))));
    }

    #[test]
    fn bytes_display_in_binary_units() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536 << 20).to_string(), "1.5 GiB");
    }

    proptest! {
        #[test]
        fn arbitrary_input_never_panics(s in ".{0,40}") {
            let _ = Bytes::parse(&s);
            let _ = MilliCpu::parse(&s);
            let _ = GpuCount::parse(&s);
        }

        #[test]
        fn quantity_shaped_input_never_panics(s in "[+-]?[0-9]{0,45}(\\.[0-9]{0,45})?([KMGTPE]i|[mkMGTPE]|[eE][+-]?[0-9]{1,6})?") {
            let _ = Bytes::parse(&s);
            let _ = MilliCpu::parse(&s);
        }

        #[test]
        fn integers_with_suffixes_scale_exactly(n in 0u64..1_000_000, i in 0usize..6) {
            let (suf, mult) = [("", 1u64), ("k", 1000), ("Ki", 1024), ("Mi", 1 << 20), ("M", 1_000_000), ("Gi", 1 << 30)][i];
            prop_assert_eq!(Bytes::parse(&format!("{n}{suf}")), Ok(Bytes(n * mult)));
        }
    }
}
