//! `wrench policy check TOOL JSON`: what the permission engine would decide
//! for a call, and why, without running anything.

#![warn(missing_docs)]

use wrench_permissions::Explanation;

/// The explanation as people read it: the planned effects, each rule with
/// whether it matched, the mode, the decision and what would change it.
pub fn render(e: &Explanation) -> String {
    let mut s = format!("call: {} ({}, {} risk)\n", e.tool, e.effect, e.risk);
    if e.effects.is_empty() {
        s.push_str("planned effects: none\n");
    } else {
        s.push_str("planned effects:\n");
        for x in &e.effects {
            s.push_str(&format!("  {x}\n"));
        }
    }
    if e.rules.is_empty() {
        s.push_str("rules: none\n");
    } else {
        s.push_str("rules (deny first, then ask, then allow):\n");
        for r in &e.rules {
            let verdict = match (r.kind, r.matched) {
                ("allow", true) => "covers every effect",
                ("allow", false) => "does not cover every effect",
                (_, true) => "matches",
                (_, false) => "does not match",
            };
            s.push_str(&format!("  {:<5} {}: {verdict}\n", r.kind, r.rule));
        }
    }
    s.push_str(&format!("mode: {}\n", e.mode));
    if e.hooks_not_run {
        s.push_str("pre-hooks: configured for this tool, not run by policy check; they may still block the call\n");
    }
    if e.reason.is_empty() {
        s.push_str(&format!("decision: {}\n", e.decision));
    } else {
        s.push_str(&format!("decision: {}: {}\n", e.decision, e.reason));
    }
    if !e.advice.is_empty() {
        s.push_str(&format!("advice: {}\n", e.advice));
    }
    s
}
