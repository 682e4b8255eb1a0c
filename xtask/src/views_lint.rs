//! `cargo xtask views-lint`: the wall "views only render" kept by a parser rather than a list
//! of past offending strings. Every function in `app/src/views/` outside tests — and every
//! Rust expression inside its macros (`view!`, `format!`) — is walked, and these are refused:
//! - arithmetic (`*`, `/`, `%`, `+`, `-` and their assignments): a percentage, a sum or an
//!   offset is a field of the view model;
//! - ordering comparisons (`<`, `>`, `<=`, `>=`): a state decided by comparing quantities
//!   (one against the literal `0` is asking "is there any?" and passes);
//! - `.len()`: a decision or a count made from a list's length (the model carries counts);
//! - joins: two values compared for equality where one is an object's `name`, `namespace`,
//!   `node`, `kind` or `code` (the derivation links diagnoses to their objects: `problems`,
//!   `link`);
//! - slicing: an index by a range (`s[..n]`), `.get(a..b)`, `split_at`, `chars`, `bytes`;
//! - parsing: `parse`, `split*`, `strip_prefix`/`strip_suffix`, `trim_*_matches`,
//!   `from_str`, `percent_decode`. (Reading one of the model's RFC 3339 times to show it in
//!   the reader's zone, `parse_rfc3339`, is rendering that field and passes.)
//!
//! A line may carry `// views-lint: allow(<why>)` (on it or the line above) where a reviewer
//! agrees the code renders rather than decides; the lint counts those aloud.

use std::path::{Path, PathBuf};

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use syn::parse::Parser as _;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned as _;
use syn::visit::Visit;

/// One refused expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// 1-based line.
    pub line: usize,
    /// What kind of decision, and the code.
    pub what: String,
}

/// The methods that parse text.
const PARSING: [&str; 13] = [
    "parse",
    "split",
    "split_once",
    "splitn",
    "rsplit",
    "rsplit_once",
    "split_whitespace",
    "strip_prefix",
    "strip_suffix",
    "trim_start_matches",
    "trim_end_matches",
    "from_str",
    "percent_decode",
];

/// The fields that name an object: comparing two of them joins one list to another.
const IDENTITY: [&str; 5] = ["name", "namespace", "node", "kind", "code"];

/// Whether an expression reads an object's identity field (`d.name`, `p.namespace.as_str()`).
fn identity(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Field(f) => matches!(&f.member, syn::Member::Named(n) if IDENTITY.contains(&n.to_string().as_str())),
        syn::Expr::MethodCall(m) => identity(&m.receiver),
        syn::Expr::Reference(r) => identity(&r.expr),
        syn::Expr::Unary(u) => identity(&u.expr),
        syn::Expr::Paren(p) => identity(&p.expr),
        _ => false,
    }
}

/// Whether an expression is a literal or a named constant (`Code::Other`, `MAX`).
fn literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(_) => true,
        syn::Expr::Path(p) => {
            p.path.segments.last().is_some_and(|s| s.ident.to_string().starts_with(char::is_uppercase))
        }
        _ => false,
    }
}

/// Whether an expression is the literal `0`.
fn zero(e: &syn::Expr) -> bool {
    matches!(e, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) if i.base10_digits() == "0")
}

/// The methods that cut text or lists by position.
const SLICING: [&str; 5] = ["split_at", "chars", "bytes", "char_indices", "get_unchecked"];

struct Walker {
    found: Vec<Finding>,
}

impl Walker {
    fn flag(&mut self, span: Span, what: &str, code: String) {
        let code: String = code.split_whitespace().collect::<Vec<_>>().join(" ");
        let code =
            if code.chars().count() > 80 { format!("{}…", code.chars().take(80).collect::<String>()) } else { code };
        self.found.push(Finding { line: span.start().line, what: format!("{what}: {code}") });
    }

    /// A macro's tokens: `format!`-like arguments are expressions; `view!` is markup whose
    /// braced children and attribute values are expressions.
    fn tokens(&mut self, ts: TokenStream) {
        if let Ok(args) = Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated.parse2(ts.clone()) {
            for a in &args {
                self.visit_expr(a);
            }
            return;
        }
        let trees: Vec<TokenTree> = ts.into_iter().collect();
        for (i, t) in trees.iter().enumerate() {
            match t {
                TokenTree::Group(g) => self.group(g.delimiter(), g.stream()),
                TokenTree::Punct(p) => {
                    let prev = i.checked_sub(1).and_then(|j| trees.get(j));
                    let next = trees.get(i + 1);
                    let is =
                        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(q)) if q.as_char() == c);
                    // Markup uses `<`, `>`, `/` (in `</a>` and `/>`), `=` and `-` (`aria-label`);
                    // never `*`, `%` or `+` between two values (`x=*y` derefs), nor `/`.
                    let value = |t: Option<&TokenTree>| {
                        matches!(t, Some(TokenTree::Ident(_) | TokenTree::Literal(_) | TokenTree::Group(_)))
                    };
                    let arithmetic = match p.as_char() {
                        '*' | '%' | '+' => value(prev),
                        '/' => !is(prev, '<') && !is(next, '>'),
                        _ => false,
                    };
                    if arithmetic {
                        self.flag(p.span(), "arithmetic in markup", p.as_char().to_string());
                    }
                }
                _ => {}
            }
        }
    }

    fn group(&mut self, delimiter: Delimiter, inner: TokenStream) {
        if delimiter == Delimiter::Brace {
            if let Ok(block) = syn::Block::parse_within.parse2(inner.clone()) {
                for s in &block {
                    self.visit_stmt(s);
                }
                return;
            }
        }
        if let Ok(e) = syn::parse2::<syn::Expr>(inner.clone()) {
            self.visit_expr(&e);
            return;
        }
        self.tokens(inner);
    }
}

fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("test")
            || (a.path().is_ident("cfg") && a.meta.require_list().is_ok_and(|l| l.tokens.to_string() == "test"))
    })
}

fn code(t: &impl quote::ToTokens) -> String {
    t.to_token_stream().to_string()
}

impl<'ast> Visit<'ast> for Walker {
    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !is_test(&m.attrs) {
            syn::visit::visit_item_mod(self, m);
        }
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_item_fn(self, f);
        }
    }

    fn visit_expr_binary(&mut self, e: &'ast syn::ExprBinary) {
        use syn::BinOp as B;
        let what = match e.op {
            B::Mul(_) | B::Div(_) | B::Rem(_) | B::Add(_) | B::Sub(_) => Some("arithmetic"),
            B::MulAssign(_) | B::DivAssign(_) | B::RemAssign(_) | B::AddAssign(_) | B::SubAssign(_) => {
                Some("arithmetic")
            }
            B::Lt(_) | B::Le(_) | B::Gt(_) | B::Ge(_) if !zero(&e.left) && !zero(&e.right) => {
                Some("an ordering comparison")
            }
            B::Eq(_) | B::Ne(_)
                if (identity(&e.left) || identity(&e.right)) && !literal(&e.left) && !literal(&e.right) =>
            {
                Some("a join by name")
            }
            _ => None,
        };
        if let Some(w) = what {
            self.flag(e.op.span(), w, code(e));
        }
        syn::visit::visit_expr_binary(self, e);
    }

    fn visit_expr_method_call(&mut self, e: &'ast syn::ExprMethodCall) {
        let m = e.method.to_string();
        let ranged = e.args.iter().any(|a| matches!(a, syn::Expr::Range(_)));
        if m == "len" {
            self.flag(e.method.span(), "a decision or count from a length", code(e));
        } else if PARSING.contains(&m.as_str()) {
            self.flag(e.method.span(), "parsing", code(e));
        } else if SLICING.contains(&m.as_str()) || (m == "get" && ranged) {
            self.flag(e.method.span(), "slicing", code(e));
        }
        syn::visit::visit_expr_method_call(self, e);
    }

    fn visit_expr_index(&mut self, e: &'ast syn::ExprIndex) {
        if matches!(*e.index, syn::Expr::Range(_)) {
            self.flag(e.span(), "slicing", code(e));
        }
        syn::visit::visit_expr_index(self, e);
    }

    fn visit_expr_call(&mut self, e: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*e.func {
            let last = p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            if ["from_str", "percent_decode"].contains(&last.as_str()) {
                self.flag(e.span(), "parsing", code(e));
            }
        }
        syn::visit::visit_expr_call(self, e);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
    }
}

/// The findings in one file's source, less the lines a reviewer allowed; and how many were
/// allowed.
pub fn check_source(src: &str) -> Result<(Vec<Finding>, usize), String> {
    let file = syn::parse_file(src).map_err(|e| format!("line {}: {e}", e.span().start().line))?;
    let mut w = Walker { found: Vec::new() };
    w.visit_file(&file);
    let lines: Vec<&str> = src.lines().collect();
    let allowed = |line: usize| {
        let at =
            |n: usize| n.checked_sub(1).and_then(|i| lines.get(i)).is_some_and(|l| l.contains("views-lint: allow("));
        at(line) || at(line.saturating_sub(1))
    };
    w.found.sort_by(|a, b| (a.line, &a.what).cmp(&(b.line, &b.what)));
    w.found.dedup();
    let (ok, found): (Vec<Finding>, Vec<Finding>) = w.found.into_iter().partition(|f| allowed(f.line));
    Ok((found, ok.len()))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            rust_files(&p, out)?;
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
    Ok(())
}

/// Checks every view under `dir`; prints what it found; errs when anything was.
pub fn run(dir: &Path) -> anyhow::Result<()> {
    let mut files = Vec::new();
    rust_files(dir, &mut files)?;
    files.sort();
    let (mut bad, mut allowed) = (Vec::new(), 0);
    for f in &files {
        let src = std::fs::read_to_string(f)?;
        let (found, ok) = check_source(&src).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        allowed += ok;
        bad.extend(found.into_iter().map(|x| format!("{}:{}: {}", f.display(), x.line, x.what)));
    }
    eprintln!("views-lint: {} files, {} findings, {allowed} allowed by a comment", files.len(), bad.len());
    if bad.is_empty() {
        return Ok(());
    }
    for b in &bad {
        eprintln!("{b}");
    }
    anyhow::bail!("views decide what the view model should carry (move it into the core and render a field)")
}

#[cfg(test)]
mod tests {
    use super::check_source;

    fn found(src: &str) -> Vec<String> {
        check_source(src).unwrap().0.into_iter().map(|f| f.what).collect()
    }

    #[test]
    fn a_planted_percentage_is_found_in_code_and_in_markup() {
        let plain = "fn card(a: u64, b: u64) -> String { format!(\"{}%\", a * 100 / b) }";
        assert_eq!(found(plain).len(), 2, "{:?}", found(plain));
        let markup = "fn card(a: u64, b: u64) -> impl IntoView { view! { <span class=\"pct\">{a * 100 / b}</span> } }";
        assert!(found(markup).iter().all(|w| w.starts_with("arithmetic")) && found(markup).len() == 2);
        let attr = "fn bar(a: u64, b: u64) -> impl IntoView { view! { <div style=format!(\"width:{}%\", a * 100 / b)></div> } }";
        assert_eq!(found(attr).len(), 2, "{:?}", found(attr));
        let closure = "fn c(v: Vec<u64>) -> impl IntoView { view! { <ul>{move || v.iter().map(|x| view! { <li>{x % 7}</li> }).collect_view()}</ul> } }";
        assert_eq!(found(closure).len(), 1, "{:?}", found(closure));
    }

    #[test]
    fn comparisons_lengths_slices_and_parsing_are_found() {
        for (src, what) in [
            ("fn f(a: u64, b: u64) -> bool { a > b }", "an ordering comparison"),
            ("fn f(v: &[u8]) -> impl IntoView { view! { <b>{(v.len() == 0).then(|| \"none\")}</b> } }", "a decision"),
            ("fn f(s: &str) -> &str { &s[..10] }", "slicing"),
            ("fn f(s: &str) -> Option<u32> { s.parse().ok() }", "parsing"),
            ("fn f(s: &str) -> Option<(&str, &str)> { s.split_once('/') }", "parsing"),
            ("fn f(s: &str) -> Option<u64> { u64::from_str(s).ok() }", "parsing"),
            ("fn f(v: &ClusterView, n: &NodeView) -> usize { v.diagnoses.iter().filter(|d| d.name == n.name).count() }", "a join"),
            ("fn f(a: u64) -> impl IntoView { view! { <b data-x=a * 2></b> } }", "arithmetic in markup"),
        ] {
            let f = found(src);
            assert!(f.len() == 1 && f[0].starts_with(what), "{src}: {f:?}");
        }
    }

    #[test]
    fn markup_rendering_fields_and_tests_pass() {
        let clean = r#"
            fn card(n: NodeView) -> impl IntoView {
                let class = if n.ready { "badge ok" } else { "badge bad" };
                let mine = n.kind == "Node" && d.code != Code::Other;
                view! {
                    <article class="card" aria-label=n.name.clone() data-state=n.state>
                        <h2><a href=format!("{}/nodes/{}", base, n.name)>{n.name.clone()}</a></h2>
                        <span class=class>{n.badge}</span>
                        {(n.pending > 0).then(|| view! { <i data-part=*n.part>{n.pending}</i> })}
                        <img src="/x.svg"/>
                        {n.rows.iter().map(|r| view! { <p>{r.clone()}</p> }).collect_view()}
                    </article>
                }
            }
            #[cfg(test)]
            mod tests { #[test] fn t() { assert!(1 + 1 > 1); } }
        "#;
        assert!(found(clean).is_empty(), "{:?}", found(clean));
        let allowed =
            "fn f(i: usize) -> usize {\n    // views-lint: allow(a 1-based position is how people count)\n    i + 1\n}";
        let (f, ok) = check_source(allowed).unwrap();
        assert!(f.is_empty() && ok == 1, "{f:?}");
    }
}
