//! The pending and diagnoses pages of a site with long lists, one page at a time
//! ([`gpudash_model::model::ListPage`]): any tenant can make thousands of Pending pods, and a page that
//! carried them all (25.7 MB of HTML and hydration state at 10,000) held a server worker for
//! seconds per reader. The most severe and the longest waiting come first; the rest are
//! counted, and filters narrow them by namespace and diagnosis code.

use std::collections::HashMap;
use std::sync::Arc;

use gpudash_model::model::{ClusterView, Diagnosis, ListPage, PendingPod, Severity};
use gpudash_model::time::parse_rfc3339;

/// Items on one page of the paged pending or diagnoses page.
pub const PAGE_ITEMS: usize = 25;

/// The most items the live (browser-rendered) pending or diagnoses page may carry; past this,
/// the server gives the paged one without rendering the live one first. Below it, the live
/// page is still measured against the first-load budget (the server's check).
pub const LIVE_MAX_ITEMS: usize = 40;

/// The most diagnosis codes offered by the code filter.
const MAX_CODES: usize = 64;

/// How urgent a severity is: 0 critical, 1 warning, 2 info, 3 none.
fn rank(s: Option<Severity>) -> u8 {
    match s {
        Some(Severity::Critical) => 0,
        Some(Severity::Warning) => 1,
        Some(Severity::Info) => 2,
        None => 3,
    }
}

/// Since when, as seconds (unknown: last).
fn since(s: Option<&str>) -> i64 {
    s.and_then(parse_rfc3339).unwrap_or(i64::MAX)
}

/// Every pending item (Pending pods, then workloads a quota blocks), as the live page lists them.
pub fn pending_count(v: &ClusterView) -> usize {
    v.pending.len() + v.blocked.len()
}

/// Page `page` (from 1; past the end gives the last) of the pending list: Pending pods and the
/// workloads a quota keeps from creating theirs together, the most severe diagnosis first, then
/// the longest waiting; narrowed to a namespace and to items with a diagnosis code.
pub fn pending_page(v: &ClusterView, ns: Option<&str>, code: Option<&str>, page: u32) -> (ListPage, Vec<PendingPod>) {
    let all = || v.pending.iter().chain(&v.blocked);
    let codes = count_codes(all().flat_map(|p| p.problems.iter().map(|d| d.code.as_str())));
    let code = code.filter(|c| codes.iter().any(|(k, _)| k == c));
    let mut shown: Vec<(u8, i64, &PendingPod)> = all()
        .filter(|p| ns.is_none_or(|n| p.namespace == n))
        .filter(|p| code.is_none_or(|c| p.problems.iter().any(|d| d.code == c)))
        .map(|p| {
            let worst = p.problems.iter().map(|d| rank(Some(d.severity))).min().unwrap_or(rank(None));
            (worst, since(p.pending_since.as_deref()), p)
        })
        .collect();
    // Stable: within one severity and age, the derivation's order.
    shown.sort_by_key(|(r, s, _)| (*r, *s));
    let (list, range) = frame(pending_count(v), shown.len(), codes, code, page);
    (list, shown[range].iter().map(|(_, _, p)| (*p).clone()).collect())
}

/// Page `page` of the diagnoses: the most severe first, then the oldest; narrowed to a
/// namespace (cluster-wide ones are kept out of a namespace's list) and to a code.
pub fn diagnoses_page(
    v: &ClusterView,
    ns: Option<&str>,
    code: Option<&str>,
    page: u32,
) -> (ListPage, Vec<Arc<Diagnosis>>) {
    let codes = count_codes(v.diagnoses.iter().map(|d| d.code.as_str()));
    let code = code.filter(|c| codes.iter().any(|(k, _)| k == c));
    let mut shown: Vec<(u8, i64, &Arc<Diagnosis>)> = v
        .diagnoses
        .iter()
        .filter(|d| ns.is_none_or(|n| d.namespace.as_deref() == Some(n)))
        .filter(|d| code.is_none_or(|c| d.code == c))
        .map(|d| (rank(Some(d.severity)), since(d.since.as_deref()), d))
        .collect();
    shown.sort_by_key(|(r, s, _)| (*r, *s));
    let (list, range) = frame(v.diagnoses.len(), shown.len(), codes, code, page);
    (list, shown[range].iter().map(|(_, _, d)| Arc::clone(d)).collect())
}

/// The codes among `codes`, most frequent first (then by name), at most [`MAX_CODES`].
fn count_codes<'a>(codes: impl Iterator<Item = &'a str>) -> Vec<(String, u32)> {
    let mut count: HashMap<&str, u32> = HashMap::new();
    for c in codes {
        *count.entry(c).or_default() += 1;
    }
    let mut out: Vec<(String, u32)> = count.into_iter().map(|(c, n)| (c.to_string(), n)).collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out.truncate(MAX_CODES);
    out
}

/// Where page `page` of `matching` items lies, and the page's frame.
fn frame(
    total: usize,
    matching: usize,
    codes: Vec<(String, u32)>,
    code: Option<&str>,
    page: u32,
) -> (ListPage, std::ops::Range<usize>) {
    let pages = matching.div_ceil(PAGE_ITEMS).max(1);
    let page = usize::try_from(page).unwrap_or(1).clamp(1, pages);
    let start = ((page - 1) * PAGE_ITEMS).min(matching);
    let end = (start + PAGE_ITEMS).min(matching);
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    let list = ListPage {
        total: count(total),
        matching: count(matching),
        first: if end > start { count(start + 1) } else { 0 },
        last: count(end),
        codes,
        code: code.map(str::to_string),
        page: count(page),
        pages: count(pages),
        prev: (page > 1).then(|| count(page - 1)),
        next: (page < pages).then(|| count(page + 1)),
        turn: if page < pages { count(page + 1) } else { 1 },
    };
    (list, start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diagnosis(code: &str, severity: Severity, ns: Option<&str>, since: Option<&str>) -> Diagnosis {
        Diagnosis {
            code: code.into(),
            severity,
            namespace: ns.map(str::to_string),
            name: format!("{code}-{}", since.unwrap_or("-")),
            since: since.map(str::to_string),
            ..Diagnosis::default()
        }
    }

    fn pod(ns: &str, name: &str, since: &str, problem: Option<(&str, Severity)>) -> PendingPod {
        PendingPod {
            namespace: ns.into(),
            name: name.into(),
            pending_since: Some(since.into()),
            problems: problem
                .map(|(c, s)| std::sync::Arc::new(diagnosis(c, s, Some(ns), Some(since))))
                .into_iter()
                .collect(),
            ..PendingPod::default()
        }
    }

    /// 10,000 Pending pods, as a tenant can make them: a page holds 25, the critical and the
    /// longest waiting first, and the rest are counted.
    #[test]
    fn ten_thousand_pending_pods_are_a_page_of_25_most_urgent_first() {
        let mut v = ClusterView::default();
        for i in 0..10_000u32 {
            let since = format!("2026-12-0{}T{:02}:{:02}:00Z", 1 + i % 5, (i / 60) % 24, i % 60);
            let problem = match i % 100 {
                0 => Some(("gpu-admission-rejected", Severity::Critical)),
                1..=9 => Some(("insufficient-gpu", Severity::Warning)),
                _ => None,
            };
            v.pending.push(pod(if i % 2 == 0 { "ml" } else { "vision" }, &format!("p-{i:05}"), &since, problem));
        }
        v.blocked.push(pod("ml", "quota-blocked", "2026-11-01T00:00:00Z", None));
        let (list, items) = pending_page(&v, None, None, 1);
        assert_eq!((list.total, list.matching, list.pages, items.len()), (10_001, 10_001, 401, 25));
        assert_eq!((list.first, list.last, list.prev, list.next, list.turn), (1, 25, None, Some(2), 2));
        // The critical first (100 of them), the oldest of those first.
        assert!(items.iter().all(|p| p.problems.first().is_some_and(|d| d.severity == Severity::Critical)));
        let ages: Vec<i64> = items.iter().map(|p| since(p.pending_since.as_deref())).collect();
        assert!(ages.windows(2).all(|w| w[0] <= w[1]), "not oldest first: {ages:?}");
        // The codes offered, most frequent first.
        assert_eq!(list.codes, vec![("insufficient-gpu".into(), 900), ("gpu-admission-rejected".into(), 100)]);
        // The last page, past the end, and a filter.
        let (last, items) = pending_page(&v, None, None, 9_999);
        assert_eq!(
            (last.page, last.first, last.last, last.next, last.turn, items.len()),
            (401, 10_001, 10_001, None, 1, 1)
        );
        // The last is the newest of those without a problem (the last of equals in the
        // derivation's order); the quota-blocked workload, the oldest of them, opens their run.
        let newest =
            v.pending.iter().filter(|p| p.problems.is_empty()).max_by_key(|p| since(p.pending_since.as_deref()));
        assert_eq!(Some(&items[0].name), newest.map(|p| &p.name));
        let (run, items) = pending_page(&v, None, None, 41);
        assert_eq!((run.first, items[0].name.as_str()), (1_001, "quota-blocked"));
        let (f, items) = pending_page(&v, Some("vision"), Some("insufficient-gpu"), 1);
        assert_eq!((f.matching, f.total, f.code.as_deref()), (500, 10_001, Some("insufficient-gpu")));
        assert!(items.iter().all(|p| p.namespace == "vision" && p.problems[0].code == "insufficient-gpu"));
        // A code no item carries narrows nothing (it is not offered, and not applied).
        let (f, _) = pending_page(&v, None, Some("<script>"), 1);
        assert_eq!((f.matching, f.code), (10_001, None));
        // Nothing matches: an empty page, not a panic.
        let (f, items) = pending_page(&v, Some("nowhere"), None, 3);
        assert_eq!((f.matching, f.first, f.last, f.page, f.pages, items.len()), (0, 0, 0, 1, 1, 0));
    }

    #[test]
    fn diagnoses_come_most_severe_first_then_oldest_and_filter_by_namespace_and_code() {
        let v = ClusterView {
            diagnoses: vec![
                Arc::new(diagnosis("gpu-held-idle", Severity::Info, Some("ml"), Some("2026-12-01T00:00:00Z"))),
                Arc::new(diagnosis("node-not-ready", Severity::Critical, None, Some("2026-12-03T00:00:00Z"))),
                Arc::new(diagnosis(
                    "gpu-model-oom-killed",
                    Severity::Critical,
                    Some("ml"),
                    Some("2026-12-02T00:00:00Z"),
                )),
                Arc::new(diagnosis("insufficient-gpu", Severity::Warning, Some("vision"), None)),
            ],
            ..ClusterView::default()
        };
        let (list, items) = diagnoses_page(&v, None, None, 1);
        let codes: Vec<&str> = items.iter().map(|d| d.code.as_str()).collect();
        assert_eq!(codes, ["gpu-model-oom-killed", "node-not-ready", "insufficient-gpu", "gpu-held-idle"]);
        assert_eq!((list.total, list.matching, list.pages, list.first, list.last), (4, 4, 1, 1, 4));
        let (list, items) = diagnoses_page(&v, Some("ml"), Some("gpu-held-idle"), 1);
        assert_eq!((list.matching, items.len(), items[0].code.as_str()), (1, 1, "gpu-held-idle"));
    }
}
