//! Unified diffs of changed files (the `diff` of every Edit output), as git
//! writes them: `--- a/P`, `+++ b/P`, hunks with [`DIFF_CONTEXT_LINES`] of
//! context, `\ No newline at end of file` after a last line without one.
//!
//! [`file_diff`] diffs two whole texts (Myers, through `similar`).
//! [`file_diff_kept`] is for callers that already know which lines they kept
//! — apply_patch knows where each hunk landed: only the stretches between
//! kept lines are diffed, so a 5,000-line file with twenty hunks costs twenty
//! small diffs instead of one over the whole file. Every claimed pair is
//! checked to be byte-equal before it is used, so the result is always a
//! correct diff of `old` to `new` whatever the claim.

use similar::{Algorithm, DiffOp, DiffTag};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Lines of context around each change.
pub const DIFF_CONTEXT_LINES: usize = 3;

/// The unified diff of one file and its line counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileDiff {
    /// The unified diff (`---`/`+++` headers and hunks); empty when equal.
    pub text: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The diff reached [`RESULT_DIFF_DEADLINE`] and is coarser than the
    /// smallest one (still a correct diff: it may show more lines changed).
    pub coarse: bool,
}

/// Most time the diff of one result may take (it runs under the workspace
/// write lock): past it, Myers settles for a coarser, still correct, diff
/// and [`FileDiff::coarse`] says so.
pub const RESULT_DIFF_DEADLINE: Duration = Duration::from_millis(500);

/// What a result says after a coarse diff.
pub const COARSE_NOTE: &str = "the diff was cut at its time limit and is coarser than the smallest one (it may show unchanged lines as removed and added); read the file to see it exactly";

/// Unified diff of two whole texts.
pub fn file_diff(old_name: &str, new_name: &str, old: &str, new: &str) -> FileDiff {
    file_diff_within(old_name, new_name, old, new, RESULT_DIFF_DEADLINE)
}

/// [`file_diff`] with its own time limit.
pub fn file_diff_within(
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    limit: Duration,
) -> FileDiff {
    let deadline = Instant::now().checked_add(limit);
    let d = similar::TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .deadline(deadline.unwrap_or_else(Instant::now))
        .diff_lines(old, new);
    let coarse = deadline.is_none_or(|t| Instant::now() >= t);
    let text = d
        .unified_diff()
        .context_radius(DIFF_CONTEXT_LINES)
        .header(&format!("a/{old_name}"), &format!("b/{new_name}"))
        .to_string();
    let (added, removed) = counts(d.ops());
    FileDiff {
        text,
        added,
        removed,
        coarse,
    }
}

/// Unified diff of `old` → `new` where `kept` lists runs (old line, new
/// line, count), both increasing, that the caller kept unchanged (0-based,
/// lines ending at `\n`). Runs that are out of order, out of range or not
/// byte-equal are ignored; the stretches between the rest are diffed with
/// Myers.
pub fn file_diff_kept(
    old_name: &str,
    new_name: &str,
    old: &str,
    new: &str,
    kept: &[(usize, usize, usize)],
) -> FileDiff {
    let (a, b) = (split_keep_eol(old), split_keep_eol(new));
    let deadline = Instant::now().checked_add(RESULT_DIFF_DEADLINE);
    let mut ops: Vec<DiffOp> = Vec::new();
    let (mut oi, mut ni) = (0usize, 0usize);
    for &(o, n, len) in kept {
        if len == 0
            || o < oi
            || n < ni
            || o + len > a.len()
            || n + len > b.len()
            || span(old, &a[o..o + len]).is_none()
            || span(old, &a[o..o + len]) != span(new, &b[n..n + len])
        {
            continue;
        }
        diff_stretch(&a, &b, oi..o, ni..n, deadline, &mut ops);
        push_op(
            &mut ops,
            DiffOp::Equal {
                old_index: o,
                new_index: n,
                len,
            },
        );
        oi = o + len;
        ni = n + len;
    }
    diff_stretch(&a, &b, oi..a.len(), ni..b.len(), deadline, &mut ops);
    let coarse = deadline.is_none_or(|t| Instant::now() >= t);
    let (added, removed) = counts(&ops);
    let mut text = String::with_capacity(64 * (added + removed) + 128);
    for (k, group) in similar::group_diff_ops(ops, DIFF_CONTEXT_LINES)
        .iter()
        .enumerate()
    {
        if k == 0 {
            let _ = write!(text, "--- a/{old_name}\n+++ b/{new_name}\n");
        }
        render_hunk(&mut text, group, &a, &b);
    }
    FileDiff {
        text,
        added,
        removed,
        coarse,
    }
}

/// Lines of `s`, each with its `\n` (the last may have none).
fn split_keep_eol(s: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(s.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', s.as_bytes()) {
        out.push(&s[start..=i]);
        start = i + 1;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

/// The text of consecutive `lines` of `text` (slices of it, as
/// [`split_keep_eol`] makes them), found from their addresses.
fn span<'t>(text: &'t str, lines: &[&str]) -> Option<&'t str> {
    let (first, last) = (lines.first()?, lines.last()?);
    let base = text.as_ptr() as usize;
    let start = (first.as_ptr() as usize).checked_sub(base)?;
    let end = (last.as_ptr() as usize).checked_sub(base)? + last.len();
    text.get(start..end)
}

/// Added and removed line counts of diff ops.
fn counts(ops: &[DiffOp]) -> (usize, usize) {
    ops.iter().fold((0, 0), |(a, r), op| {
        (
            a + op.new_range().len() * usize::from(op.tag() != DiffTag::Equal),
            r + op.old_range().len() * usize::from(op.tag() != DiffTag::Equal),
        )
    })
}

/// Append `op`, merging it into the previous op when both are equal runs
/// that touch (so grouping sees one run, as with a whole-file diff).
fn push_op(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let (
        Some(DiffOp::Equal {
            old_index,
            new_index,
            len,
        }),
        DiffOp::Equal {
            old_index: o,
            new_index: n,
            len: l,
        },
    ) = (ops.last_mut(), op)
        && *old_index + *len == o
        && *new_index + *len == n
    {
        *len += l;
        return;
    }
    ops.push(op);
}

/// Diff `a[old]` against `b[new]` and append the ops (absolute indices).
fn diff_stretch(
    a: &[&str],
    b: &[&str],
    old: std::ops::Range<usize>,
    new: std::ops::Range<usize>,
    deadline: Option<Instant>,
    ops: &mut Vec<DiffOp>,
) {
    if old.is_empty() && new.is_empty() {
        return;
    }
    if old.is_empty() {
        ops.push(DiffOp::Insert {
            old_index: old.start,
            new_index: new.start,
            new_len: new.len(),
        });
        return;
    }
    if new.is_empty() {
        ops.push(DiffOp::Delete {
            old_index: old.start,
            old_len: old.len(),
            new_index: new.start,
        });
        return;
    }
    for op in similar::capture_diff_slices_deadline(
        Algorithm::Myers,
        &a[old.clone()],
        &b[new.clone()],
        deadline,
    ) {
        push_op(ops, shift(op, old.start, new.start));
    }
}

fn shift(op: DiffOp, o: usize, n: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + o,
            new_index: new_index + n,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + o,
            new_index: new_index + n,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + o,
            old_len,
            new_index: new_index + n,
            new_len,
        },
    }
}

/// Append `start,len` of a hunk header as git and `similar` write it
/// (`start` alone for one line; an empty range starts at the line before).
fn push_range(out: &mut String, start: usize, end: usize) {
    let len = end.saturating_sub(start);
    let _ = match len {
        1 => write!(out, "{}", start + 1),
        0 => write!(out, "{start},0"),
        _ => write!(out, "{},{len}", start + 1),
    };
}

fn render_hunk(out: &mut String, group: &[DiffOp], a: &[&str], b: &[&str]) {
    let (Some(first), Some(last)) = (group.first(), group.last()) else {
        return;
    };
    out.push_str("@@ -");
    push_range(out, first.old_range().start, last.old_range().end);
    out.push_str(" +");
    push_range(out, first.new_range().start, last.new_range().end);
    out.push_str(" @@\n");
    let mut line = |tag: char, l: &str| {
        out.push(tag);
        out.push_str(l);
        if !l.ends_with('\n') {
            out.push_str("\n\\ No newline at end of file\n");
        }
    };
    for op in group {
        match op.tag() {
            DiffTag::Equal => a[op.old_range()].iter().for_each(|l| line(' ', l)),
            DiffTag::Delete => a[op.old_range()].iter().for_each(|l| line('-', l)),
            DiffTag::Insert => b[op.new_range()].iter().for_each(|l| line('+', l)),
            DiffTag::Replace => {
                a[op.old_range()].iter().for_each(|l| line('-', l));
                b[op.new_range()].iter().for_each(|l| line('+', l));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every claimed line kept (as apply_patch would claim them).
    fn kept_by_prefix_suffix(old: &str, new: &str) -> Vec<(usize, usize, usize)> {
        let (a, b) = (split_keep_eol(old), split_keep_eol(new));
        let mut v = Vec::new();
        let mut i = 0;
        while i < a.len() && i < b.len() && a[i] == b[i] {
            v.push((i, i, 1));
            i += 1;
        }
        let (mut x, mut y) = (a.len(), b.len());
        let mut tail = Vec::new();
        while x > i && y > i && a[x - 1] == b[y - 1] {
            x -= 1;
            y -= 1;
            tail.push((x, y, 1));
        }
        v.extend(tail.into_iter().rev());
        v
    }

    #[test]
    fn kept_diff_matches_the_whole_file_diff() {
        let old: String = (0..40).map(|i| format!("line {i}\n")).collect();
        for (o, n) in [
            (old.clone(), old.replace("line 7\n", "seven\n")),
            (old.clone(), old.replace("line 7\n", "")),
            (old.clone(), old.replace("line 7\n", "line 7\nnew\n")),
            (
                old.clone(),
                old.replace("line 3\n", "x\n").replace("line 9\n", "y\n"),
            ),
            (
                old.clone(),
                old.replace("line 3\n", "x\n").replace("line 30\n", "y\n"),
            ),
            ("a\nb".to_string(), "a\nc".to_string()),
            ("a\nb".to_string(), "a\nb\n".to_string()),
            ("a\nb\n".to_string(), "a\nb".to_string()),
            ("".to_string(), "x\ny\n".to_string()),
            ("x\ny\n".to_string(), "".to_string()),
            ("a\r\nb\r\n".to_string(), "a\r\nB\r\n".to_string()),
            (old.clone(), old.clone()),
        ] {
            let whole = file_diff("f", "f", &o, &n);
            let kept = file_diff_kept("f", "f", &o, &n, &kept_by_prefix_suffix(&o, &n));
            assert_eq!(kept, whole, "{o:?} -> {n:?}");
            let mut runs: Vec<(usize, usize, usize)> = Vec::new();
            for (x, y, _) in kept_by_prefix_suffix(&o, &n) {
                match runs.last_mut() {
                    Some((a, b, l)) if *a + *l == x && *b + *l == y => *l += 1,
                    _ => runs.push((x, y, 1)),
                }
            }
            let merged = file_diff_kept("f", "f", &o, &n, &runs);
            assert_eq!(merged, whole, "{o:?} -> {n:?}");
            let none = file_diff_kept("f", "f", &o, &n, &[]);
            assert_eq!(none, whole, "{o:?} -> {n:?}");
        }
    }

    #[test]
    fn lines_split_at_every_newline() {
        for s in [
            "",
            "a",
            "\n",
            "abcdefgh\nij\n\nklmnopqrstuvwxyz",
            "1234567\n1234567\n",
            "é\r\n“q”\n",
        ] {
            let want: Vec<&str> = s.split_inclusive('\n').collect();
            assert_eq!(split_keep_eol(s), want, "{s:?}");
        }
    }

    #[test]
    fn wrong_claims_are_ignored() {
        let (o, n) = ("a\nb\nc\n", "a\nB\nc\n");
        let whole = file_diff("f", "f", o, n);
        for claim in [
            vec![(1, 1, 1)],
            vec![(2, 2, 1), (0, 0, 1)],
            vec![(0, 0, 1), (9, 9, 1)],
            vec![(0, 2, 1)],
            vec![(0, 0, 3)],
            vec![(0, 0, 2), (2, 2, 2)],
            vec![(0, 0, 0)],
        ] {
            assert_eq!(file_diff_kept("f", "f", o, n, &claim), whole, "{claim:?}");
        }
    }

    #[test]
    fn lines_starting_with_dashes_are_counted() {
        let d = file_diff_kept("f", "f", "-- a\nx\n", "++ b\nx\n", &[(1, 1, 1)]);
        assert_eq!((d.added, d.removed), (1, 1));
        assert!(d.text.contains("\n--- a\n+++ b\n"), "{}", d.text);
    }

    #[test]
    fn a_diff_past_its_time_limit_is_coarse_but_correct() {
        let old: String = (0..200).map(|i| format!("a{i}\n")).collect();
        let new: String = (0..200).map(|i| format!("b{i}\n")).collect();
        let d = file_diff_within("f", "f", &old, &new, Duration::ZERO);
        assert!(d.coarse);
        assert_eq!((d.added, d.removed), (200, 200));
        let fine = file_diff_within("f", "f", "a\n", "b\n", Duration::from_secs(3600));
        assert!(!fine.coarse);
    }
}
