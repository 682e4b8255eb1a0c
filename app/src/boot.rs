//! What a page starts from: the request's page and display flags, and the current view. The
//! server renders it into the page as JSON so that hydration starts from the same state.

use serde::{Deserialize, Serialize};

use crate::i18n::Lang;
use crate::model::ClusterView;

/// The page a path names. Routing is by path on the server; every page is a full document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Page {
    /// `/`: node cards.
    #[default]
    Overview,
    /// `/nodes/{name}`.
    Node(String),
    /// `/pending`.
    Pending,
    /// `/diagnoses`.
    Diagnoses,
    /// `/history`: charts of the recorded history.
    History,
    /// `/fit`: will my next model fit?
    Fit,
    /// `/quotas`: GPU quotas per namespace.
    Quotas,
    /// `/reports`: GPU-hours per team, workload and pod.
    Reports,
    /// Anything else.
    NotFound,
}

impl Page {
    /// Whether the page loads the WASM bundle and goes live. History (charts are images), the
    /// what-if form (it posts; the server answers), the quota tables and a node's page
    /// (refreshed every 15 s; the overview's card of the node is live) are plain documents,
    /// which keeps their views and types out of the bundle every other page downloads.
    pub fn hydrates(&self) -> bool {
        !matches!(self, Self::History | Self::Fit | Self::Quotas | Self::Reports | Self::Node(_))
    }

    /// The path below the base path that names this page (`/` for anything unknown).
    pub fn path(&self) -> String {
        match self {
            Self::Overview | Self::NotFound => "/".into(),
            Self::Node(n) => format!("/nodes/{}", percent_encode(n)),
            Self::Pending => "/pending".into(),
            Self::Diagnoses => "/diagnoses".into(),
            Self::History => "/history".into(),
            Self::Fit => "/fit".into(),
            Self::Quotas => "/quotas".into(),
            Self::Reports => "/reports".into(),
        }
    }

    /// The page for a path below the base path.
    pub fn from_path(path: &str) -> Self {
        let p = path.trim_end_matches('/');
        match p {
            "" => Self::Overview,
            "/pending" => Self::Pending,
            "/diagnoses" => Self::Diagnoses,
            "/history" => Self::History,
            "/fit" => Self::Fit,
            "/quotas" => Self::Quotas,
            "/reports" => Self::Reports,
            _ => match p.strip_prefix("/nodes/") {
                Some(n) if !n.is_empty() && !n.contains('/') => Self::Node(percent_decode(n)),
                _ => Self::NotFound,
            },
        }
    }
}

/// Colour theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub enum Theme {
    /// Follow the browser (`prefers-color-scheme`).
    #[default]
    Auto,
    /// Light.
    Light,
    /// Dark.
    Dark,
}

/// Everything a page needs to render and go live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Boot {
    /// Base path the server is mounted under (`""` or `/gpu`).
    pub base: String,
    /// The page.
    pub page: Page,
    /// Read-only wall screen: large type, dark, rotating, no controls.
    pub kiosk: bool,
    /// Inside an iframe: no page chrome.
    pub embed: bool,
    /// Theme.
    pub theme: Theme,
    /// Language of the page.
    #[serde(default)]
    pub lang: Lang,
    /// Whether `?lang=` chose it (links then keep it).
    #[serde(default)]
    pub lang_pinned: bool,
    /// Kiosk rotation between overview and pending, seconds (0: no rotation).
    pub rotate_seconds: u32,
    /// Namespace filter.
    pub ns: Option<String>,
    /// Node label filter (`key=value` or `key`).
    pub label: Option<String>,
    /// History time range (`1h`, `24h`, `7d`, `30d`); the history page is the server's.
    #[cfg(not(feature = "hydrate"))]
    #[serde(default)]
    pub range: Option<crate::model::Range>,
    /// A pod (`?pod=namespace/name`: namespace, name) whose timeline the history page shows
    /// (the server's page).
    #[cfg(not(feature = "hydrate"))]
    #[serde(default)]
    pub pod: Option<(String, String)>,
    /// The what-if form as submitted and its answer (server only: `/fit` does not hydrate).
    #[cfg(not(feature = "hydrate"))]
    #[serde(default)]
    pub fit: Option<(crate::model::FitInput, crate::model::FitResult)>,
    /// The GPU-hours report with what the page shows of it, or why there is none (server
    /// only: `/reports` does not hydrate).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub report: Option<Result<(crate::model::report::Report, crate::model::report::Sheet), String>>,
    /// The overview's GPU group (`?group=`, a product; the paged overview's, server only).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub group: Option<String>,
    /// The overview's page (`?page=`, from 1; the paged overview's, server only).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub page_no: u32,
    /// The paged overview of a site too large for the live one (server only: it does not
    /// hydrate).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub sheet: Option<crate::model::Sheet>,
    /// The pending or diagnoses page's diagnosis code filter (`?code=`; the paged list's, server
    /// only).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub code: Option<String>,
    /// The pending or diagnoses page of a site with more items than one live page shows (or
    /// asked for with `?page=`, `?ns=` or `?code=`): where this page's items stand among the
    /// rest (server only: it does not hydrate; the items are the view's).
    #[cfg(not(feature = "hydrate"))]
    #[serde(skip)]
    pub list: Option<crate::model::ListPage>,
    /// `/reports`' query: `month=`, `by=`, `tz=` (kept on its links).
    #[serde(default)]
    pub report_query: Vec<(String, String)>,
    /// The zone times are shown in (the reader's, from the cookie the page sets; else the
    /// site's; else UTC).
    #[serde(default)]
    pub zone: crate::time::Zone,
    /// Why history is unavailable, when it is.
    #[serde(default)]
    pub history_problem: Option<String>,
    /// The view at render time, its nodes as cards (as the browser's stream sends them: the
    /// memory table by pod and the GPU labels are the server-rendered node page's only).
    #[serde(serialize_with = "as_cards")]
    pub view: ClusterView,
}

pub use gpudash_model::url::{percent_decode, percent_encode};

fn as_cards<S: serde::Serializer>(v: &ClusterView, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&crate::model::ForBrowser(v), s)
}

impl Boot {
    /// Builds the boot state from the request path (below the base) and query string; `lang`
    /// is the language when the query does not name one (`Accept-Language`, else `--lang`).
    pub fn from_request(
        base: &str,
        path: &str,
        query: &str,
        rotate_seconds: u32,
        lang: Lang,
        view: ClusterView,
    ) -> Self {
        let mut b =
            Self { base: base.to_string(), page: Page::from_path(path), rotate_seconds, lang, view, ..Self::default() };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let v = percent_decode(v);
            let on = v.is_empty() || v == "1" || v == "true";
            match k {
                "kiosk" => b.kiosk = on,
                "embed" => b.embed = on,
                "theme" => {
                    b.theme = match v.as_str() {
                        "dark" => Theme::Dark,
                        "light" => Theme::Light,
                        _ => Theme::Auto,
                    }
                }
                "rotate" => b.rotate_seconds = v.parse().unwrap_or(b.rotate_seconds).min(3600),
                "ns" if !v.is_empty() => b.ns = Some(v),
                "label" if !v.is_empty() => b.label = Some(v),
                #[cfg(not(feature = "hydrate"))]
                "group" if !v.is_empty() && v.len() <= 200 => b.group = Some(v),
                #[cfg(not(feature = "hydrate"))]
                "code" if !v.is_empty() && v.len() <= 64 => b.code = Some(v),
                #[cfg(not(feature = "hydrate"))]
                "page" => b.page_no = v.parse().unwrap_or(1).clamp(1, 100_000),
                #[cfg(not(feature = "hydrate"))]
                "range" => b.range = crate::model::Range::parse(&v),
                #[cfg(not(feature = "hydrate"))]
                "pod" => b.pod = v.split_once('/').map(|(ns, name)| (ns.to_string(), name.to_string())),
                "month" | "by" | "tz" | "from" | "to" | "sort" if v.len() <= 40 => {
                    b.report_query.push((k.to_string(), v))
                }
                "lang" => {
                    if let Some(l) = Lang::parse(&v) {
                        (b.lang, b.lang_pinned) = (l, true);
                    }
                }
                _ => {}
            }
        }
        if b.kiosk {
            b.theme = Theme::Dark;
        }
        let whole = std::mem::take(&mut b.view);
        b.take_view(&whole);
        b
    }

    /// Whether the browser hydrates this page: a page that does ([`Page::hydrates`]), unless it
    /// is the paged overview of a large site.
    pub fn hydrates(&self) -> bool {
        #[cfg(not(feature = "hydrate"))]
        if self.sheet.is_some() || self.list.is_some() {
            return false;
        }
        self.page.hydrates()
    }

    /// Whether the page, rendered on the server, refreshes itself (a node's page, the paged
    /// overview) rather than waiting for a reload.
    pub fn refreshes(&self) -> bool {
        matches!(self.page, Page::Node(_))
            || (matches!(self.page, Page::Overview | Page::Pending | Page::Diagnoses) && !self.hydrates())
    }

    /// The page's view from the whole one: only the lists the page shows ([`Boot::lists`]), so
    /// that a live page's first load carries only what it renders (the header counts them from
    /// the totals; the live stream's first full view brings them back before any delta builds
    /// on them), and a server-rendered page copies no list it does not read. A kiosk shows no
    /// scheduler's raw message (its pending cards have no details): none is sent.
    pub fn take_view(&mut self, whole: &ClusterView) {
        self.view = whole.lean(self.lists());
        if self.kiosk {
            for p in self.view.pending.iter_mut().chain(self.view.blocked.iter_mut()) {
                p.message = None;
            }
        }
    }

    /// Which of the view's lists this page shows: the pending list (the pending page, and the
    /// kiosk's overview, which turns into it in place), the diagnoses, the quota tables. The
    /// server copies only those from its view into the page's ([`ClusterView::lean`]).
    pub fn lists(&self) -> (bool, bool, bool) {
        (
            self.page == Page::Pending || (self.kiosk && self.page == Page::Overview),
            self.page == Page::Diagnoses,
            self.page == Page::Quotas,
        )
    }

    /// The query string that keeps the display flags on links (`?embed=1`).
    pub fn keep_query(&self) -> String {
        let mut q = Vec::new();
        if self.kiosk {
            q.push("kiosk=1".to_string());
        }
        if self.embed {
            q.push("embed=1".to_string());
        }
        match self.theme {
            Theme::Dark if !self.kiosk => q.push("theme=dark".into()),
            Theme::Light => q.push("theme=light".into()),
            _ => {}
        }
        if self.lang_pinned {
            q.push(format!("lang={}", self.lang.code()));
        }
        if q.is_empty() {
            String::new()
        } else {
            format!("?{}", q.join("&"))
        }
    }

    /// A link to the overview with its filters, `group` and `page` (the paged overview's links),
    /// keeping the display flags.
    #[cfg(not(feature = "hydrate"))]
    pub fn overview_link(&self, group: Option<&str>, page: u32) -> String {
        let filters = [("ns", self.ns.as_deref()), ("label", self.label.as_deref()), ("group", group)];
        self.paged_link(&format!("{}/", self.base), &filters, page)
    }

    /// `path` with the filters given, `page` (past the first) and the display flags.
    #[cfg(not(feature = "hydrate"))]
    fn paged_link(&self, path: &str, filters: &[(&str, Option<&str>)], page: u32) -> String {
        let mut q: Vec<String> =
            filters.iter().filter_map(|(k, v)| v.map(|v| format!("{k}={}", percent_encode(v)))).collect();
        if page > 1 {
            q.push(format!("page={page}"));
        }
        let flags = self.keep_query();
        if let Some(f) = flags.strip_prefix('?') {
            q.push(f.to_string());
        }
        if q.is_empty() {
            path.to_string()
        } else {
            format!("{path}?{}", q.join("&"))
        }
    }

    /// Whether the pending or diagnoses page was asked for narrowed or past its first page
    /// (`?ns=`, `?code=`, `?page=`): the paged list answers, whatever its length.
    #[cfg(not(feature = "hydrate"))]
    pub fn wants_list(&self) -> bool {
        matches!(self.page, Page::Pending | Page::Diagnoses)
            && (self.ns.is_some() || self.code.is_some() || self.page_no > 1)
    }

    /// A link to this (pending or diagnoses) page with its namespace filter, `code` and `page`
    /// (the paged list's links), keeping the display flags.
    #[cfg(not(feature = "hydrate"))]
    pub fn list_link(&self, code: Option<&str>, page: u32) -> String {
        let path = format!("{}{}", self.base, self.page.path());
        self.paged_link(&path, &[("ns", self.ns.as_deref()), ("code", code)], page)
    }

    /// A link to a page below the base, keeping the display flags.
    pub fn href(&self, path: &str) -> String {
        format!("{}{}{}", self.base, path, self.keep_query())
    }

    /// A link to the reports page with `month` (or the query's `from`/`to`), `by` and `sort`
    /// as given and the query's `tz` kept (the server's page).
    #[cfg(not(feature = "hydrate"))]
    pub fn report_link(&self, month: Option<&str>, by: &str, sort: &str) -> String {
        let q = |k: &str| self.report_query.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
        let mut pairs: Vec<String> = Vec::new();
        match month {
            Some(m) => pairs.push(format!("month={m}")),
            None => {
                for k in ["from", "to"] {
                    if let Some(v) = q(k) {
                        pairs.push(format!("{k}={}", percent_encode(v)));
                    }
                }
            }
        }
        pairs.push(format!("by={by}"));
        if sort != "held" {
            pairs.push(format!("sort={}", percent_encode(sort)));
        }
        if let Some(tz) = q("tz").filter(|t| !t.is_empty()) {
            pairs.push(format!("tz={}", percent_encode(tz)));
        }
        let page = self.href("/reports");
        let sep = if page.contains('?') { '&' } else { '?' };
        format!("{page}{sep}{}", pairs.join("&"))
    }

    /// As [`Boot::href`], for a link that may end in a `#fragment` (the flags go before it).
    pub fn link(&self, link: &str) -> String {
        match link.split_once('#') {
            Some((path, frag)) => format!("{}#{frag}", self.href(path)),
            None => self.href(link),
        }
    }

    /// The boot state as the page embeds it for the bundle: the browser's wire
    /// ([`crate::wire`]), base64 text — no cluster string can close its `<script>` element.
    #[cfg(not(feature = "hydrate"))]
    pub fn to_embedded(&self) -> String {
        crate::wire::to_browser(self.lang, self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_pages() {
        assert_eq!(Page::from_path(""), Page::Overview);
        assert_eq!(Page::from_path("/"), Page::Overview);
        assert_eq!(Page::from_path("/pending"), Page::Pending);
        assert_eq!(Page::from_path("/nodes/orin-nano-01"), Page::Node("orin-nano-01".into()));
        assert_eq!(Page::from_path("/nodes/a%2Fb"), Page::Node("a/b".into()));
        assert_eq!(Page::from_path("/nodes/a/b"), Page::NotFound);
        assert_eq!(Page::from_path("/etc/passwd"), Page::NotFound);
    }

    #[test]
    fn query_flags_parse_and_kiosk_forces_dark() {
        let b = Boot::from_request("/gpu", "/", "kiosk=1&rotate=5&ns=vision", 20, Lang::En, ClusterView::default());
        assert!(b.kiosk && !b.embed);
        assert_eq!((b.theme, b.rotate_seconds, b.ns.as_deref()), (Theme::Dark, 5, Some("vision")));
        assert_eq!(b.href("/pending"), "/gpu/pending?kiosk=1");
        assert_eq!(b.link("/pending#pod-ml-a"), "/gpu/pending?kiosk=1#pod-ml-a");
        // `?lang=` wins over the negotiated language and stays on links; a bad one is ignored.
        let b = Boot::from_request("", "/", "lang=ja-JP", 0, Lang::En, ClusterView::default());
        assert_eq!((b.lang, b.href("/pending").as_str()), (Lang::Ja, "/pending?lang=ja"));
        let b = Boot::from_request("", "/", "lang=fr", 0, Lang::Ja, ClusterView::default());
        assert_eq!((b.lang, b.href("/").as_str()), (Lang::Ja, "/"));
    }

    #[test]
    fn a_live_page_boots_with_only_the_lists_it_shows() {
        let view = ClusterView {
            diagnoses: vec![std::sync::Arc::new(crate::model::Diagnosis::default())],
            pending: vec![crate::model::PendingPod::default()],
            blocked: vec![crate::model::PendingPod::default()],
            quotas: vec![crate::model::QuotaView::default()],
            ..ClusterView::default()
        };
        let lists = |path: &str, query: &str| {
            let b = Boot::from_request("", path, query, 20, Lang::En, view.clone());
            [b.view.diagnoses.len(), b.view.pending.len(), b.view.blocked.len(), b.view.quotas.len()]
        };
        assert_eq!(lists("/", ""), [0, 0, 0, 0]);
        assert_eq!(lists("/", "kiosk=1"), [0, 1, 1, 0], "the kiosk's overview turns into the pending page");
        assert_eq!(lists("/pending", ""), [0, 1, 1, 0]);
        assert_eq!(lists("/diagnoses", ""), [1, 0, 0, 0]);
        // Server-rendered pages too: the quota tables read the quotas, a node's page none.
        assert_eq!(lists("/quotas", ""), [0, 0, 0, 1]);
        assert_eq!(lists("/nodes/a", ""), [0, 0, 0, 0]);
        assert_eq!(lists("/history", ""), [0, 0, 0, 0]);
    }

    #[test]
    fn the_embedded_boot_cannot_close_its_script_element() {
        let mut b = Boot::default();
        b.view.generated_at = "</script><img src=x onerror=alert(1)>&".into();
        let j = b.to_embedded();
        assert!(!j.is_empty() && j.bytes().all(|c| c.is_ascii_alphanumeric() || b"+/=".contains(&c)), "{j}");
        // The string is in it as it is (the browser's build reads it back: tests/tests/browser.rs).
        let bytes = crate::wire::unbase64(&j).unwrap_or_default();
        assert!(bytes.windows(b.view.generated_at.len()).any(|w| w == b.view.generated_at.as_bytes()));
    }

    #[test]
    fn percent_decoding_is_total() {
        for s in ["%", "%4", "%zz", "a%41", "%E2%82", "+", "%\u{e9}", "%a\u{e9}"] {
            let _ = percent_decode(s);
        }
        assert_eq!(percent_decode("a%41"), "aA");
        assert_eq!(percent_encode("a b/<"), "a%20b%2F%3C");
    }
}
