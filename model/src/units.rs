//! Quantities as people read them: bytes in binary units, ratios to one decimal place. Integer
//! arithmetic only: the browser bundle carries no float formatting of its own.

/// `n / d` to one decimal place, rounded half up (integer arithmetic: the browser bundle
/// carries no float formatting).
pub fn tenths(n: u64, d: u64) -> String {
    // u64, not u128: 128-bit division and formatting would add ~2 KB to the browser bundle.
    // Exact while n < 1.8e18 (1.6 EiB); beyond that the divisor is scaled down with n.
    let d = d.max(1);
    let (n, d) = if n > (u64::MAX / 10).saturating_sub(d) { (n / 1024, (d / 1024).max(1)) } else { (n, d) };
    let t = (n * 10 + d / 2) / d;
    format!("{}.{}", t / 10, t % 10)
}

/// A thousandth as a percentage (`12.3%`): the view model's `*_permille` fields as shown.
pub fn percent(permille: u32) -> String {
    format!("{}.{}%", permille / 10, permille % 10)
}

/// The first `n` characters of an opaque id (a share id, a UUID), as a label shows it.
pub fn short(id: &str, n: usize) -> String {
    id.chars().take(n).collect()
}

/// Human bytes in binary units.
pub fn bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut i = 0;
    let mut unit = 1u64;
    while i < UNITS.len() - 1 && b / unit >= 1024 {
        unit *= 1024;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{} {}", tenths(b, unit), UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(bytes(1536 << 20), "1.5 GiB");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.0 KiB");
        assert_eq!(bytes((7 << 30) + (461 << 20)), "7.5 GiB");
        assert_eq!(bytes(u64::MAX), "16384.0 PiB");
        assert_eq!(tenths(1, 3), "0.3");
        assert_eq!(tenths(2, 3), "0.7");
        assert_eq!(tenths(5, 0), "5.0");
        assert_eq!(tenths(u64::MAX, u64::MAX), "1.0");
        assert_eq!(tenths(u64::MAX, 1 << 60), "16.0");
    }
}
