//! The wall "views never compute what the derivation should", as a grep: no component in
//! `app/src/views/` computes a percentage, lays out slots by comparing quantities, or joins
//! diagnoses to nodes or pods by comparing strings. Each of those facts is a field of the view
//! model now (`memory.*_permille`, `memory.overcommit_bytes`, `gpu_resources[].slots`,
//! `nodes[].problems`, `pending[].problems`, `diagnoses[].link`), tested in the derivation.

#[test]
fn no_view_computes_percentages_layouts_or_diagnosis_joins() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/views");
    let forbidden = [
        // percentages and ratios
        "* 100",
        "*100",
        "/ board",
        "tenths(",
        "pct(",
        "permille(",
        // quantities compared to decide a state
        "limits_bytes >",
        "> board",
        ">= alloc",
        "allocatable.max",
        "capacity.max",
        ".min(4096)",
        // joins of diagnoses
        "diagnoses.iter()",
        "diagnoses\n",
        ".diagnoses.iter",
        "d.kind ==",
        "d.name ==",
    ];
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.map(|e| e.path()).unwrap_or_default();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        // Only the components, not their unit tests.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for f in forbidden {
            if code.contains(f) {
                found.push(format!("{}: {f:?}", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "views compute what the derivation should:\n{}", found.join("\n"));
}
