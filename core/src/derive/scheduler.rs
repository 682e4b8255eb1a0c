//! Scheduler messages in every dialect Kubernetes has printed, parsed into a node total and
//! normalised reasons with node counts. Unknown reasons are kept verbatim; counts are never
//! assumed to partition the nodes.

use gpudash_model::model::ReasonCount;

/// A parsed `FailedScheduling` / `PodScheduled=False` message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    /// `N` of `0/N nodes are available`, when the message says it.
    pub nodes_total: Option<u32>,
    /// Reasons in the order the message gives them.
    pub reasons: Vec<ReasonCount>,
}

/// Normalises one reason's wording across Kubernetes versions.
pub fn normalise(reason: &str) -> String {
    let r = reason.trim().trim_end_matches(['.', ',']).trim();
    let lower = r.to_ascii_lowercase();
    if lower.contains("taint") || r == "PodToleratesNodeTaints" || r == "TaintToleration" {
        return "node(s) had untolerated taint(s)".into();
    }
    if lower.contains("didn't match node selector")
        || lower.contains("didn't match pod's node affinity")
        || lower.contains("didn't match node affinity")
        || r == "MatchNodeSelector"
        || r == "NodeAffinity"
    {
        return "node(s) didn't match Pod's node affinity/selector".into();
    }
    if lower == "insufficient pods" || lower == "too many pods" {
        return "Too many pods".into();
    }
    if r == "NodeUnschedulable" || lower.contains("were unschedulable") || lower.contains("node(s) had unschedulable") {
        return "node(s) were unschedulable".into();
    }
    if r == "NodeNotReady" || lower == "node(s) were not ready" {
        return "node(s) were not ready".into();
    }
    if r == "PodFitsHostPorts" || r == "NodePorts" {
        return "node(s) didn't have free ports for the requested pod ports".into();
    }
    // Dynamic Resource Allocation (the scheduler's dynamicresources plugin, 1.26–1.35 wording).
    if let Some(i) = lower.find("device class ") {
        let rest = &r[i + "device class ".len()..];
        if let Some(class) = rest.strip_suffix(" does not exist").or_else(|| rest.split(" does not exist").next()) {
            if lower.contains("does not exist") {
                return format!("DeviceClass {} does not exist", class.trim());
            }
        }
    }
    if lower.contains("cannot allocate all claims") {
        return "cannot allocate all claims".into();
    }
    if lower.contains("resourceclaim not available on the node") {
        return "resourceclaim not available on the node".into();
    }
    if lower.contains("resourceclaim in use") {
        return "resourceclaim in use".into();
    }
    if lower.contains("resourceclaim must be reallocated") {
        return "resourceclaim must be reallocated".into();
    }
    if lower.contains("not created yet") || (lower.contains("resourceclaim") && lower.contains("not found")) {
        return "ResourceClaim not created yet".into();
    }
    if let Some(rest) = r.strip_prefix("insufficient ").or_else(|| r.strip_prefix("Insufficient ")) {
        return format!("Insufficient {}", rest.trim());
    }
    r.to_string()
}

/// Splits at commas outside braces that start a new `<count> <reason>` item.
fn split_counted(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0usize);
    let bytes = s.as_bytes();
    for (i, c) in s.char_indices() {
        match c {
            '{' | '[' | '(' => depth += 1,
            '}' | ']' | ')' => depth -= 1,
            ',' if depth <= 0 => {
                let rest = s[i + 1..].trim_start();
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                if digits > 0 && rest.as_bytes().get(digits) == Some(&b' ') {
                    out.push(&s[start..i]);
                    start = i + 1;
                }
            }
            _ => {}
        }
    }
    let _ = bytes;
    out.push(&s[start..]);
    out
}

/// Cuts the `preemption: …` tail and the DRA / post-filter clauses that precede it.
fn main_part(msg: &str) -> &str {
    let mut m = msg;
    if let Some(i) = m.find("preemption:") {
        m = &m[..i];
    }
    let mut m = m.trim_end();
    loop {
        let before = m;
        for tail in [
            "no new claims to deallocate,",
            "no new claims to deallocate",
            "still not schedulable,",
            "still not schedulable",
            ",",
            ".",
        ] {
            m = m.strip_suffix(tail).unwrap_or(m).trim_end();
        }
        if m == before {
            break;
        }
    }
    m
}

/// A normalised reason in both languages. The English is the scheduler's wording (the
/// derivation matches on it); a reason this table does not know stays verbatim in both, marked
/// so the page can say it is the scheduler's own words.
pub fn reason(en: String, nodes: Option<u32>) -> ReasonCount {
    let ja = match en.as_str() {
        "node(s) had untolerated taint(s)" => Some("Node に許容されない taint があります".to_string()),
        "node(s) didn't match Pod's node affinity/selector" => {
            Some("Node が Pod の node affinity/selector に合いません".to_string())
        }
        "Too many pods" => Some("Pod 数が上限です".to_string()),
        "node(s) were unschedulable" => Some("Node がスケジュール不可です（cordon 済み）".to_string()),
        "node(s) were not ready" => Some("Node が Ready ではありません".to_string()),
        "node(s) didn't have free ports for the requested pod ports" => {
            Some("要求されたポートが Node で空いていません".to_string())
        }
        "cannot allocate all claims" => Some("すべての claim を割り当てられません".to_string()),
        "resourceclaim not available on the node" => Some("ResourceClaim がこの Node では使えません".to_string()),
        "resourceclaim in use" => Some("ResourceClaim が使用中です".to_string()),
        "resourceclaim must be reallocated" => Some("ResourceClaim の再割り当てが必要です".to_string()),
        "ResourceClaim not created yet" => Some("ResourceClaim がまだ作成されていません".to_string()),
        "pod has unbound immediate PersistentVolumeClaims" => {
            Some("Pod にバインドされていない PersistentVolumeClaim があります".to_string())
        }
        "node(s) didn't satisfy existing pods anti-affinity rules" => {
            Some("既存の Pod の anti-affinity ルールを満たしません".to_string())
        }
        e => e
            .strip_prefix("Insufficient ")
            .map(|r| format!("{r} が不足しています"))
            .or_else(|| e.strip_prefix("exceeded quota: ").map(|q| format!("クォータ {q} を超えます")))
            .or_else(|| {
                e.strip_prefix("DeviceClass ")
                    .and_then(|c| c.strip_suffix(" does not exist"))
                    .map(|c| format!("DeviceClass {c} が存在しません"))
            }),
    };
    let verbatim = ja.is_none();
    let ja = ja.unwrap_or_else(|| en.clone());
    ReasonCount { reason: gpudash_model::i18n::Said::pair(en, ja), nodes, verbatim }
}

fn counted(item: &str) -> ReasonCount {
    let item = item.trim();
    let digits = item.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && item.as_bytes().get(digits) == Some(&b' ') {
        let n = item[..digits].parse().ok();
        reason(normalise(&item[digits + 1..]), n)
    } else {
        reason(normalise(item), None)
    }
}

/// `Insufficient cpu (9)` — the ≤1.8 form.
fn parenthesised(item: &str) -> ReasonCount {
    let item = item.trim().trim_end_matches('.');
    if let Some(open) = item.rfind(" (") {
        if let Some(inner) = item[open + 2..].strip_suffix(')') {
            if let Ok(n) = inner.trim().parse() {
                return reason(normalise(&item[..open]), Some(n));
            }
        }
    }
    reason(normalise(item), None)
}

/// Parses a scheduler message. Anything unrecognised becomes a single verbatim reason.
pub fn parse(message: &str) -> Parsed {
    let msg = message.trim();
    if msg.is_empty() {
        return Parsed::default();
    }
    for lead in [
        "No nodes are available that match all of the following predicates::",
        "No nodes are available that match all of the predicates:",
        "No nodes are available that match all of the following predicates:",
    ] {
        if let Some(rest) = msg.strip_prefix(lead) {
            let reasons = rest
                .trim()
                .trim_end_matches('.')
                .split("), ")
                .map(|p| if p.ends_with(')') || !p.contains(" (") { p.to_string() } else { format!("{p})") })
                .filter(|p| !p.trim().is_empty())
                .map(|p| parenthesised(&p))
                .collect();
            return Parsed { nodes_total: None, reasons };
        }
    }
    // `0/N nodes are available: …`
    if let Some((head, rest)) = msg.split_once(':') {
        let head = head.trim();
        let total =
            head.strip_prefix("0/").and_then(|h| h.split_whitespace().next()).and_then(|n| n.parse::<u32>().ok());
        if let Some(total) = total.filter(|_| head.contains("available")) {
            let body = main_part(rest).trim();
            let reasons = if body.is_empty() {
                Vec::new()
            } else {
                split_counted(body).into_iter().filter(|s| !s.trim().is_empty()).map(counted).collect()
            };
            return Parsed { nodes_total: Some(total), reasons };
        }
    }
    Parsed { nodes_total: None, reasons: vec![reason(main_part(msg).to_string(), None)] }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rc(r: &str, nodes: Option<u32>) -> ReasonCount {
        reason(r.into(), nodes)
    }

    const TAINT: &str = "node(s) had untolerated taint(s)";
    const SEL: &str = "node(s) didn't match Pod's node affinity/selector";

    #[test]
    fn real_scheduler_messages_of_every_version_parse_and_normalise() {
        let cases: Vec<(&str, Option<u32>, Vec<ReasonCount>)> = vec![
            // ≤ 1.8
            ("No nodes are available that match all of the following predicates:: Insufficient cpu (9), MatchNodeSelector \
                (1).", None, vec![rc("Insufficient cpu", Some(9)), rc(SEL, Some(1))]),
            ("No nodes are available that match all of the following predicates:: Insufficient nvidia.com/gpu (1).", None, vec![rc("Insufficient \
                nvidia.com/gpu", Some(1))]),
            ("No nodes are available that match all of the following predicates:: PodToleratesNodeTaints (3).", None, vec![rc(TAINT, Some(3))]),
            ("No nodes are available that match all of the following predicates:: Insufficient memory (2), NodeUnschedulable (1), \
                PodToleratesNodeTaints (1).", None, vec![rc("Insufficient memory", Some(2)), rc("node(s) were unschedulable", Some(1)), rc(TAINT, Some(1))]),
            ("No nodes are available that match all of the predicates: Insufficient cpu (2), PodFitsHostPorts (1).", None, vec![rc("Insufficient \
                cpu", Some(2)), rc("node(s) didn't have free ports for the requested pod ports", Some(1))]),
            // 1.9 – 1.15
            ("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", Some(3), vec![rc("Insufficient nvidia.com/gpu", Some(3))]),
            ("0/5 nodes are available: 1 node(s) had taints that the pod didn't tolerate, 4 Insufficient \
                nvidia.com/gpu.", Some(5), vec![rc(TAINT, Some(1)), rc("Insufficient nvidia.com/gpu", Some(4))]),
            ("0/4 nodes are available: 1 node(s) had taint {node-role.kubernetes.io/master: }, that the pod didn't tolerate, 3 node(s) didn't match \
                node selector.", Some(4), vec![rc(TAINT, Some(1)), rc(SEL, Some(3))]),
            ("0/2 nodes are available: 2 MatchNodeSelector.", Some(2), vec![rc(SEL, Some(2))]),
            ("0/2 nodes are available: 1 NodeUnschedulable, 1 PodToleratesNodeTaints.", Some(2), vec![rc("node(s) were \
                unschedulable", Some(1)), rc(TAINT, Some(1))]),
            ("0/1 nodes are available: 1 Insufficient pods.", Some(1), vec![rc("Too many pods", Some(1))]),
            ("0/3 nodes are available: 3 node(s) were not ready.", Some(3), vec![rc("node(s) were not ready", Some(3))]),
            ("0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) had volume node affinity conflict.", Some(3), vec![rc("node(s) were \
                unschedulable", Some(1)), rc("node(s) had volume node affinity conflict", Some(2))]),
            ("0/6 nodes are available: 6 node(s) didn't match pod affinity rules, 6 node(s) didn't match pod \
                affinity/anti-affinity.", Some(6), vec![rc("node(s) didn't match pod affinity rules", Some(6)), rc("node(s) didn't match pod \
                affinity/anti-affinity", Some(6))]),
            // 1.16 – 1.23, including the `..` ending and missing spaces
            ("0/3 nodes are available: 3 Insufficient cpu..", Some(3), vec![rc("Insufficient cpu", Some(3))]),
            ("0/3 nodes are available: 1 Insufficient memory,2 node(s) had taints that the pod didn't tolerate.", Some(3), vec![rc("Insufficient \
                memory", Some(1)), rc(TAINT, Some(2))]),
            ("0/2 nodes are available: 2 Insufficient nvidia.com/gpu, 2 Insufficient cpu..", Some(2), vec![rc("Insufficient \
                nvidia.com/gpu", Some(2)), rc("Insufficient cpu", Some(2))]),
            ("0/3 nodes are available: 1 node(s) had taint {node.kubernetes.io/unreachable: }, that the pod didn't tolerate, 2 node(s) didn't match \
                Pod's node affinity.", Some(3), vec![rc(TAINT, Some(1)), rc(SEL, Some(2))]),
            ("0/1 nodes are available: 1 Insufficient nvidia.com/mig-1g.5gb", Some(1), vec![rc("Insufficient nvidia.com/mig-1g.5gb", Some(1))]),
            ("0/2 nodes are available: 2 insufficient cpu.", Some(2), vec![rc("Insufficient cpu", Some(2))]),
            ("0/4 nodes are available: 4 pod has unbound immediate PersistentVolumeClaims.", Some(4), vec![rc("pod has unbound immediate \
                PersistentVolumeClaims", Some(4))]),
            ("0/2 nodes are available: 1 node(s) didn't have free ports for the requested pod ports, 1 node(s) didn't match node \
                selector.", Some(2), vec![rc("node(s) didn't have free ports for the requested pod ports", Some(1)), rc(SEL, Some(1))]),
            // 1.24+ with preemption
            ("0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming \
                pod.", Some(1), vec![rc("Insufficient nvidia.com/gpu", Some(1))]),
            ("0/6 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 4 \
                node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are available: 1 No preemption victims found for incoming \
                pod, 5 Preemption is not helpful for scheduling.", Some(6), vec![rc("Insufficient \
                nvidia.com/gpu", Some(1)), rc(TAINT, Some(1)), rc(SEL, Some(4))]),
            ("0/3 nodes are available: 3 node(s) had untolerated taint(s). preemption: 0/3 nodes are available: 3 Preemption is not helpful for \
                scheduling.", Some(3), vec![rc(TAINT, Some(3))]),
            ("0/5 nodes are available: 2 Insufficient memory, 3 Too many pods. preemption: 0/5 nodes are available: 5 No preemption victims found for \
                incoming pod..", Some(5), vec![rc("Insufficient memory", Some(2)), rc("Too many pods", Some(3))]),
            ("0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}. preemption: 0/1 nodes are available: 1 Preemption is \
                not helpful for scheduling..", Some(1), vec![rc(TAINT, Some(1))]),
            ("0/2 nodes are available: 1 Insufficient nvidia.com/gpu.shared, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 \
                nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for \
                scheduling.", Some(2), vec![rc("Insufficient nvidia.com/gpu.shared", Some(1)), rc(SEL, Some(1))]),
            // DRA and PreFilter messages
            ("0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not \
                helpful for scheduling.", Some(1), vec![rc("cannot allocate all claims", Some(1))]),
            ("0/1 nodes are available: 1 cannot allocate all claims. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is \
                not helpful for scheduling.", Some(1), vec![rc("cannot allocate all claims", Some(1))]),
            ("0/3 nodes are available: 1 resourceclaim not available on the node, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 \
                nodes are available: 3 Preemption is not helpful for scheduling.", Some(3), vec![rc("resourceclaim not available on the \
                node", Some(1)), rc(SEL, Some(2))]),
            ("0/2 nodes are available: 2 resourceclaim in use. preemption: 0/2 nodes are available: 2 Preemption is not helpful for \
                scheduling.", Some(2), vec![rc("resourceclaim in use", Some(2))]),
            ("0/2 nodes are available: claim line3/detector-0-gpu-k3l9m, request gpu: device class gpu.example.com does not exist. preemption: 0/2 \
                nodes are available: 2 Preemption is not helpful for scheduling.", Some(2), vec![rc("DeviceClass gpu.example.com does not exist", None)]),
            ("0/1 nodes are available: request gpu: device class mig.nvidia.com does not exist.", Some(1), vec![rc("DeviceClass mig.nvidia.com does \
                not exist", None)]),
            ("0/4 nodes are available: waiting for resource claim line3/inspector-0-gpu to be created: ResourceClaim not created \
                yet.", Some(4), vec![rc("ResourceClaim not created yet", None)]),
            ("0/3 nodes are available: persistentvolumeclaim \"model-cache\" not found. preemption: 0/3 nodes are available: 3 Preemption is not \
                helpful for scheduling.", Some(3), vec![rc("persistentvolumeclaim \"model-cache\" not found", None)]),
            ("0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not \
                helpful for scheduling.", Some(2), vec![rc("pod has unbound immediate PersistentVolumeClaims", None)]),
            ("0/1 nodes are available: 1 Insufficient example.com/fpga.v2, 1 Insufficient cpu", Some(1), vec![rc("Insufficient \
                example.com/fpga.v2", Some(1)), rc("Insufficient cpu", Some(1))]),
            ("0/4 nodes are available: 2 node(s) didn't satisfy existing pods anti-affinity rules, 2 node(s) had untolerated taint {dedicated: ml, \
                gpu: a100}.", Some(4), vec![rc("node(s) didn't satisfy existing pods anti-affinity rules", Some(2)), rc(TAINT, Some(2))]),
            // Not the scheduler's grammar at all: kept verbatim.
            ("running PreBind plugin \"VolumeBinding\": binding volumes: timed out waiting for the condition", None, vec![rc("running PreBind plugin \
                \"VolumeBinding\": binding volumes: timed out waiting for the condition", None)]),
            ("skip schedule deleting pod: ml/old", None, vec![rc("skip schedule deleting pod: ml/old", None)]),
        ];
        assert!(cases.len() >= 30);
        for (msg, total, reasons) in cases {
            let p = parse(msg);
            assert_eq!(p.nodes_total, total, "{msg}");
            assert_eq!(p.reasons, reasons, "{msg}");
        }
    }

    #[test]
    fn known_reasons_read_in_japanese_and_unknown_ones_stay_verbatim() {
        let p = parse("0/6 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: \
            }, 4 node(s) didn't match Pod's node affinity/selector.");
        let ja: Vec<&str> = p.reasons.iter().map(|r| r.reason.ja.as_ref()).collect();
        assert_eq!(
            ja,
            [
                "nvidia.com/gpu が不足しています",
                "Node に許容されない taint があります",
                "Node が Pod の node affinity/selector に合いません"
            ]
        );
        assert!(p.reasons.iter().all(|r| !r.verbatim));
        let odd = parse("skip schedule deleting pod: ml/old");
        assert!(odd.reasons[0].verbatim && *odd.reasons[0].reason.ja == *"skip schedule deleting pod: ml/old");
    }

    #[test]
    fn empty_messages_have_no_reasons() {
        assert_eq!(parse(""), Parsed::default());
        assert_eq!(parse("0/3 nodes are available: ").reasons, vec![]);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_messages_never_panic(s in ".{0,200}") {
            let _ = parse(&s);
        }

        #[test]
        fn message_shaped_input_never_panics(n in 0u32..99, body in "[0-9a-zA-Z ,.:{}()/'-]{0,120}") {
            let _ = parse(&format!("0/{n} nodes are available: {body}"));
            let _ = parse(&format!("No nodes are available that match all of the following predicates:: {body}"));
        }
    }
}
