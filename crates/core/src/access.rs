//! Access classes and the batching planner (SPEC §3).
//!
//! `plan_batches` is a pure function: given each call's access (or `None` for an
//! unknown tool, unparseable args or a call a pre-hook blocked), it assigns every
//! call a group index. Groups run in order; the calls of one group run concurrently.

use serde::{Deserialize, Serialize};
use std::path::{Component, Path, PathBuf};

/// What one call touches, as the planner sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", content = "paths", rename_all = "snake_case")]
pub enum Access {
    /// Reads these (normalized) paths.
    ReadPath(Vec<PathBuf>),
    /// Writes these (normalized) paths.
    WritePath(Vec<PathBuf>),
    /// Serializes against everything.
    GlobalWrite,
    /// Batches only with other ParallelBash calls.
    ParallelBash,
    /// Never conflicts (but GlobalWrite still serializes against it).
    Independent,
}

impl Access {
    /// A read of one path, normalized lexically against `root`.
    pub fn read(root: &Path, p: impl AsRef<Path>) -> Access {
        Access::ReadPath(vec![normalize_lexical(root, p.as_ref())])
    }
    /// A write of one path, normalized lexically against `root`.
    pub fn write(root: &Path, p: impl AsRef<Path>) -> Access {
        Access::WritePath(vec![normalize_lexical(root, p.as_ref())])
    }
    /// Short name of the class, as in the contract.
    pub fn class_name(&self) -> &'static str {
        match self {
            Access::ReadPath(_) => "read_path",
            Access::WritePath(_) => "write_path",
            Access::GlobalWrite => "global_write",
            Access::ParallelBash => "parallel_bash",
            Access::Independent => "independent",
        }
    }
}

/// Join `p` onto `root` (unless absolute) and fold `.` and `..` without touching
/// the disk. `..` never climbs above the filesystem root.
pub fn normalize_lexical(root: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => out.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out
}

/// True when one path is a component-wise prefix of the other.
pub fn paths_overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

fn any_overlap(a: &[PathBuf], b: &[PathBuf]) -> bool {
    a.iter().any(|x| b.iter().any(|y| paths_overlap(x, y)))
}

/// Whether two calls must not run in the same group.
pub fn conflicts(a: &Access, b: &Access) -> bool {
    use Access::*;
    match (a, b) {
        (GlobalWrite, _) | (_, GlobalWrite) => true,
        (ParallelBash, ParallelBash) => false,
        (ParallelBash, _) | (_, ParallelBash) => true,
        (Independent, _) | (_, Independent) => false,
        (ReadPath(x), ReadPath(y)) => {
            let _ = (x, y);
            false
        }
        (ReadPath(x), WritePath(y))
        | (WritePath(x), ReadPath(y))
        | (WritePath(x), WritePath(y)) => any_overlap(x, y),
    }
}

/// Assign each call a group index (0-based). `None` marks a call that must run
/// alone (unknown tool, unparseable args, blocked by a pre-hook).
///
/// Placement: each call goes into the group right after the latest group holding
/// a call it conflicts with (group 0 if none). A `None` call, like a GlobalWrite,
/// conflicts with everything, so it sits alone and everything after it waits.
/// Conflicting calls therefore keep their input order.
pub fn plan_batches(accesses: &[Option<Access>]) -> Vec<usize> {
    let mut groups: Vec<usize> = Vec::with_capacity(accesses.len());
    for (i, acc) in accesses.iter().enumerate() {
        let mut g = 0usize;
        for j in 0..i {
            let clash = match (acc, &accesses[j]) {
                (Some(a), Some(b)) => conflicts(a, b),
                _ => true,
            };
            if clash {
                g = g.max(groups[j] + 1);
            }
        }
        groups.push(g);
    }
    groups
}

/// The number of groups in a plan.
pub fn group_count(groups: &[usize]) -> usize {
    groups.iter().copied().max().map_or(0, |m| m + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(p: &str) -> Option<Access> {
        Some(Access::read(Path::new("/w"), p))
    }
    fn w(p: &str) -> Option<Access> {
        Some(Access::write(Path::new("/w"), p))
    }

    #[test]
    fn reads_of_any_paths_share_one_group() {
        assert_eq!(plan_batches(&[r("a"), r("a"), r(".")]), vec![0, 0, 0]);
    }

    #[test]
    fn write_after_read_of_same_file_waits() {
        assert_eq!(plan_batches(&[r("a"), w("a")]), vec![0, 1]);
    }

    #[test]
    fn writes_of_disjoint_files_share_a_group() {
        assert_eq!(plan_batches(&[w("a"), w("b")]), vec![0, 0]);
    }

    #[test]
    fn directory_overlaps_files_below_it() {
        assert_eq!(plan_batches(&[w("src/main.rs"), r("src")]), vec![0, 1]);
        assert_eq!(plan_batches(&[w("x"), r(".")]), vec![0, 1]);
    }

    #[test]
    fn prefix_sibling_is_not_an_overlap() {
        assert_eq!(plan_batches(&[w("src"), r("src-old/a")]), vec![0, 0]);
    }

    #[test]
    fn paths_are_compared_after_normalization() {
        assert_eq!(plan_batches(&[w("src/../x"), r("x")]), vec![0, 1]);
        assert_eq!(plan_batches(&[w("./a/./b"), r("a/b")]), vec![0, 1]);
    }

    #[test]
    fn global_write_conflicts_with_independent_too() {
        let i = Some(Access::Independent);
        let g = Some(Access::GlobalWrite);
        assert_eq!(plan_batches(&[i.clone(), g, i]), vec![0, 1, 2]);
    }

    #[test]
    fn independent_calls_batch_with_reads_and_writes() {
        let i = Some(Access::Independent);
        assert_eq!(
            plan_batches(&[w("a"), i.clone(), r("a"), i]),
            vec![0, 0, 1, 0]
        );
    }

    #[test]
    fn parallel_bash_batches_only_with_parallel_bash() {
        let p = Some(Access::ParallelBash);
        assert_eq!(plan_batches(&[p.clone(), p.clone()]), vec![0, 0]);
        assert_eq!(plan_batches(&[p.clone(), r("a"), p]), vec![0, 1, 2]);
    }

    #[test]
    fn unknown_call_runs_alone_and_keeps_order() {
        assert_eq!(plan_batches(&[r("a"), None, r("b")]), vec![0, 1, 2]);
    }

    #[test]
    fn a_call_goes_right_after_the_latest_group_it_conflicts_with() {
        // c reads y, which nobody writes: it joins group 0 even though b waits.
        assert_eq!(plan_batches(&[w("x"), r("x"), r("y")]), vec![0, 1, 0]);
    }

    fn arb_access() -> impl Strategy<Value = Option<Access>> {
        let path = prop::sample::select(vec!["a", "a/b", "b", ".", "a/../b", "c/d"]);
        prop_oneof![
            path.clone().prop_map(r),
            path.prop_map(w),
            Just(Some(Access::GlobalWrite)),
            Just(Some(Access::ParallelBash)),
            Just(Some(Access::Independent)),
            Just(None),
        ]
    }

    proptest! {
        #[test]
        fn conflicting_calls_never_reorder(calls in prop::collection::vec(arb_access(), 0..24)) {
            let g = plan_batches(&calls);
            for i in 0..calls.len() {
                for j in (i + 1)..calls.len() {
                    let clash = match (&calls[i], &calls[j]) {
                        (Some(a), Some(b)) => conflicts(a, b),
                        _ => true,
                    };
                    if clash {
                        prop_assert!(g[i] < g[j], "call {i} and {j} conflict but groups {} >= {}", g[i], g[j]);
                    }
                }
            }
        }

        #[test]
        fn every_call_is_planned_exactly_once_and_groups_are_dense(calls in prop::collection::vec(arb_access(), 0..24)) {
            let g = plan_batches(&calls);
            prop_assert_eq!(g.len(), calls.len());
            let n = group_count(&g);
            for k in 0..n {
                prop_assert!(g.contains(&k), "group {k} is empty");
            }
        }

        #[test]
        fn no_group_holds_two_conflicting_calls(calls in prop::collection::vec(arb_access(), 0..24)) {
            let g = plan_batches(&calls);
            for i in 0..calls.len() {
                for j in (i + 1)..calls.len() {
                    if g[i] == g[j] {
                        if let (Some(a), Some(b)) = (&calls[i], &calls[j]) {
                            prop_assert!(!conflicts(a, b));
                        } else {
                            prop_assert!(false, "a lone call shares a group");
                        }
                    }
                }
            }
        }
    }
}
