//! Unified diffs for `apply_patch`: `git diff` output (`diff --git`,
//! `index`, `new file mode`, `deleted file mode`, `rename from`/`rename to`,
//! `similarity index`, C-quoted paths, `a/` `b/` prefixes) and `diff -u`
//! output (no prefixes, timestamps after a tab), several files, `/dev/null`
//! for created and deleted files, `\ No newline at end of file`, CRLF patch
//! text. The result is the same [`Patch`] a V4A patch parses to, so it is
//! planned, guarded and committed the same way (all or nothing).
//!
//! Hunk line counts are checked: a hunk with more or fewer lines than its
//! `@@ -A,B +C,D @@` header says is refused with the line, because a
//! miscounted hunk is where a hand-written diff usually went wrong. Text
//! before the first file and after a complete hunk (a mail header, a
//! `-- ` signature, a heredoc's `EOF`) is ignored. Mode changes, copies,
//! symlinks and binary patches are refused as `unsupported`.

use crate::patch::{Chunk, HunkLine, Op, Patch};
use std::borrow::Cow;
use wrench_core::{ToolError, ToolResult};

/// Prefixes git puts before paths (`a/` `b/`, and the mnemonic ones of
/// `diff.mnemonicPrefix`: index, work tree, commit, object).
const GIT_PREFIXES: [&str; 6] = ["a/", "b/", "i/", "w/", "c/", "o/"];

/// Suffixes of a backup copy: `diff -u f.orig f` patches `f`.
const BACKUP_SUFFIXES: [&str; 4] = [".orig", ".old", ".bak", "~"];

fn bad(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::invalid_args(format!(
        "patch line {line}: {msg}. A unified diff is, per file, `--- a/PATH` and `+++ b/PATH` (or `/dev/null`), then hunks: `@@ -START,COUNT +START,COUNT @@` and COUNT lines starting with ` ` (context), `-` (removed) or `+` (added)"
    ))
}

fn unsupported(line: usize, msg: impl std::fmt::Display) -> ToolError {
    ToolError::unsupported(format!("patch line {line}: {msg}; nothing was changed"))
}

/// Lines of the patch without their `\n` (and without `\r`, kept apart
/// for added files' content when the patch itself is not CRLF throughout).
struct Lines<'a> {
    raw: Vec<&'a str>,
    /// Every line ends with `\r`: the patch was carried with CRLF endings.
    crlf_transport: bool,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut raw: Vec<&str> = Vec::with_capacity(text.len() / 32 + 1);
        let mut start = 0;
        for i in memchr::memchr_iter(b'\n', text.as_bytes()) {
            raw.push(text.get(start..i).unwrap_or_default());
            start = i + 1;
        }
        if start < text.len() {
            raw.push(text.get(start..).unwrap_or_default());
        }
        let crlf_transport = raw.iter().any(|l| !l.is_empty())
            && raw.iter().all(|l| l.is_empty() || l.ends_with('\r'));
        Lines {
            raw,
            crlf_transport,
        }
    }
    fn get(&self, i: usize) -> &'a str {
        let l = self.raw.get(i).copied().unwrap_or_default();
        l.strip_suffix('\r').unwrap_or(l)
    }
    /// The line as content of an added file: its `\r` kept unless the
    /// whole patch was CRLF.
    fn content(&self, i: usize) -> &'a str {
        if self.crlf_transport {
            self.get(i)
        } else {
            self.raw.get(i).copied().unwrap_or_default()
        }
    }
    fn len(&self) -> usize {
        self.raw.len()
    }
}

/// Whether `text` is a unified diff rather than a V4A patch: no `*** Begin
/// Patch` comes first, and a `diff --git` line or a `--- `/`+++ ` pair is
/// there.
pub fn is_unified(text: &str) -> bool {
    let lines = Lines::new(text);
    let first = (0..lines.len())
        .map(|i| lines.get(i).trim())
        .find(|l| !l.is_empty() && !l.starts_with("<<") && !l.starts_with("apply_patch"));
    if first.is_some_and(|l| l.starts_with("*** ")) {
        return false;
    }
    (0..lines.len()).any(|i| {
        let l = lines.get(i);
        l.starts_with("diff --git ")
            || (l.starts_with("--- ") && lines.get(i + 1).starts_with("+++ "))
    })
}

/// One file's section while it is read.
#[derive(Default)]
struct Section<'a> {
    /// 1-based patch line of its first header line.
    at: usize,
    git: bool,
    /// `diff --git a/X b/Y` names (prefix stripped), when they could be split.
    git_names: Option<(Cow<'a, str>, Cow<'a, str>)>,
    /// `--- X` / `+++ Y` names (None: `/dev/null`).
    old: Option<Option<Cow<'a, str>>>,
    new: Option<Option<Cow<'a, str>>>,
    rename_from: Option<Cow<'a, str>>,
    rename_to: Option<Cow<'a, str>>,
    new_file: bool,
    deleted: bool,
    old_mode: Option<(usize, &'a str)>,
    new_mode: Option<(usize, &'a str)>,
    chunks: Vec<Chunk<'a>>,
    /// Added file content (every hunk line an addition).
    added: Vec<&'a str>,
}

/// Parse a unified diff into the operations of a [`Patch`].
pub fn parse(text: &str) -> ToolResult<Patch<'_>> {
    let lines = Lines::new(text);
    let n = lines.len();
    let mut ops: Vec<Op<'_>> = Vec::new();
    let mut cur: Option<Section<'_>> = None;
    let mut i = 0;
    while i < n {
        let l = lines.get(i);
        if let Some(rest) = l.strip_prefix("diff --git ") {
            if let Some(s) = cur.take() {
                ops.push(finish(s)?);
            }
            cur = Some(Section {
                at: i + 1,
                git: true,
                git_names: split_git_names(rest),
                ..Section::default()
            });
            i += 1;
            continue;
        }
        if l.starts_with("--- ") && lines.get(i + 1).starts_with("+++ ") {
            // A new section, unless this fills in a `diff --git` header.
            let fills = matches!(&cur, Some(s) if s.git && s.old.is_none() && s.chunks.is_empty());
            if !fills {
                if let Some(s) = cur.take() {
                    ops.push(finish(s)?);
                }
                cur = Some(Section {
                    at: i + 1,
                    ..Section::default()
                });
            }
            if let Some(s) = cur.as_mut() {
                s.old = Some(header_path(&l[4..], i + 1)?);
                s.new = Some(header_path(&lines.get(i + 1)[4..], i + 2)?);
            }
            i += 2;
            continue;
        }
        if l.starts_with("@@") {
            let Some(s) = cur.as_mut() else {
                return Err(bad(
                    i + 1,
                    "a hunk before any file header (expected `--- a/PATH` and `+++ b/PATH` first)",
                ));
            };
            if s.old.is_none() && !(s.git && s.git_names.is_some()) {
                return Err(bad(
                    i + 1,
                    "a hunk before its file's `--- a/PATH` and `+++ b/PATH` lines",
                ));
            }
            i = read_hunk(&lines, i, s)?;
            continue;
        }
        if let Some(s) = cur.as_mut().filter(|s| s.git && s.chunks.is_empty()) {
            extended_header(l, i + 1, s)?;
        } else if l.starts_with("GIT binary patch") || l.starts_with("Binary files ") {
            return Err(unsupported(i + 1, "binary patches are not supported"));
        } else if cur.as_ref().is_some_and(|s| !s.chunks.is_empty())
            && l != "--"
            && l != "-- "
            && (l.starts_with(' ') || l.starts_with('-') || l.starts_with('+'))
        {
            // After a complete hunk: a hunk line here means the header's
            // counts were wrong, and the line would be lost.
            let s = cur.as_ref().and_then(|s| s.chunks.last());
            return Err(bad(
                i + 1,
                format!(
                    "this line follows the hunk that starts at line {}, which its `@@` header says is complete; fix the line counts in that header",
                    s.map_or(0, |c| c.at)
                ),
            ));
        } else if l == "-- " || l == "--" {
            // A mail signature (`git format-patch`): the patch ends here.
            break;
        }
        i += 1;
    }
    if let Some(s) = cur.take() {
        ops.push(finish(s)?);
    }
    if ops.is_empty() {
        return Err(bad(1, "the diff names no file"));
    }
    crate::patch::one_section_per_path(ops)
}

/// `git diff`'s extended header lines (between `diff --git` and `---`).
fn extended_header<'a>(l: &'a str, at: usize, s: &mut Section<'a>) -> ToolResult<()> {
    let word = |p: &str| l.strip_prefix(p).map(str::trim);
    if let Some(m) = word("new file mode ") {
        s.new_file = true;
        check_mode(m, at)?;
    } else if let Some(m) = word("deleted file mode ") {
        s.deleted = true;
        check_mode(m, at)?;
    } else if let Some(m) = word("old mode ") {
        s.old_mode = Some((at, m));
    } else if let Some(m) = word("new mode ") {
        s.new_mode = Some((at, m));
    } else if let Some(p) = word("rename from ").or_else(|| word("rename old ")) {
        s.rename_from = Some(unquote(p, at)?);
    } else if let Some(p) = word("rename to ").or_else(|| word("rename new ")) {
        s.rename_to = Some(unquote(p, at)?);
    } else if l.starts_with("copy from ") || l.starts_with("copy to ") {
        return Err(unsupported(
            at,
            "copies (`copy from`/`copy to`) are not supported; add the new file as a `new file` section instead",
        ));
    } else if l.starts_with("GIT binary patch") || l.starts_with("Binary files ") {
        return Err(unsupported(at, "binary patches are not supported"));
    }
    // `index`, `similarity index`, `dissimilarity index` and anything else
    // carry nothing to apply.
    Ok(())
}

/// Regular files only: a symlink (120000) or submodule (160000) is refused.
fn check_mode(m: &str, at: usize) -> ToolResult<()> {
    match m {
        "100644" | "100755" | "100664" => Ok(()),
        "120000" => Err(unsupported(at, "symlinks (mode 120000) are not supported")),
        "160000" => Err(unsupported(
            at,
            "submodules (mode 160000) are not supported",
        )),
        other => Err(bad(
            at,
            format!("{other:?} is not a file mode git writes (expected 100644 or 100755)"),
        )),
    }
}

/// Read the hunk whose header is line `i`; returns the index after it.
fn read_hunk<'a>(lines: &Lines<'a>, mut i: usize, s: &mut Section<'a>) -> ToolResult<usize> {
    let header = lines.get(i);
    let at = i + 1;
    let (old_start, mut old_left, mut new_left) = hunk_header(header).ok_or_else(|| {
        bad(
            at,
            format!(
                "{:?} is not a hunk header; expected `@@ -START,COUNT +START,COUNT @@`",
                header.chars().take(60).collect::<String>()
            ),
        )
    })?;
    let (old_total, new_total) = (old_left, new_left);
    let mut chunk = Chunk {
        at,
        line_hint: Some(old_start.saturating_sub(1)),
        ..Chunk::default()
    };
    // Which sides the last line was on, for `\ No newline at end of file`.
    let mut last_sides = (false, false);
    let (mut old_no_eol, mut new_no_eol) = (false, false);
    i += 1;
    while i < lines.len() && (old_left > 0 || new_left > 0 || lines.get(i).starts_with('\\')) {
        let l = lines.get(i);
        let too_many = |side: &str| {
            bad(
                i + 1,
                format!(
                    "the hunk at line {at} has more {side} lines than its header says ({old_total} old, {new_total} new); fix the counts"
                ),
            )
        };
        let line = match l.as_bytes().first() {
            Some(b'\\') => {
                if !(last_sides.0 || last_sides.1) {
                    return Err(bad(i + 1, "`\\ No newline at end of file` follows no line"));
                }
                old_no_eol |= last_sides.0;
                new_no_eol |= last_sides.1;
                i += 1;
                continue;
            }
            Some(b' ') | None => {
                if old_left == 0 || new_left == 0 {
                    return Err(too_many("context"));
                }
                old_left -= 1;
                new_left -= 1;
                last_sides = (true, true);
                HunkLine::Context(l.get(1..).unwrap_or_default())
            }
            Some(b'-') => {
                if old_left == 0 {
                    return Err(too_many("removed"));
                }
                old_left -= 1;
                last_sides = (true, false);
                HunkLine::Remove(&l[1..])
            }
            Some(b'+') => {
                if new_left == 0 {
                    return Err(too_many("added"));
                }
                new_left -= 1;
                last_sides = (false, true);
                if s.new_file || s.old == Some(None) {
                    s.added.push(&lines.content(i)[1..]);
                }
                HunkLine::Add(&l[1..])
            }
            Some(_) => {
                return Err(bad(
                    i + 1,
                    format!(
                        "the hunk at line {at} still needs {old_left} old and {new_left} new lines (its header says {old_total} and {new_total}); every hunk line starts with ` `, `-` or `+`, got {:?}",
                        l.chars().take(60).collect::<String>()
                    ),
                ));
            }
        };
        chunk.lines.push(line);
        i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(bad(
            i.min(lines.len()),
            format!(
                "the diff ends inside the hunk at line {at}: it needs {old_left} more old and {new_left} more new lines (its header says {old_total} and {new_total})"
            ),
        ));
    }
    if new_no_eol {
        chunk.final_newline = Some(false);
    } else if old_no_eol {
        chunk.final_newline = Some(true);
    }
    s.chunks.push(chunk);
    Ok(i)
}

/// `@@ -A[,B] +C[,D] @@ ...` → (A, B, D).
fn hunk_header(l: &str) -> Option<(usize, usize, usize)> {
    let rest = l.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let range = |r: &str| -> Option<(usize, usize)> {
        match r.split_once(',') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => Some((r.parse().ok()?, 1)),
        }
    };
    let (a, b) = range(old)?;
    let (_, d) = range(new)?;
    Some((a, b, d))
}

/// A `---`/`+++` path: timestamp cut at a tab, C-quoting undone; None for
/// `/dev/null`.
fn header_path(raw: &str, at: usize) -> ToolResult<Option<Cow<'_, str>>> {
    let p = if raw.starts_with('"') {
        raw
    } else {
        raw.split('\t').next().unwrap_or(raw).trim_end()
    };
    if p == "/dev/null" {
        return Ok(None);
    }
    let p = unquote(p, at)?;
    if p.is_empty() {
        return Err(bad(at, "the file header names no path"));
    }
    Ok(Some(p))
}

/// Undo git's C-style quoting (`"a/t\303\251st\tx"`), else the path as is.
fn unquote(p: &str, at: usize) -> ToolResult<Cow<'_, str>> {
    let p = p.trim_end();
    let Some(inner) = p.strip_prefix('"') else {
        return Ok(Cow::Borrowed(p));
    };
    let Some(inner) = inner.strip_suffix('"') else {
        return Err(bad(at, "a quoted path without its closing `\"`"));
    };
    let mut out: Vec<u8> = Vec::with_capacity(inner.len());
    let b = inner.as_bytes();
    let mut k = 0;
    while k < b.len() {
        if b[k] != b'\\' {
            out.push(b[k]);
            k += 1;
            continue;
        }
        let Some(&c) = b.get(k + 1) else {
            return Err(bad(at, "a quoted path ends in `\\`"));
        };
        k += 2;
        out.push(match c {
            b'a' => 7,
            b'b' => 8,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 11,
            b'f' => 12,
            b'r' => b'\r',
            b'"' => b'"',
            b'\\' => b'\\',
            b'0'..=b'3' => {
                let oct = b
                    .get(k..k + 2)
                    .filter(|d| d.iter().all(|x| (b'0'..=b'7').contains(x)));
                let Some(d) = oct else {
                    return Err(bad(
                        at,
                        "a quoted path has a bad octal escape (expected `\\NNN`)",
                    ));
                };
                k += 2;
                (c - b'0') * 64 + (d[0] - b'0') * 8 + (d[1] - b'0')
            }
            other => {
                return Err(bad(
                    at,
                    format!(
                        "a quoted path has an unknown escape `\\{}`",
                        char::from(other)
                    ),
                ));
            }
        });
    }
    String::from_utf8(out)
        .map(Cow::Owned)
        .map_err(|_| unsupported(at, "a path that is not UTF-8"))
}

/// The two names of `diff --git a/X b/Y` (quoted or not), prefixes
/// stripped; None when they cannot be told apart (a space in an unquoted
/// name that differs between the sides).
fn split_git_names(rest: &str) -> Option<(Cow<'_, str>, Cow<'_, str>)> {
    if rest.starts_with('"') {
        // The closing quote: the first `"` not escaped by `\`.
        let b = rest.as_bytes();
        let mut k = 1;
        let mut close = None;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 2,
                b'"' => {
                    close = Some(k + 1);
                    break;
                }
                _ => k += 1,
            }
        }
        let end = close?;
        let a = unquote(&rest[..end], 0).ok()?;
        let b = unquote(rest[end..].trim_start(), 0).ok()?;
        return Some((strip_prefix(a), strip_prefix(b)));
    }
    // Unquoted: `a/NAME b/NAME` with the same NAME on both sides.
    let len = rest.len();
    if len % 2 == 1 {
        let half = (len - 1) / 2;
        let (a, b) = (rest.get(..half)?, rest.get(half + 1..)?);
        if rest.as_bytes().get(half) == Some(&b' ') && a.get(2..) == b.get(2..) {
            return Some((strip_prefix(a.into()), strip_prefix(b.into())));
        }
    }
    None
}

fn strip_prefix(p: Cow<'_, str>) -> Cow<'_, str> {
    match p {
        Cow::Borrowed(s) => Cow::Borrowed(
            GIT_PREFIXES
                .iter()
                .find_map(|x| s.strip_prefix(x))
                .unwrap_or(s),
        ),
        Cow::Owned(s) => Cow::Owned(
            GIT_PREFIXES
                .iter()
                .find_map(|x| s.strip_prefix(x))
                .unwrap_or(&s)
                .to_string(),
        ),
    }
}

/// `--- a/x` and `+++ b/x` of a git diff (or of `diff -ru a b`) lose their
/// first component; `diff -u` names are kept.
fn strip_pair<'a>(old: Cow<'a, str>, new: Cow<'a, str>, git: bool) -> (Cow<'a, str>, Cow<'a, str>) {
    let prefixed = |p: &str, want: &[&str]| want.iter().any(|w| p.starts_with(w));
    if git || (prefixed(&old, &["a/"]) && prefixed(&new, &["b/"])) {
        (strip_prefix(old), strip_prefix(new))
    } else {
        (old, new)
    }
}

/// One side's name next to `/dev/null`: git's prefix goes, and outside
/// git the conventional `a/` (old) or `b/` (new).
fn strip_one<'a>(p: Cow<'a, str>, git: bool, conventional: &str) -> Cow<'a, str> {
    if git || p.starts_with(conventional) {
        strip_prefix(p)
    } else {
        p
    }
}

/// The operation of a finished section.
fn finish(s: Section<'_>) -> ToolResult<Op<'_>> {
    let at = s.at;
    if let (Some((l, a)), Some((_, b))) = (s.old_mode, s.new_mode)
        && a != b
    {
        return Err(unsupported(
            l,
            format!(
                "changing a file's mode ({a} to {b}) is not supported: drop the `old mode`/`new mode` lines (and use chmod)"
            ),
        ));
    }
    let git = s.git;
    let (old, new) = match (s.old.clone(), s.new.clone(), s.git_names.clone()) {
        (Some(o), Some(nw), _) => {
            let (o2, n2) = match (o, nw) {
                (Some(o), Some(nw)) => {
                    let (o, nw) = strip_pair(o, nw, git);
                    (Some(o), Some(nw))
                }
                (Some(o), None) => (Some(strip_one(o, git, "a/")), None),
                (None, Some(nw)) => (None, Some(strip_one(nw, git, "b/"))),
                (None, None) => {
                    return Err(bad(at, "both sides of the file header are /dev/null"));
                }
            };
            (o2, n2)
        }
        (None, None, Some((a, b))) => ((!s.new_file).then_some(a), (!s.deleted).then_some(b)),
        (None, None, None) => {
            if s.rename_from.is_some() && s.rename_to.is_some() {
                (s.rename_from.clone(), s.rename_to.clone())
            } else {
                return Err(bad(
                    at,
                    "cannot tell the file's name from this `diff --git` line (quote names with spaces, or add `--- a/PATH` and `+++ b/PATH`)",
                ));
            }
        }
        _ => return Err(bad(at, "a file header with only one of `---` and `+++`")),
    };
    let old = s.rename_from.clone().or(old);
    let new = s.rename_to.clone().or(new);
    match (old, new) {
        (None, Some(path)) => {
            only(
                &s.chunks,
                |l| matches!(l, HunkLine::Add(_)),
                || {
                    bad(
                        at,
                        format!(
                            "the new file {path} has context or removed lines; a created file's hunk has only `+` lines"
                        ),
                    )
                },
            )?;
            let final_newline = crate::patch::final_newline(&s.chunks).unwrap_or(true);
            Ok(Op::Add {
                path,
                lines: s.added,
                final_newline,
            })
        }
        (Some(path), None) => {
            only(
                &s.chunks,
                |l| matches!(l, HunkLine::Remove(_)),
                || {
                    bad(
                        at,
                        format!(
                            "the deleted file {path} has context or added lines; a deleted file's hunk has only `-` lines"
                        ),
                    )
                },
            )?;
            Ok(Op::Delete { path })
        }
        (Some(old), Some(new)) => {
            let renamed = git && old != new;
            let path = if renamed || old == new {
                old.clone()
            } else {
                pick_target(old.clone(), new.clone())
            };
            if s.chunks.is_empty() && !renamed {
                return Err(bad(
                    at,
                    format!(
                        "the section for {path} has no hunks (expected `@@ -START,COUNT +START,COUNT @@`)"
                    ),
                ));
            }
            Ok(Op::Update {
                path,
                move_to: renamed.then_some(new),
                chunks: s.chunks,
            })
        }
        (None, None) => Err(bad(at, "both sides of the file header are /dev/null")),
    }
}

/// Refuse (with `err`) unless every hunk line is `ok`.
fn only(
    chunks: &[Chunk<'_>],
    ok: impl Fn(&HunkLine<'_>) -> bool,
    err: impl FnOnce() -> ToolError,
) -> ToolResult<()> {
    if chunks.iter().flat_map(|c| &c.lines).all(ok) {
        Ok(())
    } else {
        Err(err())
    }
}

/// Which file a `diff -u OLD NEW` of two differently named files patches:
/// not a backup copy (`f.orig`, `f~`); else the old name (the file the
/// diff was taken against).
fn pick_target<'a>(old: Cow<'a, str>, new: Cow<'a, str>) -> Cow<'a, str> {
    let backup = |p: &str| BACKUP_SUFFIXES.iter().any(|s| p.ends_with(s));
    if backup(&old) && !backup(&new) {
        new
    } else {
        old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(p: &str) -> Vec<Op<'_>> {
        parse(p).unwrap().ops
    }

    #[test]
    fn git_diff_with_every_header_kind_parses() {
        let p = "diff --git a/src/m.rs b/src/m.rs\nindex 83db48f..bf269f4 100644\n--- a/src/m.rs\n+++ b/src/m.rs\n@@ -1,3 +1,3 @@ fn main\n a\n-b\n+B\n c\ndiff --git a/new.txt b/new.txt\nnew file mode 100644\nindex 0000000..e69de29\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\ndiff --git a/gone.txt b/gone.txt\ndeleted file mode 100644\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\ndiff --git a/old name.txt b/new name.txt\nsimilarity index 100%\nrename from old name.txt\nrename to new name.txt\ndiff --git a/empty b/empty\nnew file mode 100644\nindex 0000000..e69de29\n";
        let o = ops(p);
        assert_eq!(o.len(), 5, "{o:?}");
        match &o[0] {
            Op::Update {
                path,
                move_to,
                chunks,
            } => {
                assert_eq!(path, "src/m.rs");
                assert!(move_to.is_none());
                assert_eq!(chunks[0].line_hint, Some(0));
                assert_eq!(chunks[0].lines.len(), 4);
            }
            x => panic!("{x:?}"),
        }
        assert_eq!(
            o[1],
            Op::Add {
                path: "new.txt".into(),
                lines: vec!["x", "y"],
                final_newline: false
            }
        );
        assert_eq!(
            o[2],
            Op::Delete {
                path: "gone.txt".into()
            }
        );
        match &o[3] {
            Op::Update {
                path,
                move_to,
                chunks,
            } => {
                assert_eq!(path, "old name.txt");
                assert_eq!(move_to.as_deref(), Some("new name.txt"));
                assert!(chunks.is_empty());
            }
            x => panic!("{x:?}"),
        }
        assert_eq!(
            o[4],
            Op::Add {
                path: "empty".into(),
                lines: vec![],
                final_newline: true
            }
        );
    }

    #[test]
    fn diff_u_without_prefixes_and_with_timestamps_parses() {
        let p = "--- lib.py\t2024-01-01 10:00:00.000000000 +0000\n+++ lib.py\t2024-01-02 10:00:00.000000000 +0000\n@@ -2 +2 @@\n-x = 1\n+x = 2\n";
        match &ops(p)[0] {
            Op::Update {
                path,
                move_to: None,
                chunks,
            } => {
                assert_eq!(path, "lib.py");
                assert_eq!(chunks[0].line_hint, Some(1));
            }
            x => panic!("{x:?}"),
        }
        let p = "--- f.c.orig\n+++ f.c\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(ops(p)[0].path(), "f.c");
        let p = "--- a/d/f.c\n+++ b/d/f.c\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(ops(p)[0].path(), "d/f.c");
    }

    #[test]
    fn quoted_paths_are_unescaped() {
        let p = "diff --git \"a/t\\303\\251st\\tx\" \"b/t\\303\\251st\\tx\"\n--- \"a/t\\303\\251st\\tx\"\n+++ \"b/t\\303\\251st\\tx\"\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(ops(p)[0].path(), "t\u{e9}st\tx");
    }

    #[test]
    fn crlf_patch_text_is_read_as_lf_and_keeps_added_files_crlf_only_when_theirs() {
        let p = "--- a/f\r\n+++ b/f\r\n@@ -1 +1 @@\r\n-a\r\n+b\r\n";
        match &ops(p)[0] {
            Op::Update { chunks, .. } => {
                assert_eq!(
                    chunks[0].lines,
                    vec![HunkLine::Remove("a"), HunkLine::Add("b")]
                );
            }
            x => panic!("{x:?}"),
        }
        let p = "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\r\n+b\r\n";
        assert_eq!(
            ops(p)[0],
            Op::Add {
                path: "f".into(),
                lines: vec!["a\r", "b\r"],
                final_newline: true
            }
        );
    }

    #[test]
    fn final_newline_markers_set_the_wanted_state() {
        let p = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n";
        match &ops(p)[0] {
            Op::Update { chunks, .. } => assert_eq!(chunks[0].final_newline, Some(true)),
            x => panic!("{x:?}"),
        }
        let p = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n";
        match &ops(p)[0] {
            Op::Update { chunks, .. } => assert_eq!(chunks[0].final_newline, Some(false)),
            x => panic!("{x:?}"),
        }
    }

    #[test]
    fn preamble_signature_and_heredoc_are_ignored() {
        let p = "apply_patch <<'EOF'\nFrom 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n f | 2 +-\n\ndiff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\nEOF\n";
        assert_eq!(ops(p).len(), 1);
    }

    #[test]
    fn malformed_diffs_name_the_line_and_what_was_expected() {
        for (p, line, want) in [
            (
                "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\n+b\n",
                5,
                "ends inside the hunk",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n+c\n",
                6,
                "fix the line counts",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n-b\n+c\n",
                5,
                "more removed lines",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -x +1 @@\n-a\n",
                3,
                "not a hunk header",
            ),
            (
                "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n-a\nzz\n",
                5,
                "starts with ` `, `-` or `+`",
            ),
            ("@@ -1 +1 @@\n-a\n+b\n", 1, "before any file header"),
            (
                "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n",
                2,
                "mode",
            ),
            ("diff --git a/f b/f\nnew file mode 120000\n", 2, "symlinks"),
            (
                "diff --git a/f b/f\nBinary files a/f and b/f differ\n",
                2,
                "binary",
            ),
            ("diff --git a/f b/g\ncopy from f\ncopy to g\n", 2, "copies"),
            ("--- \"a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", 1, "closing"),
            (
                "--- /dev/null\n+++ b/f\n@@ -1 +1,2 @@\n a\n+b\n",
                1,
                "only `+` lines",
            ),
        ] {
            let e = parse(p).unwrap_err();
            assert!(
                e.message.contains(&format!("patch line {line}:")) && e.message.contains(want),
                "{p:?}: {}",
                e.message
            );
        }
    }

    #[test]
    fn v4a_patches_are_not_taken_for_unified_diffs() {
        assert!(!is_unified(
            "*** Begin Patch\n*** Update File: f\n--- a\n+++ b\n*** End Patch\n"
        ));
        assert!(is_unified("diff --git a/f b/f\n"));
        assert!(is_unified("--- f\n+++ f\n@@ -1 +1 @@\n"));
        assert!(!is_unified("hello\n"));
    }
}
