//! The V4A patch format of `apply_patch`: parser and hunk applier.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path            (then `+` lines)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path         (optional)
//! @@ fn anchor()                (optional context headers; several narrow further)
//!  context
//! -removed
//! +added
//! *** End of File               (optional: pins the hunk to the end)
//! *** End Patch
//! ```
//!
//! Lenient where models slip without ambiguity: marker lines may be padded
//! with whitespace, the patch may be wrapped in a heredoc (`<<'EOF'` … `EOF`,
//! also `apply_patch <<EOF`), a CRLF patch is read as LF, the first hunk of an
//! Update may omit `@@`. Hunks are located in file order with the edit
//! engine's tiers (exact, trailing whitespace, indentation shift or unit,
//! Unicode look-alikes, then any indentation per line), each at exactly one
//! place after its anchors, else the patch is refused naming every place.
//! Context lines keep the file's bytes; changed and added lines are adapted
//! to the file as `edit` adapts them (the copied-lines rule of the engine).

use crate::engine::{
    Adapter, IndentMap, Line, Step, Tier, Units, dominant_eol, drift, split_lines, window_map,
};
use std::borrow::Cow;

/// Line comparison for `@@` anchors: like the engine's, but the last rung
/// (Unicode look-alikes) also ignores leading whitespace.
fn line_eq(tier: Tier, f: &str, p: &str) -> bool {
    match tier {
        Tier::Unicode => crate::engine::line_eq(Tier::Unicode, f.trim_start(), p.trim_start()),
        t => crate::engine::line_eq(t, f, p),
    }
}
use wrench_core::{ToolError, ToolResult};

/// A parsed patch: slices of the patch text (parsing copies no line; only
/// a unified diff's C-quoted path is unescaped into an owned string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch<'a> {
    /// The file operations, in the order written.
    pub ops: Vec<Op<'a>>,
}

/// One file operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op<'a> {
    /// Create a file (`*** Add File`, or a diff from `/dev/null`).
    Add {
        /// Workspace path of the new file, as written in the patch.
        path: Cow<'a, str>,
        /// Its lines, without endings.
        lines: Vec<&'a str>,
        /// The new file ends with a newline (a unified diff's `\ No newline
        /// at end of file` after its last line says it does not).
        final_newline: bool,
    },
    /// Delete a file (`*** Delete File`, or a diff to `/dev/null`).
    Delete {
        /// Workspace path of the file, as written in the patch.
        path: Cow<'a, str>,
    },
    /// Change a file's lines, and optionally move it (`*** Update File`,
    /// `*** Move to`; a unified diff's hunks and rename).
    Update {
        /// Workspace path of the file, as written in the patch.
        path: Cow<'a, str>,
        /// Where the file moves to, if it does.
        move_to: Option<Cow<'a, str>>,
        /// The hunks, in file order.
        chunks: Vec<Chunk<'a>>,
    },
}

impl Op<'_> {
    /// The path the operation reads or creates (a move's source).
    pub fn path(&self) -> &str {
        match self {
            Op::Add { path, .. } | Op::Delete { path } | Op::Update { path, .. } => path,
        }
    }
}

/// One `@@` hunk of an Update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk<'a> {
    /// `@@ text` headers, outermost first.
    pub anchors: Vec<&'a str>,
    /// The hunk's lines: context, removed and added, in order.
    pub lines: Vec<HunkLine<'a>>,
    /// `*** End of File`: the hunk ends at the end of the file.
    pub eof: bool,
    /// 1-based line of the patch where the hunk starts.
    pub at: usize,
    /// A unified diff's `@@ -START`: the 0-based line of the old file where
    /// the hunk's old lines were (a hint for choosing among candidates).
    pub line_hint: Option<usize>,
    /// A unified diff's `\ No newline at end of file` markers: whether the
    /// new text ends with a newline (set on the hunk that says so).
    pub final_newline: Option<bool>,
}

/// One line of a hunk, without its prefix character or line ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine<'a> {
    /// ` ` line: must be in the file, kept.
    Context(&'a str),
    /// `-` line: must be in the file, removed.
    Remove(&'a str),
    /// `+` line: inserted.
    Add(&'a str),
}

fn bad(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::invalid_args(format!(
        "patch line {line}: {msg}. The format is `*** Begin Patch`, then `*** Add File: P` / `*** Update File: P` / `*** Delete File: P` sections, then `*** End Patch`"
    ))
}

/// The body of a heredoc-wrapped patch (`<<'EOF'` … `EOF`).
fn unwrap_heredoc(lines: &[&str]) -> Option<(usize, usize)> {
    let first = lines.iter().position(|l| !l.trim().is_empty())?;
    let last = lines.iter().rposition(|l| !l.trim().is_empty())?;
    let opener = lines[first].trim();
    let opener = opener
        .strip_prefix("apply_patch")
        .map(str::trim_start)
        .unwrap_or(opener);
    let rest = opener.strip_prefix("<<")?;
    let rest = rest.strip_prefix('-').unwrap_or(rest).trim();
    let word = rest.trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || !word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    (last > first && lines[last].trim() == word).then_some((first + 1, last))
}

/// Parse a patch: V4A, or a unified diff (`git diff`, `diff -u`; see
/// [`crate::unified`]), told apart by their first lines. Errors are
/// `invalid_args` naming the patch line.
pub fn parse(text: &str) -> ToolResult<Patch<'_>> {
    if crate::unified::is_unified(text) {
        return crate::unified::parse(text);
    }
    let mut all: Vec<&str> =
        Vec::with_capacity(memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', text.as_bytes()).chain(std::iter::once(text.len())) {
        // '\n' is ASCII: both ends are char boundaries.
        let l = text.get(start..i).unwrap_or_default();
        all.push(l.strip_suffix('\r').unwrap_or(l));
        start = i + 1;
    }
    let (lo, hi) = unwrap_heredoc(&all).unwrap_or((0, all.len()));
    let lines = &all[lo..hi];
    let num = |i: usize| lo + i + 1;
    let Some(begin) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return Err(bad(1, "the patch is empty"));
    };
    if lines[begin].trim() != "*** Begin Patch" {
        return Err(bad(
            num(begin),
            "the first line must be `*** Begin Patch` (or send a unified diff: `diff --git a/P b/P` or `--- a/P` and `+++ b/P` lines, then `@@` hunks)",
        ));
    }
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .unwrap_or(begin);
    if end == begin || lines[end].trim() != "*** End Patch" {
        return Err(bad(num(end), "the last line must be `*** End Patch`"));
    }
    let mut ops: Vec<Op> = Vec::new();
    let mut i = begin + 1;
    while i < end {
        let raw = lines[i];
        let l = raw.trim();
        if l.is_empty() {
            i += 1;
            continue;
        }
        if let Some(p) = l.strip_prefix("*** Add File:") {
            let path = nonempty_path(p, num(i))?;
            i += 1;
            let mut content = Vec::new();
            while i < end && !is_marker(lines[i]) {
                match lines[i].strip_prefix('+') {
                    Some(c) => content.push(c),
                    None => {
                        return Err(bad(
                            num(i),
                            format!(
                                "every line of an Add File section starts with `+` (adding {path})"
                            ),
                        ));
                    }
                }
                i += 1;
            }
            ops.push(Op::Add {
                path: path.into(),
                lines: content,
                final_newline: true,
            });
        } else if let Some(p) = l.strip_prefix("*** Delete File:") {
            ops.push(Op::Delete {
                path: nonempty_path(p, num(i))?.into(),
            });
            i += 1;
        } else if let Some(p) = l.strip_prefix("*** Update File:") {
            let path = nonempty_path(p, num(i))?;
            let header = num(i);
            i += 1;
            let mut move_to = None;
            if i < end
                && let Some(m) = lines[i].trim().strip_prefix("*** Move to:")
            {
                move_to = Some(nonempty_path(m, num(i))?.into());
                i += 1;
            }
            let mut chunks: Vec<Chunk> = Vec::new();
            let mut cur: Option<Chunk> = None;
            while i < end {
                let raw = lines[i];
                let t = raw.trim();
                if t == "*** End of File" {
                    let mut c = cur.take().unwrap_or_default();
                    if c.lines.is_empty() {
                        return Err(bad(num(i), "`*** End of File` follows no hunk lines"));
                    }
                    c.eof = true;
                    chunks.push(c);
                    i += 1;
                    continue;
                }
                if is_marker(raw) {
                    break;
                }
                if t == "@@" || t.starts_with("@@ ") {
                    let anchor = t
                        .trim_start_matches('@')
                        .trim()
                        .trim_end_matches('@')
                        .trim();
                    match &mut cur {
                        Some(c) if c.lines.is_empty() => {
                            if !anchor.is_empty() {
                                c.anchors.push(anchor);
                            }
                        }
                        _ => {
                            if let Some(c) = cur.take() {
                                chunks.push(c);
                            }
                            cur = Some(Chunk {
                                anchors: if anchor.is_empty() {
                                    vec![]
                                } else {
                                    vec![anchor]
                                },
                                at: num(i),
                                ..Chunk::default()
                            });
                        }
                    }
                    i += 1;
                    continue;
                }
                let hl = match raw.chars().next() {
                    Some(' ') => HunkLine::Context(&raw[1..]),
                    Some('-') => HunkLine::Remove(&raw[1..]),
                    Some('+') => HunkLine::Add(&raw[1..]),
                    None => HunkLine::Context(""),
                    Some(_) => {
                        return Err(bad(
                            num(i),
                            format!(
                                "in the Update of {path}, hunk lines start with ` ` (context), `-` (remove) or `+` (add), and hunks with `@@`; got {:?}",
                                raw.chars().take(60).collect::<String>()
                            ),
                        ));
                    }
                };
                cur.get_or_insert_with(|| Chunk {
                    at: num(i),
                    ..Chunk::default()
                })
                .lines
                .push(hl);
                i += 1;
            }
            if let Some(c) = cur.take() {
                chunks.push(c);
            }
            chunks.retain(|c| !c.lines.is_empty() || !c.anchors.is_empty());
            if chunks.iter().all(|c| c.lines.is_empty()) && move_to.is_none() {
                return Err(bad(
                    header,
                    format!("the Update of {path} has no hunk lines"),
                ));
            }
            ops.push(Op::Update {
                path: path.into(),
                move_to,
                chunks,
            });
        } else {
            return Err(bad(
                num(i),
                format!(
                    "{:?} is not a valid section header (use `*** Add File:`, `*** Update File:` or `*** Delete File:`)",
                    l.chars().take(60).collect::<String>()
                ),
            ));
        }
    }
    if ops.is_empty() {
        return Err(bad(num(begin), "the patch has no file operations"));
    }
    one_section_per_path(ops)
}

/// The patch of `ops`, refused when two of them name the same path.
pub(crate) fn one_section_per_path(ops: Vec<Op<'_>>) -> ToolResult<Patch<'_>> {
    let mut seen = std::collections::HashSet::new();
    for op in &ops {
        if !seen.insert(op.path().to_string()) {
            return Err(ToolError::invalid_args(format!(
                "the patch has two sections for {}; merge them into one",
                op.path()
            )));
        }
    }
    Ok(Patch { ops })
}

/// The final-newline state a unified diff asks for (its last `\ No newline
/// at end of file` marker), None for V4A (the file's own state is kept).
pub fn final_newline(chunks: &[Chunk<'_>]) -> Option<bool> {
    chunks.iter().rev().find_map(|c| c.final_newline)
}

/// Apply an Update's hunks ([`apply_chunks`]) and give the result the
/// final-newline state a unified diff asks for ([`final_newline`]; V4A
/// keeps the file's). To gain one, the hunks go onto `old` with it (the
/// ending its lines mostly use), so the applier, which keeps the state of
/// the text it is given, ends every line, an inserted empty last one too;
/// to lose one, the result's last ending is cut.
pub fn apply_update(old: &str, chunks: &[Chunk<'_>], what: &str) -> ToolResult<UpdateResult> {
    let want = final_newline(chunks);
    let base: Cow<'_, str> = match want {
        Some(true) if !old.is_empty() && !old.ends_with('\n') => {
            let eol = dominant_eol(&split_lines(old));
            Cow::Owned(format!(
                "{old}{}",
                if eol == "\r\n" { "\r\n" } else { "\n" }
            ))
        }
        _ => Cow::Borrowed(old),
    };
    let mut r = apply_chunks(&base, chunks, what)?;
    // The last line is never an empty one here (that would be no line).
    if want == Some(false) && r.text.ends_with('\n') {
        r.text.pop();
        if r.text.ends_with('\r') {
            r.text.pop();
        }
    }
    Ok(r)
}

fn is_marker(raw: &str) -> bool {
    let t = raw.trim_start();
    t.starts_with("*** ") && !t.starts_with("*** End of File")
}

fn nonempty_path(p: &str, line: usize) -> ToolResult<&str> {
    let p = p.trim();
    if p.is_empty() {
        return Err(bad(line, "the section names no path"));
    }
    Ok(p)
}

/// The tiers hunks are located with, in order: the edit engine's line
/// tiers, then any indentation per line (look-alikes folded).
pub const HUNK_TIERS: [Tier; 5] = [
    Tier::Exact,
    Tier::TrailingWhitespace,
    Tier::Indentation,
    Tier::Unicode,
    Tier::AllWhitespace,
];

/// Where a hunk's old lines match from `from` on, at the strictest tier
/// that matches anywhere, with how indentation maps at each place (every
/// place, overlapping ones too: more than one is ambiguous). With `eof`
/// (`*** End of File`), only a match ending at the file's last line counts.
pub fn locate(
    lines: &[Line<'_>],
    pat: &[&str],
    from: usize,
    eof: bool,
    units: Units,
) -> Option<(Vec<(usize, IndentMap)>, Tier)> {
    if pat.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pat.len();
    for tier in HUNK_TIERS {
        let at = |i: usize| window_map(&lines[i..i + pat.len()], pat, tier, units);
        // `*** End of File`: the hunk matches at the end or not at all.
        if eof {
            if last_start >= from
                && let Some(m) = at(last_start)
            {
                return Some((vec![(last_start, m)], tier));
            }
            continue;
        }
        let found: Vec<(usize, IndentMap)> = (from..=last_start)
            .filter_map(|i| at(i).map(|m| (i, m)))
            .collect();
        if !found.is_empty() {
            return Some((found, tier));
        }
    }
    None
}

/// First position ≥ `from` where `pat` matches, at the strictest tier that
/// matches anywhere; with `eof`, the end of the file is tried first.
pub fn seek(lines: &[Line<'_>], pat: &[&str], from: usize, eof: bool) -> Option<(usize, Tier)> {
    let units = Units::of(&[&pat.join("\n")], lines);
    locate(lines, pat, from, eof, units).map(|(v, t)| (v[0].0, t))
}

/// How a result line comes about.
enum Out {
    /// `len` old lines from `from` on, unchanged.
    Keep(usize, usize),
    /// A changed line, and the ending of the line it replaces.
    Changed(String, usize),
    Insert(String),
}

/// Keep old lines `from..from + len`, extending the previous run when it
/// ends right there.
fn keep(out: &mut Vec<Out>, from: usize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(Out::Keep(f, l)) = out.last_mut()
        && *f + *l == from
    {
        *l += len;
        return;
    }
    out.push(Out::Keep(from, len));
}

/// The steps of a hunk: context lines copy the file's, a run of removed
/// lines followed by added ones pairs up as changed lines, other added
/// lines are inserted.
fn hunk_steps(hunk: &[HunkLine]) -> Vec<Step> {
    let mut out = Vec::with_capacity(hunk.len());
    let (mut i, mut j) = (0usize, 0usize);
    let mut k = 0;
    while k < hunk.len() {
        match hunk[k] {
            HunkLine::Context(_) => {
                out.push(Step::Copy(i, j));
                i += 1;
                j += 1;
                k += 1;
            }
            HunkLine::Remove(_) => {
                let removed = hunk[k..]
                    .iter()
                    .take_while(|l| matches!(l, HunkLine::Remove(_)))
                    .count();
                let added = hunk[k + removed..]
                    .iter()
                    .take_while(|l| matches!(l, HunkLine::Add(_)))
                    .count();
                for t in 0..added {
                    out.push(if t < removed {
                        Step::Change(i + t, j + t)
                    } else {
                        Step::Insert(j + t)
                    });
                }
                i += removed;
                j += added;
                k += removed + added;
            }
            HunkLine::Add(_) => {
                out.push(Step::Insert(j));
                j += 1;
                k += 1;
            }
        }
    }
    out
}

/// What applying an Update's hunks did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateResult {
    /// The whole new text of the file.
    pub text: String,
    /// The most lenient tier any hunk needed.
    pub tier: Tier,
    /// (old line, new line, count) of every run of lines kept as they
    /// were, in order: the hint [`crate::diff::file_diff_kept`] diffs around.
    pub kept: Vec<(usize, usize, usize)>,
    /// What a recovery tier adapted to the file.
    pub adapted: Vec<String>,
}

/// Apply the hunks of one Update to `text` (in file order, all or none).
/// Every hunk must be located at exactly one place after its anchors and
/// the previous hunk; else the whole Update is refused, naming each place.
pub fn apply_chunks<'t>(
    text: &'t str,
    chunks: &'t [Chunk],
    what: &str,
) -> ToolResult<UpdateResult> {
    let lines = split_lines(text);
    // Hunks are located on the file as `read` shows it (secrets masked, the
    // same lines): no answer depends on a secret's text, and a hunk whose
    // lines touch one is refused.
    let masked = crate::engine::Masked::of(text);
    let seen = split_lines(masked.view());
    let dominant = dominant_eol(&lines);
    let final_nl = text.is_empty() || text.ends_with('\n');
    let mut out: Vec<Out> = Vec::with_capacity(lines.len() + 16);
    let mut cursor = 0usize;
    let mut worst = Tier::Exact;
    let mut adapted: Vec<String> = Vec::new();
    let mut folded = 0usize;
    for (n, c) in chunks.iter().enumerate() {
        let mut from = cursor;
        for a in &c.anchors {
            let hit = [
                Tier::Exact,
                Tier::TrailingWhitespace,
                Tier::AllWhitespace,
                Tier::Unicode,
            ]
            .iter()
            .find_map(|&t| {
                (from..seen.len())
                    .find(|&i| line_eq(t, seen[i].text, a))
                    .map(|i| (i, t))
            });
            match hit {
                Some((i, t)) => {
                    worst = worst.max(t);
                    from = i + 1;
                }
                None => {
                    return Err(ToolError::no_match(format!(
                        "hunk {} (patch line {}) of {what}: the context header `@@ {a}` was not found from line {} on; copy it from the file",
                        n + 1,
                        c.at,
                        from + 1
                    )));
                }
            }
        }
        let mut hunk: &[HunkLine] = &c.lines;
        let old_of = |h: &'t [HunkLine]| -> Vec<&'t str> {
            h.iter()
                .filter_map(|l| match l {
                    HunkLine::Context(s) | HunkLine::Remove(s) => Some(*s),
                    HunkLine::Add(_) => None,
                })
                .collect()
        };
        let all: Vec<&str> = hunk
            .iter()
            .map(|l| match l {
                HunkLine::Context(s) | HunkLine::Remove(s) | HunkLine::Add(s) => *s,
            })
            .collect();
        let units = Units::of(&[&all.join("\n")], &lines);
        let mut old = old_of(hunk);
        let (pos, map) = if old.is_empty() {
            let p = if c.anchors.is_empty() {
                lines.len()
            } else {
                from
            };
            (p, IndentMap::Same)
        } else {
            let mut found = locate(&seen, &old, from, c.eof, units);
            // A trailing empty context line stands for the final newline.
            if found.is_none() && matches!(hunk.last(), Some(HunkLine::Context(s)) if s.is_empty())
            {
                hunk = &hunk[..hunk.len() - 1];
                old = old_of(hunk);
                found = locate(&seen, &old, from, c.eof, units);
            }
            // A unified diff says where its hunk was: among several places,
            // the one at that line, else the unique nearest (as git apply).
            if let (Some(hint), Some((places, _))) = (c.line_hint, found.as_mut())
                && places.len() > 1
            {
                let dist = |p: &(usize, IndentMap)| p.0.abs_diff(hint);
                if let Some(best) = places.iter().map(dist).min()
                    && places.iter().filter(|p| dist(p) == best).count() == 1
                {
                    places.retain(|p| dist(p) == best);
                }
            }
            match found {
                Some((places, _))
                    if masked.any()
                        && places.iter().any(|&(p, _)| {
                            let end = (p + old.len()).min(seen.len());
                            seen[p.min(end)..end]
                                .iter()
                                .any(|l| masked.overlaps(&(l.start..l.start + l.text.len())))
                        }) =>
                {
                    return Err(crate::engine::secret_refused(what));
                }
                Some((places, t)) if places.len() == 1 => {
                    worst = worst.max(t);
                    let mut places = places;
                    places.swap_remove(0)
                }
                Some((places, t)) => {
                    return Err(hunk_ambiguous(&places, t, n, c, what, from));
                }
                None => {
                    let mut m = hunk_miss(&seen, &old, n, c, what, from);
                    if masked.any() {
                        m.push_str(&format!(" Note: {what} holds secrets wrench redacts; hunks are matched against the file as `read` shows it, so text inside a secret never matches: edit around the secret, replace its whole line by anchoring on the visible parts (delete_range), or ask the user."));
                    }
                    return Err(ToolError::no_match(m));
                }
            }
        };
        if cursor < pos {
            keep(&mut out, cursor, pos - cursor);
        }
        let region: Vec<&str> = (0..old.len()).map(|k| lines[pos + k].text).collect();
        let new: Vec<&str> = hunk
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(*s),
                HunkLine::Remove(_) => None,
            })
            .collect();
        let mut ad = Adapter {
            map: &map,
            drift: drift(&region, &old),
            folded: 0,
        };
        for s in hunk_steps(hunk) {
            match s {
                Step::Copy(i, _) => keep(&mut out, pos + i, 1),
                Step::Change(i, j) => {
                    out.push(Out::Changed(ad.changed(region[i], old[i], new[j]), pos + i))
                }
                Step::Insert(j) => out.push(Out::Insert(ad.inserted(new[j]))),
            }
        }
        cursor = pos + old.len();
        folded += ad.folded;
        if let Some(d) = map.describe()
            && !adapted.contains(&d)
        {
            adapted.push(d);
        }
        if ad.drift.trailing && worst > Tier::Exact {
            let t = "trailing whitespace as the file has it".to_string();
            if !adapted.contains(&t) {
                adapted.push(t);
            }
        }
    }
    if folded > 0 {
        adapted.push(crate::engine::look_alike_note(folded));
    }
    keep(&mut out, cursor, lines.len().saturating_sub(cursor));
    // Render: kept lines keep their ending (a run is copied whole); a
    // changed line takes the ending of the line it replaces, an inserted
    // line the ending of the line before it (else the file's usual one).
    // Without a final newline in the file, the last line written gets none
    // either.
    let mut s = String::with_capacity(text.len() + 64);
    let mut prev_eol = dominant;
    let count = out.len();
    let mut kept = Vec::with_capacity(out.len());
    let mut new_line = 0usize;
    let norm = |eol: &str| if eol == "\r\n" { "\r\n" } else { "\n" };
    for (k, o) in out.iter().enumerate() {
        let last = k + 1 == count;
        match o {
            Out::Keep(from, len) => {
                let (from, len) = (*from, *len);
                kept.push((from, new_line, len));
                new_line += len;
                let end_line = lines[from + len - 1];
                // Only the file's last line can lack an ending.
                let end = end_line.start + end_line.text.len();
                s.push_str(&text[lines[from].start..end]);
                if !end_line.eol.is_empty() {
                    prev_eol = norm(end_line.eol);
                } else if len > 1 {
                    prev_eol = norm(lines[from + len - 2].eol);
                }
                if !last || final_nl {
                    s.push_str(if end_line.eol.is_empty() {
                        prev_eol
                    } else {
                        end_line.eol
                    });
                }
            }
            Out::Changed(t, of) => {
                new_line += 1;
                s.push_str(t);
                if !lines[*of].eol.is_empty() {
                    prev_eol = norm(lines[*of].eol);
                }
                if !last || final_nl {
                    s.push_str(prev_eol);
                }
            }
            Out::Insert(t) => {
                new_line += 1;
                s.push_str(t);
                if !last || final_nl {
                    s.push_str(prev_eol);
                }
            }
        }
    }
    Ok(UpdateResult {
        text: s,
        tier: worst,
        kept,
        adapted,
    })
}

fn hunk_ambiguous(
    places: &[(usize, IndentMap)],
    tier: Tier,
    n: usize,
    c: &Chunk,
    what: &str,
    from: usize,
) -> ToolError {
    let lines: Vec<usize> = places.iter().map(|(p, _)| p + 1).collect();
    ToolError::conflict(format!(
        "hunk {} (patch line {}) of {what} matches {} places from line {} on{}; nothing was changed. Add context lines that differ between them, or an `@@` line naming the enclosing function or class, so the hunk fits one place",
        n + 1,
        c.at,
        places.len(),
        from + 1,
        crate::engine::places_phrase(&lines, tier)
    ))
}

fn hunk_miss(
    lines: &[Line<'_>],
    pat: &[&str],
    n: usize,
    c: &Chunk,
    what: &str,
    from: usize,
) -> String {
    let mut m = format!(
        "hunk {} (patch line {}) of {what} does not match the file from line {} on (tried exact, trailing whitespace, all whitespace, Unicode look-alikes). Expected:\n",
        n + 1,
        c.at,
        from + 1
    );
    for p in pat.iter().take(crate::engine::NEAREST_SHOW_LINES) {
        m.push_str(&format!("  {p}\n"));
    }
    let (near, cut) = crate::engine::nearest_bounded(lines, pat);
    if cut {
        m.push_str(crate::engine::nearest_cut_note().trim_start());
        m.push('\n');
    }
    if let Some((start, len)) = near {
        let shown = len.min(crate::engine::NEAREST_SHOW_LINES);
        m.push_str(&format!(
            "The closest lines in the file are {}-{}:\n",
            start + 1,
            start + shown
        ));
        for (k, l) in lines[start..start + shown].iter().enumerate() {
            m.push_str(&format!("{:>6}\t{}\n", start + k + 1, l.text));
        }
    }
    m.push_str(
        "Nothing was changed. Read the file again and regenerate the hunk from its current text.",
    );
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Update patch of `body`; leaked so the parsed chunks (which borrow
    /// the patch text) can outlive the call.
    fn upd(body: &str) -> &'static str {
        Box::leak(
            format!("*** Begin Patch\n*** Update File: f.txt\n{body}*** End Patch\n")
                .into_boxed_str(),
        )
    }

    fn chunks(p: &str) -> Vec<Chunk<'_>> {
        match parse(p).unwrap().ops.remove(0) {
            Op::Update { chunks, .. } => chunks,
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn parses_every_section_kind() {
        let p = parse("*** Begin Patch\n*** Add File: a.txt\n+hi\n*** Delete File: b.txt\n*** Update File: c.txt\n*** Move to: d/c.txt\n@@ fn x\n ctx\n-old\n+new\n*** End of File\n*** End Patch\n").unwrap();
        assert_eq!(p.ops.len(), 3);
        assert_eq!(
            p.ops[0],
            Op::Add {
                path: "a.txt".into(),
                lines: vec!["hi"],
                final_newline: true,
            }
        );
        match &p.ops[2] {
            Op::Update {
                move_to, chunks, ..
            } => {
                assert_eq!(move_to.as_deref(), Some("d/c.txt"));
                assert_eq!(chunks[0].anchors, vec!["fn x"]);
                assert!(chunks[0].eof);
                assert_eq!(chunks[0].lines.len(), 3);
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn heredoc_wrapped_and_padded_patches_parse() {
        for p in [
            "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF\n",
            "<<EOF\n*** Begin Patch\n*** Delete File: x\n*** End Patch\nEOF",
            "  *** Begin Patch \n  *** Delete File: x\n *** End Patch  \n",
            "*** Begin Patch\r\n*** Delete File: x\r\n*** End Patch\r\n",
        ] {
            assert_eq!(
                parse(p).unwrap().ops,
                vec![Op::Delete { path: "x".into() }],
                "{p:?}"
            );
        }
    }

    #[test]
    fn malformed_patches_are_refused_with_the_line() {
        for (p, want) in [
            ("", "empty"),
            ("*** Begin Patch\n*** End Patch\n", "no file operations"),
            (
                "*** Begin Patch\n*** Update File: a\n*** End Patch\n",
                "no hunk lines",
            ),
            (
                "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch\n",
                "not a valid section header",
            ),
            (
                "*** Begin Patch\n*** Add File: a\nno plus\n*** End Patch\n",
                "starts with `+`",
            ),
            ("*** Begin Patch\n*** Delete File: a\n", "last line"),
            ("hello\n", "first line"),
        ] {
            let e = parse(p).unwrap_err();
            assert!(e.message.contains(want), "{p:?}: {}", e.message);
            assert!(e.message.contains("patch line"), "{}", e.message);
        }
    }

    #[test]
    fn hunks_apply_in_order_and_keep_crlf_per_line() {
        let c = chunks(upd("@@\n a\n-b\n+B\n@@\n c\n-d\n+D\n+E\n"));
        let r = apply_chunks("a\r\nb\r\nc\nd\nz\n", &c, "f").unwrap();
        assert_eq!(r.text, "a\r\nB\r\nc\nD\nE\nz\n");
    }

    #[test]
    fn anchor_narrows_the_search() {
        let c = chunks(upd("@@ fn two\n-    x\n+    y\n"));
        let r = apply_chunks("fn one\n    x\nfn two\n    x\n", &c, "f").unwrap();
        assert_eq!(r.text, "fn one\n    x\nfn two\n    y\n");
    }

    #[test]
    fn end_of_file_pins_the_hunk_to_the_end() {
        let c = chunks(upd("@@\n-x\n+y\n*** End of File\n"));
        let r = apply_chunks("x\nmid\nx\n", &c, "f").unwrap();
        assert_eq!(r.text, "x\nmid\ny\n");
    }

    #[test]
    fn end_of_file_refuses_a_hunk_that_matches_only_before_the_end() {
        // (file, hunk): the old lines occur, but not at the end.
        let cases = [
            ("x\ny\nz\n", " x\n-y\n+Y\n*** End of File\n"),
            ("x\ny\nz", " x\n-y\n+Y\n*** End of File\n"),
            ("a\nb\n\n", "-a\n+A\n*** End of File\n"),
            ("  a\nb\n", "-a\n+A\n*** End of File\n"),
        ];
        for (file, hunk) in cases {
            let c = chunks(upd(&format!("@@\n{hunk}")));
            let e = apply_chunks(file, &c, "f").unwrap_err();
            assert_eq!(
                e.kind,
                wrench_core::ErrorKind::NoMatch,
                "{file:?}: {}",
                e.message
            );
        }
        let c = chunks(upd("@@\n y\n-z\n+Z\n*** End of File\n"));
        assert_eq!(
            apply_chunks("x\ny\nz\n", &c, "f").unwrap().text,
            "x\ny\nZ\n"
        );
    }

    #[test]
    fn missing_final_newline_is_kept() {
        let c = chunks(upd("@@\n-b\n+c\n"));
        assert_eq!(apply_chunks("a\nb", &c, "f").unwrap().text, "a\nc");
        let add = chunks(upd("@@\n+tail\n"));
        assert_eq!(apply_chunks("a\nb", &add, "f").unwrap().text, "a\nb\ntail");
    }

    #[test]
    fn lenient_tiers_locate_whitespace_and_unicode_drift() {
        let c = chunks(upd("@@\n-  say(\"hi\")\n+  say(\"bye\")\n"));
        let r = apply_chunks("    say(\u{201C}hi\u{201D})  \n", &c, "f").unwrap();
        // the file's indentation, characters and trailing whitespace stay
        assert_eq!(r.text, "    say(\u{201C}bye\u{201D})  \n");
        assert_eq!(r.tier, Tier::Unicode);
    }

    #[test]
    fn a_hunk_whose_context_occurs_twice_is_refused_naming_both_places() {
        let file = "fn a() {\n    x();\n}\nfn b() {\n    x();\n}\n";
        let c = chunks(upd("@@\n-    x();\n+    y();\n"));
        let e = apply_chunks(file, &c, "f.rs").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("2 places"), "{}", e.message);
        assert!(e.message.contains("lines 2, 5"), "{}", e.message);
        // an anchor that decides makes it unique
        let c = chunks(upd("@@ fn b() {\n-    x();\n+    y();\n"));
        let r = apply_chunks(file, &c, "f.rs").unwrap();
        assert_eq!(r.text, "fn a() {\n    x();\n}\nfn b() {\n    y();\n}\n");
    }

    #[test]
    fn a_later_ambiguous_hunk_refuses_the_whole_update() {
        let file = "one\nz\ntwo\nz\n";
        let c = chunks(upd("@@\n-one\n+ONE\n@@\n-z\n+Z\n"));
        let e = apply_chunks(file, &c, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("hunk 2"), "{}", e.message);
    }

    #[test]
    fn a_unified_hunk_whose_context_repeats_goes_where_its_line_number_says() {
        let file = "a\nz\nb\nz\nc\nd\ne\nz\n";
        let mut c = chunks(upd("@@\n-z\n+Z\n"));
        // `@@ -4 …`: the second `z` (0-based line 3).
        c[0].line_hint = Some(3);
        let r = apply_chunks(file, &c, "f").unwrap();
        assert_eq!(r.text, "a\nz\nb\nZ\nc\nd\ne\nz\n");
        // Off by one (an earlier hunk shifted it): still the nearest.
        c[0].line_hint = Some(4);
        let r = apply_chunks(file, &c, "f").unwrap();
        assert_eq!(r.text, "a\nz\nb\nZ\nc\nd\ne\nz\n");
        // Halfway between two places decides nothing.
        c[0].line_hint = Some(2);
        let e = apply_chunks(file, &c, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
    }

    #[test]
    fn hunks_in_spaces_apply_to_a_tab_file_in_tabs() {
        let file = "func f() {\n\tif x {\n\t\ty(\"b\")\n\t}\n}\n";
        let c = chunks(upd(
            "@@\n     if x {\n-        y(\u{201C}b\u{201D})\n+        y(\u{201C}a\u{201D})\n+        z()\n     }\n",
        ));
        let r = apply_chunks(file, &c, "f.go").unwrap();
        assert_eq!(
            r.text,
            "func f() {\n\tif x {\n\t\ty(\"a\")\n\t\tz()\n\t}\n}\n"
        );
        assert_eq!(r.tier, Tier::Unicode);
    }

    #[test]
    fn unmatched_hunk_shows_the_closest_lines() {
        let c = chunks(upd("@@\n-let a = 1;\n+let a = 2;\n"));
        let e = apply_chunks("fn main() {\n    let a = 10;\n}\n", &c, "f.rs").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::NoMatch);
        assert!(
            e.message.contains("     2\t    let a = 10;"),
            "{}",
            e.message
        );
    }
}
