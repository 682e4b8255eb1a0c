//! `cargo xtask site`: builds the browser bundle the way cargo-leptos would, without
//! installing anything: the `frontend` crate for wasm32 (size-optimised profile), wasm-bindgen
//! as a library pinned to the same version as the `wasm-bindgen` crate, then the stylesheet.
//! Output: `target/site/pkg/`: `{B}.js` and `{B}_bg.wasm` for each bundle B of [`BUNDLES`],
//! `gpudash.css`, `pages.css`, each with its `.gz` and `.br`.
//! When `node_modules/.bin/wasm-opt` exists (npm `binaryen`), the WASM is optimised further.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

mod views_lint;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

fn run(cmd: &mut Command) -> anyhow::Result<()> {
    eprintln!("xtask: {cmd:?}");
    let st = cmd.status().with_context(|| format!("running {cmd:?}"))?;
    if !st.success() {
        bail!("{cmd:?} failed: {st}");
    }
    Ok(())
}

/// The browser bundles: (name, `frontend`'s features). The whole one hydrates the kiosk (its
/// overview turns into the pending page in place) and any page without its own; the others
/// carry one page's views, so that its first load carries no other page's.
const BUNDLES: [(&str, &str); 3] =
    [("gpudash", "overview,lists"), ("gpudash-overview", "overview"), ("gpudash-lists", "lists")];

fn site() -> anyhow::Result<()> {
    let root = root();
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let pkg = target.join("site/pkg");
    std::fs::create_dir_all(&pkg).with_context(|| format!("creating {}", pkg.display()))?;
    for (name, features) in BUNDLES {
        bundle(&root, &target, &pkg, name, features)?;
    }
    // `public/`: files served at the site root as they are (favicon, robots.txt).
    let site = target.join("site");
    for entry in std::fs::read_dir(root.join("public")).context("reading public/")? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            std::fs::copy(entry.path(), site.join(entry.file_name()))
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    // The live pages' stylesheet, and the server-rendered pages' own (loaded after it).
    for (from, to) in [("style/main.css", "gpudash.css"), ("style/pages.css", "pages.css")] {
        let css = std::fs::read_to_string(root.join(from)).with_context(|| format!("reading {from}"))?;
        std::fs::write(pkg.join(to), minify_css(&css)).with_context(|| format!("writing {to}"))?;
    }
    for f in ["gpudash.css", "pages.css"] {
        let (gz, br) = precompress(&pkg.join(f))?;
        let len = std::fs::metadata(pkg.join(f)).map(|m| m.len()).unwrap_or(0);
        eprintln!("xtask: {f}: {len} bytes, {gz} gzip, {br} brotli");
    }
    Ok(())
}

/// Builds the bundle `name` (`frontend` with `features`), as `{name}.js` and `{name}_bg.wasm`
/// in `pkg`, optimised and precompressed.
fn bundle(root: &Path, target: &Path, pkg: &Path, name: &str, features: &str) -> anyhow::Result<()> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    run(Command::new(&cargo).current_dir(root).args([
        "build",
        "-p",
        "frontend",
        "--target",
        "wasm32-unknown-unknown",
        "--profile",
        "wasm-release",
        "--no-default-features",
        "--features",
        features,
    ]))?;
    let wasm = target.join("wasm32-unknown-unknown/wasm-release/frontend.wasm");
    eprintln!("xtask: wasm-bindgen {} -> {}", wasm.display(), pkg.display());
    wasm_bindgen_cli_support::Bindgen::new()
        .input_path(&wasm)
        .web(true)?
        .out_name(name)
        .typescript(false)
        .generate(pkg)?;
    let wasm_out = pkg.join(format!("{name}_bg.wasm"));
    let opt = root.join("node_modules/.bin/wasm-opt");
    if opt.exists() {
        // Keep wasm-bindgen's output next to the site for size analysis (it has the name section).
        let unopt = target.join(format!("site/{name}_bg.unopt.wasm"));
        std::fs::copy(&wasm_out, &unopt).with_context(|| format!("copying to {}", unopt.display()))?;
        // --low-memory-unused: wasm-ld places nothing below address 1024 (its default global
        // base, kept free so that null is never a valid address), which lets binaryen fold
        // constant offsets into loads and stores. (--converge, tried: 492 bytes smaller, 36
        // bytes larger gzip, twice the time.)
        run(Command::new(&opt)
            .arg("-Oz")
            .arg("--low-memory-unused")
            .arg("--enable-bulk-memory")
            .arg("--enable-nontrapping-float-to-int")
            // Sections the browser never reads (which tools built it, which features it uses).
            .arg("--strip-producers")
            .arg("--strip-target-features")
            .arg(&wasm_out)
            .arg("-o")
            .arg(&wasm_out))?;
    }
    let js = pkg.join(format!("{name}.js"));
    let terser = root.join("node_modules/.bin/terser");
    if terser.exists() {
        // wasm-bindgen's glue, minified: a third of its size over the wire.
        run(Command::new(&terser).arg(&js).args(["--module", "--compress", "--mangle", "-o"]).arg(&js))?;
    }
    for f in [js, wasm_out] {
        let (gz, br) = precompress(&f)?;
        let len = std::fs::metadata(&f).map(|m| m.len()).unwrap_or(0);
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        eprintln!("xtask: {file}: {len} bytes, {gz} gzip, {br} brotli");
    }
    Ok(())
}

/// Drops comments and the whitespace CSS does not need (around braces, semicolons, commas,
/// and after colons). The stylesheet has no strings or `url()`s whose spaces would matter.
fn minify_css(css: &str) -> String {
    let mut text = String::with_capacity(css.len());
    let mut rest = css;
    while let Some(i) = rest.find("/*") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    text.push_str(rest);
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        let tight = |c: char| matches!(c, '{' | '}' | ';' | ',' | ':');
        if space && !out.is_empty() && !tight(c) && !out.ends_with(tight) {
            out.push(' ');
        }
        space = false;
        if c == '}' && out.ends_with(';') {
            out.pop();
        }
        out.push(c);
    }
    out
}

/// Writes `F.gz` (zopfli: gzip any browser reads, ~5 % smaller than zlib's best) and `F.br`
/// (brotli, quality 11) next to `F`; the server sends them as they are instead of compressing
/// the bundle on every request — the board gpudash runs on is small.
fn precompress(path: &Path) -> anyhow::Result<(usize, usize)> {
    use std::io::Write;
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut gz = Vec::new();
    zopfli::compress(zopfli::Options::default(), zopfli::Format::Gzip, &data[..], &mut gz)
        .with_context(|| format!("gzip {}", path.display()))?;
    let mut br = Vec::new();
    {
        let params = brotli::enc::BrotliEncoderParams { quality: 11, lgwin: 22, ..Default::default() };
        let mut w = brotli::CompressorWriter::with_params(&mut br, 64 * 1024, &params);
        w.write_all(&data).with_context(|| format!("brotli {}", path.display()))?;
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::write(dir.join(format!("{name}.gz")), &gz).with_context(|| format!("writing {name}.gz"))?;
    std::fs::write(dir.join(format!("{name}.br")), &br).with_context(|| format!("writing {name}.br"))?;
    Ok((gz.len(), br.len()))
}

fn main() -> anyhow::Result<()> {
    match std::env::args().nth(1).as_deref() {
        Some("site") => site(),
        Some("views-lint") => views_lint::run(&root().join("app/src/views")),
        _ => bail!("usage: cargo xtask site | cargo xtask views-lint"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn css_minifies_without_changing_selectors_or_values() {
        let css = "/* c */\nhtml.kiosk .slot:hover,\n.a > .b {\n  color: var(--x);\n  margin: 0 auto;\n}\n@media (prefers-color-scheme: dark) { :root \
            { --x: #fff; } }\n";
        assert_eq!(
            super::minify_css(css),
            "html.kiosk .slot:hover,.a > .b{color:var(--x);margin:0 auto}@media (prefers-color-scheme:dark){:root{--x:#fff}}"
        );
    }
}
