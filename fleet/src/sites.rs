//! The sites file: `sites: [{ name, url, token_file?, ca_file? }]`. Every problem names the
//! entry (its position and name) and the field.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One site as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// Its name, unique in the file (shown on its card, the key of its history).
    pub name: String,
    /// Its gpudash's base URL (`https://gpudash.plant-a.example:8443/gpu`), no trailing `/`.
    pub url: String,
    /// Its bearer token (from `token_file`), for sites that require one.
    pub token: Option<String>,
    /// A PEM file of the CA that signed the site's certificate, when not in the system store.
    pub ca_file: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: Option<String>,
    url: Option<String>,
    token_file: Option<PathBuf>,
    ca_file: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    sites: Vec<serde_yaml::Value>,
}

/// A sites file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SitesError {
    /// Not readable.
    #[error("sites file {0}: {1}")]
    Read(String, String),
    /// Not YAML of the expected shape.
    #[error("sites file {0}: {1} — expected `sites: [{{name, url, token_file?, ca_file?}}]`")]
    Shape(String, String),
    /// One entry is wrong.
    #[error("sites file {file}: entry {index} ({name}): {field}: {problem}")]
    Entry {
        /// The file.
        file: String,
        /// Position, from 1.
        index: usize,
        /// Its name, or `no name`.
        name: String,
        /// The field.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
}

/// Reads and checks the sites file; relative `token_file`/`ca_file` paths are taken from the
/// file's directory.
pub fn load(path: &Path) -> Result<Vec<Site>, SitesError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| SitesError::Read(shown.clone(), e.to_string()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse(&shown, &text, dir)
}

/// Parses a sites file's text.
pub fn parse(file: &str, text: &str, dir: &Path) -> Result<Vec<Site>, SitesError> {
    let f: File = serde_yaml::from_str(text).map_err(|e| SitesError::Shape(file.into(), e.to_string()))?;
    if f.sites.is_empty() {
        return Err(SitesError::Shape(file.into(), "no sites".into()));
    }
    let mut out: Vec<Site> = Vec::new();
    for (i, v) in f.sites.into_iter().enumerate() {
        let name_of = |v: &serde_yaml::Value| {
            v.get("name").and_then(|n| n.as_str()).map_or("no name".to_string(), |n| format!("{n:?}"))
        };
        let shown = name_of(&v);
        let err = |field: &'static str, problem: String| SitesError::Entry {
            file: file.into(),
            index: i + 1,
            name: shown.clone(),
            field,
            problem,
        };
        let e: Entry = serde_yaml::from_value(v).map_err(|e| err("entry", e.to_string()))?;
        let name = e
            .name
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .ok_or_else(|| err("name", "missing".into()))?;
        if name.len() > 63 || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) {
            return Err(err("name", "use up to 63 letters, digits, '-', '_' or '.'".into()));
        }
        if out.iter().any(|s| s.name == name) {
            return Err(err("name", "used by an earlier entry".into()));
        }
        let url =
            e.url.map(|u| u.trim().trim_end_matches('/').to_string()).ok_or_else(|| err("url", "missing".into()))?;
        let parsed = reqwest::Url::parse(&url).map_err(|x| err("url", format!("{url:?}: {x}")))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(err("url", format!("{url:?}: expected http(s)://host[:port][/base-path]")));
        }
        if parsed.query().is_some() || parsed.fragment().is_some() {
            return Err(err("url", format!("{url:?}: no query or fragment")));
        }
        let token = match e.token_file {
            None => None,
            Some(p) => {
                let p = if p.is_relative() { dir.join(p) } else { p };
                let t = std::fs::read_to_string(&p).map_err(|x| err("token_file", format!("{}: {x}", p.display())))?;
                let t = t.trim().to_string();
                if t.len() < 16 || t.contains(char::is_whitespace) {
                    return Err(err("token_file", format!("{}: one line of at least 16 characters", p.display())));
                }
                Some(t)
            }
        };
        let ca_file = match e.ca_file {
            None => None,
            Some(p) => {
                let p = if p.is_relative() { dir.join(p) } else { p };
                let pem = std::fs::read(&p).map_err(|x| err("ca_file", format!("{}: {x}", p.display())))?;
                reqwest::Certificate::from_pem(&pem).map_err(|x| err("ca_file", format!("{}: {x}", p.display())))?;
                Some(p)
            }
        };
        out.push(Site { name, url, token, ca_file });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_files_load_and_each_bad_entry_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.token"), "0123456789abcdef0123\n").unwrap_or_default();
        std::fs::write(dir.path().join("short.token"), "abc").unwrap_or_default();
        let ok = "sites:\n- {name: plant-a, url: 'https://a.example:8443/gpu/', token_file: a.token}\n- {name: plant-b, url: 'http://10.0.0.2:8080'}\n";
        let s = parse("sites.yaml", ok, dir.path()).unwrap();
        assert_eq!(s[0].url, "https://a.example:8443/gpu");
        assert_eq!(s[0].token.as_deref(), Some("0123456789abcdef0123"));
        assert_eq!(s[1].token, None);
        let bad = |text: &str| parse("sites.yaml", text, dir.path()).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(
            bad("sites:\n- {name: a, url: x}\n"),
            r#"sites file sites.yaml: entry 1 ("a"): url: "x": relative URL without a base"#
        );
        assert!(bad("sites:\n- {name: a, url: 'http://a'}\n- {name: a, url: 'http://b'}\n")
            .contains(r#"entry 2 ("a"): name: used by an earlier entry"#));
        assert!(bad("sites:\n- {url: 'http://a'}\n").contains("entry 1 (no name): name: missing"));
        assert!(bad("sites:\n- {name: a, url: 'ftp://a'}\n").contains("url"));
        assert!(bad("sites:\n- {name: a, url: 'http://a', token_file: short.token}\n").contains("token_file"));
        assert!(bad("sites:\n- {name: a, url: 'http://a', token_file: missing.token}\n").contains("missing.token"));
        assert!(bad("sites:\n- {name: 'a b', url: 'http://a'}\n").contains("name: use up to 63"));
        assert!(bad("sites:\n- {name: a, url: 'http://a', colour: red}\n")
            .contains("entry 1 (\"a\"): entry: unknown field"));
        assert!(bad("nodes: []\n").contains("expected `sites:"));
        assert!(bad("sites: []\n").contains("no sites"));
    }
}
