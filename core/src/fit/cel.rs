//! The DeviceClass and request selectors the what-if check evaluates: the common CEL forms —
//! `device.driver == '…'`, attribute `==`/`!=` with a string, integer or boolean, capacity
//! `compareTo(quantity('…'))` comparisons — joined by `&&`. Anything else is reported as
//! beyond them (`None`), never guessed.

use crate::dra::Device;
use crate::quantity::Quantity;

/// A literal in a CEL comparison.
#[derive(Debug, PartialEq)]
enum Lit {
    Text(String),
    Int(i64),
    Bool(bool),
}

fn literal(s: &str) -> Option<Lit> {
    let s = s.trim();
    if let Some(q) = s.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return Some(Lit::Text(q.to_string()));
    }
    if let Some(q) = s.strip_prefix('"').and_then(|x| x.strip_suffix('"')) {
        return Some(Lit::Text(q.to_string()));
    }
    match s {
        "true" => Some(Lit::Bool(true)),
        "false" => Some(Lit::Bool(false)),
        _ => s.parse().ok().map(Lit::Int),
    }
}

/// `device.attributes['dom'].name` or `device.capacity['dom'].name` → (field kind, domain, name).
fn path(s: &str) -> Option<(&'static str, String, String)> {
    let s = s.trim();
    for (prefix, kind) in [("device.attributes[", "attributes"), ("device.capacity[", "capacity")] {
        if let Some(rest) = s.strip_prefix(prefix) {
            let (dom, rest) = rest.split_once(']')?;
            let dom = dom.trim().trim_matches(['\'', '"']).to_string();
            let name = rest.strip_prefix('.')?;
            if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || name.is_empty() {
                return None;
            }
            return Some((kind, dom, name.to_string()));
        }
    }
    None
}

fn split_top(expr: &str, op: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut quote, mut cur) = (0i32, None::<char>, String::new());
    let chars: Vec<char> = expr.chars().collect();
    let opc: Vec<char> = op.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, _) if depth == 0 && chars[i..].starts_with(&opc) => {
                out.push(std::mem::take(&mut cur));
                i += opc.len();
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    out.push(cur);
    out
}

/// Evaluates the common DeviceClass/request selector forms on one device of `driver`; `None`
/// when the expression is beyond them. With an empty driver it only says whether the form is
/// understood.
pub fn eval(expr: &str, driver: &str, d: &Device) -> Option<bool> {
    let mut all = true;
    for term in split_top(expr, "&&") {
        let mut t = term.trim();
        while let Some(inner) = t.strip_prefix('(').and_then(|x| x.strip_suffix(')')) {
            t = inner.trim();
        }
        if t.contains("||") || t.contains('?') {
            return None;
        }
        all &= eval_term(t, driver, d)?;
    }
    Some(all)
}

fn eval_term(t: &str, driver: &str, d: &Device) -> Option<bool> {
    // device.capacity['dom'].name.compareTo(quantity('10Gi')) >= 0
    if let Some((lhs, rest)) = t.split_once(".compareTo(quantity(") {
        let (_, dom, name) = path(lhs).filter(|(k, _, _)| *k == "capacity")?;
        let (q, cmp) = rest.split_once("))")?;
        let want = match literal(q)? {
            Lit::Text(s) => Quantity::parse(&s).ok()?.scaled_ceil(3)?,
            _ => return None,
        };
        let (op, zero) =
            ["==", "!=", ">=", "<=", ">", "<"].iter().find_map(|op| cmp.trim().strip_prefix(op).map(|z| (*op, z)))?;
        if zero.trim() != "0" {
            return None;
        }
        if driver.is_empty() {
            return Some(true);
        }
        let have = d
            .capacity
            .get(&name)
            .or_else(|| d.capacity.get(&format!("{dom}/{name}")))
            .and_then(|c| Quantity::parse(&c.value.0).ok())
            .and_then(|q| q.scaled_ceil(3));
        let Some(have) = have else { return Some(false) };
        return Some(match op {
            "==" => have == want,
            "!=" => have != want,
            ">=" => have >= want,
            "<=" => have <= want,
            ">" => have > want,
            _ => have < want,
        });
    }
    let (lhs, op, rhs) = if let Some((l, r)) = t.split_once("==") {
        (l, true, r)
    } else if let Some((l, r)) = t.split_once("!=") {
        (l, false, r)
    } else {
        return None;
    };
    let lit = literal(rhs)?;
    if lhs.trim() == "device.driver" {
        let Lit::Text(want) = lit else { return None };
        return Some(driver.is_empty() || (driver == want) == op);
    }
    let (kind, dom, name) = path(lhs).filter(|(k, _, _)| *k == "attributes")?;
    let _ = kind;
    if driver.is_empty() {
        return Some(true);
    }
    let a = if dom == driver { d.attribute(driver, &name) } else { d.attributes.get(&format!("{dom}/{name}")) };
    // A device without the attribute does not match (CEL would raise an error: no match).
    let Some(a) = a else { return Some(false) };
    let eq = match lit {
        Lit::Text(s) => a.string.as_deref() == Some(s.as_str()) || a.version.as_deref() == Some(s.as_str()),
        Lit::Int(i) => a.int == Some(i),
        Lit::Bool(b) => a.bool == Some(b),
    };
    Some(eq == op)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev() -> Device {
        serde_json::from_str(
            r#"{"name": "gpu-0-mig-19-4-1", "attributes": {"type": {"string": "mig"}, "profile": {"string": "1g.10gb"}, "index": {"int": 0},
                "productName": {"string": "NVIDIA A100 80GB PCIe"}, "resource.kubernetes.io/pcieRoot": {"string": "pci0000:16"}},
                "capacity": {"memory": {"value": "9856Mi"}}}"#,
        )
        .unwrap_or_default()
    }

    #[test]
    fn the_common_selector_forms_are_evaluated() {
        let d = dev();
        let g = "gpu.nvidia.com";
        assert_eq!(
            eval("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'", g, &d),
            Some(true)
        );
        assert_eq!(
            eval("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'", g, &d),
            Some(false)
        );
        assert_eq!(eval("device.driver == \"gpu.intel.com\"", g, &d), Some(false));
        assert_eq!(eval("device.attributes[\"gpu.nvidia.com\"].profile == '1g.10gb'", g, &d), Some(true));
        assert_eq!(eval("device.attributes['gpu.nvidia.com'].index == 0", g, &d), Some(true));
        assert_eq!(eval("device.attributes['gpu.nvidia.com'].profile != '1g.10gb'", g, &d), Some(false));
        assert_eq!(eval("device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:16'", g, &d), Some(true));
        assert_eq!(eval("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('8Gi')) >= 0", g, &d), Some(true));
        assert_eq!(
            eval("device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0", g, &d),
            Some(false)
        );
        assert_eq!(eval("(device.attributes['gpu.nvidia.com'].type == 'mig')", g, &d), Some(true));
        // Beyond the common forms: said, not guessed.
        assert_eq!(
            eval("device.attributes['gpu.nvidia.com'].productName.lowerAscii().matches('^.*a100.*$')", g, &d),
            None
        );
        assert_eq!(eval("device.attributes['gpu.nvidia.com'].type == 'mig' || device.driver == 'x'", g, &d), None);
        assert_eq!(eval("'gpu.nvidia.com' in device.attributes", g, &d), None);
        // A quote holding `&&` is not split.
        assert_eq!(eval("device.attributes['gpu.nvidia.com'].profile == 'a && b'", g, &d), Some(false));
    }
}
