//! The one edit engine behind `edit`, `multi_edit` and `apply_patch` hunks:
//! find text in a file with a ladder of increasingly lenient matches, apply a
//! unique candidate only, and keep each line's own line ending.
//!
//! The ladder (SPEC §5): exact → line endings → trailing whitespace →
//! indentation (a shift of the whole block, or another unit: tabs ↔ 2/4/8
//! spaces) → Unicode look-alikes (smart quotes, dashes, odd spaces; any
//! indentation). Only a unique candidate is applied. Text pasted from
//! `read` output with its `{n:>6}\t` line-number prefixes, or with
//! `\uXXXX` escapes for the file's non-ASCII characters, is accepted.
//!
//! When a recovery tier located the text, the copied-lines rule of
//! `render` decides what is written: lines `new_string` copies keep the
//! file's bytes, changed and inserted lines are adapted to the file; the
//! result says which tier fired and what was adapted. A file without a
//! final newline does not gain one from an `old_string` ending in `\n`.

use wrench_core::{ToolError, ToolResult};

/// Most file lines scanned when looking for the closest lines after a miss.
pub const NEAREST_SCAN_LINES: usize = 20_000;
/// Most lines shown of the closest candidate after a miss.
pub const NEAREST_SHOW_LINES: usize = 12;
/// Most match locations listed for an ambiguous match.
pub const AMBIGUOUS_LIST: usize = 20;

/// Which rung of the ladder matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Byte-for-byte.
    Exact,
    /// After making the line endings the same (CRLF ↔ LF).
    LineEndings,
    /// Ignoring whitespace at the ends of lines.
    TrailingWhitespace,
    /// With the block's indentation shifted, or written in another unit
    /// (tabs ↔ spaces, 2 ↔ 4 spaces).
    Indentation,
    /// Ignoring whitespace at both ends of each line.
    AllWhitespace,
    /// After folding Unicode look-alikes (smart quotes, dashes, non-breaking
    /// spaces) to ASCII.
    Unicode,
}

impl Tier {
    /// How the result text names it.
    pub fn describe(self) -> &'static str {
        match self {
            Tier::Exact => "exact match",
            Tier::LineEndings => "matched after normalizing line endings",
            Tier::TrailingWhitespace => "matched ignoring trailing whitespace",
            Tier::Indentation => {
                "matched with the whole block's indentation shifted or in another unit (new lines indented as the file indents)"
            }
            Tier::AllWhitespace => "matched ignoring leading and trailing whitespace",
            Tier::Unicode => {
                "matched after folding Unicode look-alikes (smart quotes, dashes, non-breaking spaces)"
            }
        }
    }
}

mod indent;
mod lines;
mod mask;
mod render;

pub use indent::{IndentMap, Unit};
pub use lines::{Line, decode_unicode_escapes, dominant_eol, fold, fold_char, split_lines, split3};
pub use mask::{Masked, secret_refused};
pub use render::{Adapter, Drift, Step, diff_steps, drift};

/// Whether file line `f` matches pattern line `p` at a whole-line tier, with
/// the same indentation (the indentation tiers are [`window_map`]).
pub fn line_eq(tier: Tier, f: &str, p: &str) -> bool {
    match tier {
        Tier::Exact | Tier::LineEndings => f == p,
        Tier::TrailingWhitespace | Tier::Indentation => f.trim_end() == p.trim_end(),
        Tier::AllWhitespace => f.trim() == p.trim(),
        Tier::Unicode => fold(f).trim_end() == fold(p).trim_end(),
    }
}

/// The indentation units of the model's text and of the file.
#[derive(Debug, Clone, Copy)]
pub struct Units {
    /// The unit the model's text indents in.
    pub model: Unit,
    /// The unit the file indents in (new lines are written in it).
    pub file: Unit,
}

impl Units {
    /// Detect both units: the model's from its texts, the file's from its lines.
    pub fn of(model_text: &[&str], file: &[Line<'_>]) -> Units {
        Units {
            model: indent::detect(model_text.iter().flat_map(|t| t.split('\n'))),
            file: indent::file_unit(file),
        }
    }
}

/// How the model's lines `pat` map onto file lines `win` at a whole-line
/// tier: None when they do not match; else how indentation maps.
/// TrailingWhitespace: same indentation, trailing whitespace ignored;
/// Indentation: the block shifted or in another unit; Unicode: look-alikes
/// folded too; AllWhitespace: look-alikes folded, any indentation per line.
pub fn window_map(win: &[Line<'_>], pat: &[&str], tier: Tier, units: Units) -> Option<IndentMap> {
    if matches!(tier, Tier::Exact | Tier::LineEndings) {
        return (win.len() == pat.len() && win.iter().zip(pat).all(|(f, p)| f.text == *p))
            .then_some(IndentMap::Same);
    }
    let folded = matches!(tier, Tier::Unicode | Tier::AllWhitespace);
    let mut pairs: Vec<(std::borrow::Cow<'_, str>, std::borrow::Cow<'_, str>)> = Vec::new();
    for (f, p) in win.iter().zip(pat) {
        let (fi, fc, _) = split3(f.text, folded);
        let (pi, pc, _) = split3(p, folded);
        let same = if folded {
            fc.chars().count() == pc.chars().count()
                && fc
                    .chars()
                    .zip(pc.chars())
                    .all(|(a, b)| fold_char(a) == fold_char(b))
        } else {
            fc == pc
        };
        if !same {
            return None;
        }
        if !fc.is_empty() {
            pairs.push((lines::plain_indent(fi), lines::plain_indent(pi)));
        }
    }
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(a, b)| (a.as_ref(), b.as_ref()))
        .collect();
    match tier {
        Tier::Exact | Tier::LineEndings | Tier::TrailingWhitespace => {
            pairs.iter().all(|(f, p)| f == p).then_some(IndentMap::Same)
        }
        Tier::Indentation | Tier::Unicode => indent::block_map(&pairs, units.model, units.file),
        Tier::AllWhitespace => {
            Some(indent::block_map(&pairs, units.model, units.file).unwrap_or(IndentMap::Same))
        }
    }
}

/// Strip `read`'s `{n:>6}\t` line-number prefixes when every non-empty line
/// has one.
pub fn strip_line_numbers(s: &str) -> Option<String> {
    let mut any = false;
    let mut out = Vec::new();
    for l in s.split('\n') {
        let l = l.strip_suffix('\r').unwrap_or(l);
        if l.is_empty() {
            out.push(String::new());
            continue;
        }
        let t = l.trim_start_matches(' ');
        let digits = t.len() - t.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !t[digits..].starts_with('\t') {
            return None;
        }
        any = true;
        out.push(t[digits + 1..].to_string());
    }
    any.then(|| out.join("\n"))
}

/// Render LF-normalized `new` with line endings: the k-th newline takes the
/// ending of the k-th line ending of the replaced region, then the region's
/// last one, then the file's dominant one.
fn with_eols(new: &str, region_eols: &[&str], dominant: &str) -> String {
    let mut out = String::with_capacity(new.len() + 16);
    let parts: Vec<&str> = new.split('\n').collect();
    for (k, p) in parts.iter().enumerate() {
        out.push_str(p);
        if k + 1 < parts.len() {
            let e = region_eols
                .get(k)
                .or(region_eols.last())
                .copied()
                .unwrap_or(dominant);
            out.push_str(e);
        }
    }
    out
}

fn eols_in(s: &str) -> Vec<&str> {
    let b = s.as_bytes();
    (0..b.len())
        .filter(|&i| b[i] == b'\n')
        .map(|i| {
            if i > 0 && b[i - 1] == b'\r' {
                "\r\n"
            } else {
                "\n"
            }
        })
        .collect()
}

/// One applied replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Applied {
    /// The whole new text.
    pub text: String,
    /// The tier that matched (the most lenient one, over several places).
    pub tier: Tier,
    /// How many places were replaced.
    pub count: usize,
    /// 1-based first line of each replaced place (in the old text).
    pub lines: Vec<usize>,
    /// The line-number prefixes of `read` output were stripped.
    pub stripped_line_numbers: bool,
    /// What was adapted to the file, in words ("indentation 4 spaces → tabs").
    pub adapted: Vec<String>,
}

/// A candidate region: byte range in the text, and how indentation maps.
struct Candidate {
    start: usize,
    end: usize,
    line: usize,
    map: IndentMap,
}

fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count() + 1
}

/// Number candidates sorted by start in one pass over the text (a line
/// count per candidate would be quadratic in a `replace_all` of many).
fn number_lines(text: &str, cands: &mut [Candidate]) {
    let (mut at, mut line) = (0usize, 1usize);
    for c in cands.iter_mut() {
        if c.start < at {
            c.line = line_of(text, c.start);
            continue;
        }
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[at..c.start]).count();
        at = c.start;
        c.line = line;
    }
}

/// Replace `old` with `new` in `text` (all places with `replace_all`, else
/// exactly one). Errors: `no_match` with the closest lines, `conflict` with
/// every location when ambiguous.
pub fn replace(
    text: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    what: &str,
) -> ToolResult<Applied> {
    if old.is_empty() {
        return Err(ToolError::invalid_args(format!(
            "old_string is empty; to change {what}, pass the exact text to replace (or use write to replace the whole file)"
        )));
    }
    let first = match replace_ladder(text, old, new, replace_all, what) {
        Err(e) if e.kind == wrench_core::ErrorKind::NoMatch => e,
        r => return r,
    };
    // What a model pastes: `read` output with its line-number prefixes, or
    // JSON-escaped non-ASCII characters.
    if let Some(o2) = strip_line_numbers(old) {
        let n2 = strip_line_numbers(new).unwrap_or_else(|| new.to_string());
        if !o2.is_empty()
            && let Ok(mut a) = replace_ladder(text, &o2, &n2, replace_all, what)
        {
            a.stripped_line_numbers = true;
            return Ok(a);
        }
    }
    if let Some(o2) = decode_unicode_escapes(old) {
        let n2 = decode_unicode_escapes(new).unwrap_or_else(|| new.to_string());
        if let Ok(mut a) = replace_ladder(text, &o2, &n2, replace_all, what) {
            a.adapted
                .push("\\uXXXX escapes read as the characters they stand for".into());
            return Ok(a);
        }
    }
    Err(first)
}

/// The model's text as lines, and whether it ends with a newline.
fn model_lines(lf: &str) -> (Vec<&str>, bool) {
    if lf.is_empty() {
        return (Vec::new(), false);
    }
    match lf.strip_suffix('\n') {
        Some(body) => (body.split('\n').collect(), true),
        None => (lf.split('\n').collect(), false),
    }
}

/// The tiers of the ladder, strictest first.
const LADDER: [Tier; 5] = [
    Tier::Exact,
    Tier::LineEndings,
    Tier::TrailingWhitespace,
    Tier::Indentation,
    Tier::Unicode,
];

fn replace_ladder(
    real: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    what: &str,
) -> ToolResult<Applied> {
    // Matching, hints and closest lines see the file as `read` shows it:
    // secrets masked (see `mask`).
    let masked = Masked::of(real);
    let text = masked.view();
    let lines = split_lines(text);
    let dominant = dominant_eol(&lines);
    let new_lf = new.replace("\r\n", "\n");
    let old_lf = old.replace("\r\n", "\n");
    let (pat, old_nl) = model_lines(&old_lf);
    let units = Units::of(&[&old_lf, &new_lf], &lines);
    for tier in LADDER {
        let cands = match tier {
            Tier::Exact => exact(text, old, replace_all),
            // Only a CR on either side makes this tier differ from exact.
            Tier::LineEndings if old_lf == old && !text.contains('\r') => Vec::new(),
            Tier::LineEndings => substring(text, &old_lf, false),
            Tier::Unicode => {
                let c = substring(text, &old_lf, true);
                if c.is_empty() {
                    windows(&lines, &pat, old_nl, tier, units)
                } else {
                    c
                }
            }
            _ => windows(&lines, &pat, old_nl, tier, units),
        };
        if cands.is_empty() {
            continue;
        }
        if cands.iter().any(|c| masked.overlaps(&(c.start..c.end))) {
            return Err(secret_refused(what));
        }
        if cands.len() > 1 && !replace_all {
            return Err(ambiguous(&cands, tier, what));
        }
        let cands: Vec<Candidate> = cands
            .into_iter()
            .map(|c| {
                let start = masked.to_real(c.start);
                Candidate {
                    start,
                    end: masked.to_real(c.end).max(start),
                    line: c.line,
                    map: c.map,
                }
            })
            .collect();
        let text = real;
        let mut out = String::with_capacity(text.len() + new.len());
        let mut at = 0;
        let mut notes = Notes::default();
        for c in &cands {
            out.push_str(&text[at..c.start]);
            if tier == Tier::Exact {
                let region = &text[c.start..c.end];
                out.push_str(&with_eols(&new_lf, &eols_in(region), dominant));
            } else {
                out.push_str(&render_region(
                    text, c, &pat, old_nl, &new_lf, dominant, &mut notes,
                )?);
            }
            at = c.end;
        }
        out.push_str(&text[at..]);
        let mut adapted = notes.finish();
        if tier != Tier::Exact && (old.contains('\r') || new.contains('\r') || text.contains('\r'))
        {
            adapted.insert(0, "line endings as the file has them".into());
        }
        return Ok(Applied {
            text: out,
            tier,
            count: cands.len(),
            lines: cands.iter().map(|c| c.line).collect(),
            stripped_line_numbers: false,
            adapted,
        });
    }
    let mut m = no_match_message(text, &lines, &old_lf, &new_lf, what);
    if masked.any() {
        m.push_str(&format!(
            " Note: {what} holds secrets wrench redacts; old_string is matched against the file as `read` shows it, so text inside a secret never matches: edit around the secret, replace its whole line by anchoring on the visible parts (delete_range), or ask the user."
        ));
    }
    Err(ToolError::no_match(m))
}

fn ambiguous(cands: &[Candidate], tier: Tier, what: &str) -> ToolError {
    let lines: Vec<usize> = cands.iter().map(|c| c.line).collect();
    ToolError::conflict(format!(
        "old_string matches {} places in {what}{}; include more surrounding lines to make it unique, or pass replace_all: true to change every one",
        cands.len(),
        places_phrase(&lines, tier)
    ))
}

/// " (how it matched), starting at lines 3, 9 and 2 more" for an ambiguity.
pub fn places_phrase(lines: &[usize], tier: Tier) -> String {
    let locs: Vec<String> = lines
        .iter()
        .take(AMBIGUOUS_LIST)
        .map(|l| l.to_string())
        .collect();
    let more = if lines.len() > AMBIGUOUS_LIST {
        format!(" and {} more", lines.len() - AMBIGUOUS_LIST)
    } else {
        String::new()
    };
    let how = if tier == Tier::Exact {
        String::new()
    } else {
        format!(" ({})", tier.describe())
    };
    format!("{how}, starting at lines {}{more}", locs.join(", "))
}

/// The note for look-alike characters written as the file has them.
pub fn look_alike_note(n: usize) -> String {
    format!(
        "{n} look-alike character{} (quotes, dashes, spaces) written as the file has {}",
        if n == 1 { "" } else { "s" },
        if n == 1 { "it" } else { "them" }
    )
}

/// What the recovery adapted over every replaced place.
#[derive(Default)]
struct Notes {
    indent: Vec<String>,
    trailing: bool,
    folded: usize,
    final_newline: bool,
}

impl Notes {
    fn finish(self) -> Vec<String> {
        let mut v = Vec::new();
        let mut indent = self.indent;
        indent.dedup();
        v.extend(indent);
        if self.trailing {
            v.push("trailing whitespace as the file has it".into());
        }
        if self.folded > 0 {
            v.push(look_alike_note(self.folded));
        }
        if self.final_newline {
            v.push("no final newline added (the file has none)".into());
        }
        v
    }
}

/// The line ending right after byte `end` of `text`, if any.
fn eol_at(text: &str, end: usize) -> &str {
    let rest = &text[end..];
    if rest.starts_with("\r\n") {
        "\r\n"
    } else if rest.starts_with('\n') {
        "\n"
    } else {
        ""
    }
}

/// The new text of one located place under the copied-lines rule.
fn render_region(
    text: &str,
    c: &Candidate,
    pat: &[&str],
    old_nl: bool,
    new_lf: &str,
    dominant: &str,
    notes: &mut Notes,
) -> ToolResult<String> {
    let region_text = &text[c.start..c.end];
    let mut region = split_lines(region_text);
    // A region ending at the start of an empty last line (old_string ends
    // with a blank line and no newline): that line is there, empty.
    if (region_text.is_empty() || region_text.ends_with('\n')) && region.len() + 1 == pat.len() {
        region.push(Line {
            text: "",
            eol: "",
            start: region_text.len(),
        });
    }
    let (newl, new_nl) = model_lines(new_lf);
    if region.len() != pat.len() {
        // Not expected for a located place; refuse rather than guess.
        return Err(ToolError::no_match(format!(
            "old_string was found near line {} but its lines could not be aligned with the file's; nothing was changed. Copy old_string exactly from the file",
            c.line
        )));
    }
    let rtext: Vec<&str> = region.iter().map(|l| l.text).collect();
    let after = eol_at(text, c.end);
    let last_i = region.len().saturating_sub(1);
    // The real ending of region line i (the last one's may lie after the region).
    let eol_of = |i: usize| -> &str {
        if i == last_i && region[i].eol.is_empty() && !old_nl {
            after
        } else {
            region[i].eol
        }
    };
    let eof_edge = old_nl && region.last().is_some_and(|l| l.eol.is_empty());
    let mut ad = Adapter {
        map: &c.map,
        drift: drift(&rtext, pat),
        folded: 0,
    };
    let steps = diff_steps(pat, &newl);
    let mut out = String::with_capacity(c.end - c.start + new_lf.len());
    let mut prev: Option<&str> = None;
    let n = steps.len();
    for (k, s) in steps.iter().enumerate() {
        let hint = match *s {
            Step::Copy(i, _) => {
                out.push_str(rtext[i]);
                Some(eol_of(i))
            }
            Step::Change(i, j) => {
                out.push_str(&ad.changed(rtext[i], pat[i], newl[j]));
                Some(eol_of(i))
            }
            Step::Insert(j) => {
                out.push_str(&ad.inserted(newl[j]));
                None
            }
        };
        let eol = if k + 1 == n && (!new_nl || eof_edge) {
            if eof_edge && new_nl {
                notes.final_newline = true;
            }
            ""
        } else {
            match hint.filter(|e| !e.is_empty()) {
                Some(e) => e,
                None => prev
                    .or((!region[0].eol.is_empty()).then_some(region[0].eol))
                    .or((!after.is_empty()).then_some(after))
                    .unwrap_or(dominant),
            }
        };
        out.push_str(eol);
        if !eol.is_empty() {
            prev = Some(eol);
        }
    }
    if let Some(d) = c.map.describe() {
        notes.indent.push(d);
    }
    notes.trailing |= ad.drift.trailing;
    notes.folded += ad.folded;
    Ok(out)
}

/// Exact occurrences; a second occurrence overlapping the first is just as
/// ambiguous.
fn exact(text: &str, old: &str, replace_all: bool) -> Vec<Candidate> {
    let mut cands: Vec<Candidate> = text
        .match_indices(old)
        .map(|(i, m)| Candidate {
            start: i,
            end: i + m.len(),
            line: 0,
            map: IndentMap::Same,
        })
        .collect();
    number_lines(text, &mut cands);
    if cands.len() == 1 && !replace_all {
        let start = cands[0].start;
        let next = text[start..].chars().next().map_or(1, char::len_utf8);
        if let Some(j) = text[start + next..].find(old) {
            let at = start + next + j;
            cands.push(Candidate {
                start: at,
                end: at + old.len(),
                line: line_of(text, at),
                map: IndentMap::Same,
            });
        }
    }
    cands
}

/// Occurrences of `old_lf` in the text's LF view (look-alikes folded on both
/// sides with `folded`), mapped back to byte ranges of the text.
fn substring(text: &str, old_lf: &str, folded: bool) -> Vec<Candidate> {
    let mut view = String::with_capacity(text.len());
    // (view offset, text offset) of every char of the view.
    let mut at: Vec<(usize, usize)> = Vec::with_capacity(text.len());
    let b = text.as_bytes();
    for (i, ch) in text.char_indices() {
        if ch == '\r' && b.get(i + 1) == Some(&b'\n') {
            continue;
        }
        at.push((view.len(), i));
        view.push(if folded { fold_char(ch) } else { ch });
    }
    let pat = if folded { fold(old_lf) } else { old_lf.into() };
    let back = |v: usize| -> usize {
        if v >= view.len() {
            return text.len();
        }
        let k = at.partition_point(|&(vo, _)| vo < v);
        let t = at.get(k).map_or(text.len(), |&(_, t)| t);
        // Before a `\n` whose `\r` the view dropped: end before the `\r`.
        if t > 0 && b[t] == b'\n' && b[t - 1] == b'\r' {
            t - 1
        } else {
            t
        }
    };
    let mut cands: Vec<Candidate> = view
        .match_indices(pat.as_ref())
        .map(|(i, m)| {
            let start = back(i);
            Candidate {
                start,
                end: back(i + m.len()).max(start),
                line: 0,
                map: IndentMap::Same,
            }
        })
        .filter(|c| text.is_char_boundary(c.start) && text.is_char_boundary(c.end))
        .collect();
    number_lines(text, &mut cands);
    cands
}

/// Whole-line windows matching `pat` at a line tier (non-overlapping).
fn windows(
    lines: &[Line<'_>],
    pat: &[&str],
    old_nl: bool,
    tier: Tier,
    units: Units,
) -> Vec<Candidate> {
    if pat.is_empty() || pat.len() > lines.len() {
        return vec![];
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i + pat.len() <= lines.len() {
        let win = &lines[i..i + pat.len()];
        match window_map(win, pat, tier, units) {
            Some(map) => {
                let last = win[win.len() - 1];
                let end = last.start + last.text.len() + if old_nl { last.eol.len() } else { 0 };
                out.push(Candidate {
                    start: win[0].start,
                    end,
                    line: i + 1,
                    map,
                });
                i += pat.len();
            }
            None => i += 1,
        }
    }
    out
}

/// Longest pair of lines (in bytes, both together) scored by a character
/// diff; longer pairs take the linear bigram score.
pub const NEAREST_DIFF_PAIR_BYTES: usize = 400;
/// Most work the character diffs of one search may do, counted as the sum
/// of `(len_a + len_b)²` over the pairs scored; past it, pairs take the
/// linear bigram score and the search says it was cut. Keeps a miss's
/// hint linear in the file (it runs under the workspace write lock).
pub const NEAREST_DIFF_BUDGET: usize = 20_000_000;

/// Scores line pairs for [`nearest`] within its work bounds.
#[derive(Default)]
struct Scorer {
    spent: usize,
    cut: bool,
}

impl Scorer {
    fn similarity(&mut self, a: &str, b: &str) -> f32 {
        let (a, b) = (a.trim(), b.trim());
        if a == b {
            return 1.0;
        }
        if a.is_empty() || b.is_empty() {
            return 0.0;
        }
        let n = a.len() + b.len();
        if n <= NEAREST_DIFF_PAIR_BYTES {
            if self.spent + n * n <= NEAREST_DIFF_BUDGET {
                self.spent += n * n;
                return similar::TextDiff::from_chars(a, b).ratio();
            }
            self.cut = true;
        }
        bigram_similarity(a, b)
    }
}

/// Dice coefficient of the character bigrams of `a` and `b`: linear in
/// their length.
fn bigram_similarity(a: &str, b: &str) -> f32 {
    fn grams(s: &str) -> std::collections::HashMap<(char, char), usize> {
        let mut m = std::collections::HashMap::new();
        let mut it = s.chars();
        if let Some(mut prev) = it.next() {
            for c in it {
                *m.entry((prev, c)).or_insert(0) += 1;
                prev = c;
            }
        }
        m
    }
    let (ga, gb) = (grams(a), grams(b));
    let total: usize = ga.values().sum::<usize>() + gb.values().sum::<usize>();
    if total == 0 {
        return if a == b { 1.0 } else { 0.0 };
    }
    let common: usize = ga
        .iter()
        .map(|(k, &n)| n.min(gb.get(k).copied().unwrap_or(0)))
        .sum();
    (2 * common) as f32 / total as f32
}

/// Where the pattern comes closest, as numbered lines for the error.
pub fn nearest(lines: &[Line<'_>], pat: &[&str]) -> Option<(usize, usize)> {
    nearest_bounded(lines, pat).0
}

/// [`nearest`], and whether its search was cut (only the first
/// [`NEAREST_SCAN_LINES`] lines scanned, or [`NEAREST_DIFF_BUDGET`] spent):
/// then the lines shown may not be the closest.
pub fn nearest_bounded(lines: &[Line<'_>], pat: &[&str]) -> (Option<(usize, usize)>, bool) {
    let Some(first) = pat.iter().position(|p| !p.trim().is_empty()) else {
        return (None, false);
    };
    let mut sc = Scorer::default();
    let scan = lines.len().min(NEAREST_SCAN_LINES);
    let mut scored: Vec<(f32, usize)> = (0..scan)
        .map(|i| (sc.similarity(lines[i].text, pat[first]), i))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored
        .iter()
        .take(5)
        .filter(|(s, _)| *s > 0.3)
        .map(|&(_, i)| {
            let start = i.saturating_sub(first);
            let n = pat.len().min(lines.len() - start);
            let total: f32 = (0..n)
                .map(|k| sc.similarity(lines[start + k].text, pat[k]))
                .sum();
            (total, start, n)
        })
        .max_by(|a, b| a.0.total_cmp(&b.0));
    (
        best.map(|b| (b.1, b.2)),
        sc.cut || lines.len() > NEAREST_SCAN_LINES,
    )
}

/// What a miss's message says when the closest-lines search was cut.
pub fn nearest_cut_note() -> String {
    format!(
        " (The search for the closest lines was cut at its work limit ({NEAREST_SCAN_LINES} lines, long lines compared coarsely): lines closer still may exist.)"
    )
}

/// "line 3" or "lines 3-5" for `n` lines from 0-based `start`.
pub fn span(start: usize, n: usize) -> String {
    if n <= 1 {
        format!("line {}", start + 1)
    } else {
        format!("lines {}-{}", start + 1, start + n)
    }
}

fn no_match_message(
    text: &str,
    lines: &[Line<'_>],
    old_lf: &str,
    new_lf: &str,
    what: &str,
) -> String {
    let pat: Vec<&str> = old_lf.trim_end_matches('\n').split('\n').collect();
    let mut m = format!(
        "old_string was not found in {what} (tried: exact, line endings, trailing whitespace, indentation shift or tabs/spaces, Unicode look-alikes)."
    );
    let new_body = new_lf.trim();
    if !new_body.is_empty() && new_body != old_lf.trim() {
        let view = text.replace("\r\n", "\n");
        let view = fold(&view);
        if let Some(i) = view.find(fold(new_body).as_ref()) {
            m.push_str(&format!(
                " new_string is already in {what} at line {}: the edit looks applied already; nothing was changed.",
                view[..i].matches('\n').count() + 1
            ));
        }
    }
    let (near, cut) = nearest_bounded(lines, &pat);
    if cut {
        m.push_str(&nearest_cut_note());
    }
    match near {
        Some((start, n)) => {
            let shown = n.min(NEAREST_SHOW_LINES);
            m.push_str(&format!(" The closest lines ({}):\n", span(start, shown)));
            for (k, l) in lines[start..start + shown].iter().enumerate() {
                m.push_str(&format!("{:>6}\t{}\n", start + k + 1, l.text));
            }
            m.push_str(
                "Copy old_string exactly from the file (read it again if it may have changed).",
            );
        }
        None => {
            m.push_str(" No similar lines exist; read the file again and copy old_string exactly.")
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str, old: &str, new: &str) -> Applied {
        replace(text, old, new, false, "f").unwrap()
    }

    #[test]
    fn exact_unique_match_is_replaced() {
        let a = ok("a\nb\nc\n", "b", "B");
        assert_eq!(a.text, "a\nB\nc\n");
        assert_eq!(a.tier, Tier::Exact);
        assert_eq!(a.lines, vec![2]);
    }

    #[test]
    fn duplicates_are_a_conflict_listing_every_location() {
        let e = replace("x\ny\nx\nz\nx\n", "x", "X", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("3 places"), "{}", e.message);
        assert!(e.message.contains("lines 1, 3, 5"), "{}", e.message);
    }

    #[test]
    fn overlapping_occurrences_are_ambiguous() {
        let e = replace("aaa\n", "aa", "b", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
    }

    #[test]
    fn replace_all_replaces_every_occurrence() {
        let a = replace("x\ny\nx\n", "x", "X", true, "f").unwrap();
        assert_eq!(a.text, "X\ny\nX\n");
        assert_eq!(a.count, 2);
    }

    #[test]
    fn lf_old_string_matches_crlf_file_and_new_text_gets_crlf() {
        let a = ok("a\r\nb\r\nc\r\n", "a\nb\n", "A\nB\nNEW\n");
        assert_eq!(a.text, "A\r\nB\r\nNEW\r\nc\r\n");
        assert_eq!(a.tier, Tier::LineEndings);
    }

    #[test]
    fn mixed_line_endings_are_kept_per_line() {
        let a = ok("a\r\nb\nc\r\n", "a\nb\nc", "1\n2\n3");
        assert_eq!(a.text, "1\r\n2\n3\r\n");
        let b = ok("a\r\nb\nc\r\n", "b", "x\ny");
        assert_eq!(b.text, "a\r\nx\r\ny\nc\r\n");
    }

    #[test]
    fn trailing_whitespace_differences_are_tolerated() {
        let a = ok(
            "fn a() {   \n  x();\n}\n",
            "fn a() {\n  x();\n",
            "fn b() {\n  y();\n",
        );
        // the changed line keeps the file's trailing whitespace
        assert_eq!(a.text, "fn b() {   \n  y();\n}\n");
        assert_eq!(a.tier, Tier::TrailingWhitespace);
    }

    #[test]
    fn indentation_shift_reindents_new_string() {
        let file = "impl A {\n        fn f() {\n            g();\n        }\n}\n";
        let a = ok(
            file,
            "fn f() {\n    g();\n}",
            "fn f() {\n    h();\n    i();\n}",
        );
        assert_eq!(a.tier, Tier::Indentation);
        assert_eq!(
            a.text,
            "impl A {\n        fn f() {\n            h();\n            i();\n        }\n}\n"
        );
    }

    #[test]
    fn unicode_look_alikes_match() {
        let a = ok(
            "say(\u{201C}hi\u{201D}) \u{2014} ok\n",
            "say(\"hi\") - ok",
            "say(\"bye\")",
        );
        assert_eq!(a.tier, Tier::Unicode);
        // what the model copied is written as the file has it
        assert_eq!(a.text, "say(\u{201C}bye\u{201D})\n");
    }

    #[test]
    fn look_alikes_the_model_wrote_for_ascii_are_not_written_into_code() {
        let file = "fn main() {\n    let s = bind(\"127.0.0.1:0\");\n    let d = a - b;\n}\n";
        let a = ok(
            file,
            "    let s = bind(\u{201C}127.0.0.1:0\u{201D});\n    let d = a \u{2013} b;\n",
            "    let s = bind(\u{201C}127.0.0.1:0\u{201D});\n    let d = a \u{2013} c;\n    log(\u{201C}d\u{201D});\n",
        );
        assert_eq!(
            a.text,
            "fn main() {\n    let s = bind(\"127.0.0.1:0\");\n    let d = a - c;\n    log(\"d\");\n}\n"
        );
        assert!(
            a.adapted.iter().any(|n| n.contains("look-alike")),
            "{:?}",
            a.adapted
        );
    }

    #[test]
    fn a_single_line_fragment_with_look_alikes_is_found_inside_its_line() {
        let a = ok(
            "x = bind(\"a\") + 1\n",
            "bind(\u{201C}a\u{201D})",
            "bind(\u{201C}b\u{201D})",
        );
        assert_eq!(a.text, "x = bind(\"b\") + 1\n");
    }

    #[test]
    fn tab_indented_file_takes_a_space_indented_edit_and_keeps_its_tabs() {
        let file = "func f() {\n\tif x {\n\t\ty()\n\t}\n}\n";
        for w in [2usize, 4, 8] {
            let sp = |n: usize| " ".repeat(n * w);
            let old = format!("{}if x {{\n{}y()\n{}}}\n", sp(1), sp(2), sp(1));
            let new = format!(
                "{}if x {{\n{}y()\n{}z()\n{}}}\n",
                sp(1),
                sp(2),
                sp(2),
                sp(1)
            );
            let a = ok(file, &old, &new);
            assert_eq!(a.tier, Tier::Indentation, "width {w}");
            assert_eq!(
                a.text, "func f() {\n\tif x {\n\t\ty()\n\t\tz()\n\t}\n}\n",
                "width {w}"
            );
        }
    }

    #[test]
    fn space_indented_file_takes_a_tab_indented_edit() {
        let file = "def f():\n    if x:\n        y()\n    return 1\n";
        let a = ok(file, "\tif x:\n\t\ty()\n", "\tif x:\n\t\ty()\n\t\tz()\n");
        assert_eq!(
            a.text,
            "def f():\n    if x:\n        y()\n        z()\n    return 1\n"
        );
        assert!(
            a.adapted.iter().any(|n| n.contains("tabs → 4 spaces")),
            "{:?}",
            a.adapted
        );
    }

    #[test]
    fn tabs_or_spaces_recovery_applies_only_a_unique_candidate() {
        let file = "a:\n\tx()\n\ty()\nb:\n\tx()\n\ty()\n";
        let e = replace(file, "    x()\n    y()\n", "    z()\n", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("lines 2, 5"), "{}", e.message);
    }

    #[test]
    fn old_string_ending_in_newline_at_a_file_without_one_adds_no_line() {
        let a = ok("a\nlast", "last\n", "LAST\n");
        assert_eq!(a.text, "a\nLAST");
        let b = ok("a\n  last", "last\n", "last\nmore\n");
        assert_eq!(b.text, "a\n  last\n  more");
    }

    #[test]
    fn an_old_string_ending_in_a_blank_line_without_newline_copies_it() {
        let file = "a\nb\n\nc\n";
        let a = ok(file, "a \nb \n ", "a \nb \n ");
        assert_eq!(a.text, file);
        let b = ok(file, "a \nb \n ", "a \nB \n ");
        assert_eq!(b.text, "a\nB\n\nc\n");
    }

    #[test]
    fn copied_lines_keep_the_files_bytes_and_line_endings() {
        let file = "a  \r\n\u{201C}q\u{201D} \u{2014} b\r\nc\r\n";
        let a = ok(file, "a\n\"q\" - b\nc\n", "a\n\"q\" - b\nC\n");
        assert_eq!(a.text, "a  \r\n\u{201C}q\u{201D} \u{2014} b\r\nC\r\n");
    }

    #[test]
    fn escaped_non_ascii_characters_are_read_as_themselves() {
        let a = ok(
            "s = \"caf\u{e9}\"\n",
            "s = \"caf\\u00e9\"",
            "s = \"caf\\u00e9s\"",
        );
        assert_eq!(a.text, "s = \"caf\u{e9}s\"\n");
    }

    #[test]
    fn an_edit_already_applied_says_so() {
        let e = replace(
            "x = new_name(1)\n",
            "x = old_name(1)",
            "x = new_name(1)",
            false,
            "f",
        )
        .unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::NoMatch);
        assert!(e.message.contains("already"), "{}", e.message);
    }

    #[test]
    fn ambiguous_lenient_candidate_is_refused() {
        let e = replace("a  \nb\na \nb\n", "a\nb", "c", false, "f").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::Conflict);
        assert!(e.message.contains("trailing whitespace"), "{}", e.message);
    }

    #[test]
    fn read_output_line_number_prefixes_are_stripped_from_both_strings() {
        let a = ok(
            "one\ntwo\nthree\n",
            "     2\ttwo\n     3\tthree",
            "     2\tTWO\n     3\tTHREE",
        );
        assert!(a.stripped_line_numbers);
        assert_eq!(a.text, "one\nTWO\nTHREE\n");
    }

    #[test]
    fn miss_shows_the_closest_real_lines_with_numbers() {
        let e = replace(
            "alpha\nlet total = compute(a, b);\nomega\n",
            "let total = compute(a, c);",
            "x",
            false,
            "f.rs",
        )
        .unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::NoMatch);
        assert!(
            e.message.contains("     2\tlet total = compute(a, b);"),
            "{}",
            e.message
        );
    }

    #[test]
    fn empty_old_string_is_invalid() {
        assert_eq!(
            replace("a", "", "b", false, "f").unwrap_err().kind,
            wrench_core::ErrorKind::InvalidArgs
        );
    }

    #[test]
    fn a_miss_on_a_long_minified_line_scores_it_linearly() {
        let file = "var a=1;".repeat(10_000);
        let lines = split_lines(&file);
        let mut sc = Scorer::default();
        let s = sc.similarity(lines[0].text, "var a=2;var a=1;");
        // The pair is too long for a character diff: no diff work spent.
        assert_eq!(sc.spent, 0);
        assert!(s < 0.01, "{s}");
        let e = replace(&file, "var a=2;var a=1;", "x", false, "m.js").unwrap_err();
        assert_eq!(e.kind, wrench_core::ErrorKind::NoMatch);
    }

    #[test]
    fn a_search_past_its_diff_budget_says_it_was_cut() {
        let file: String = (0..2_000).map(|i| format!("{i:0>190}\n")).collect();
        let old = "q".repeat(190);
        let e = replace(&file, &old, "x", false, "f").unwrap_err();
        assert!(
            e.message.contains("was cut at its work limit"),
            "{}",
            e.message
        );
        let small = replace("abc\n", "abd", "x", false, "f").unwrap_err();
        assert!(!small.message.contains("was cut"), "{}", small.message);
    }

    #[test]
    fn replace_all_numbers_every_place_in_order() {
        let file = "x\n".repeat(5_000);
        let a = replace(&file, "x", "y", true, "f").unwrap();
        assert_eq!(a.count, 5_000);
        assert_eq!(a.lines, (1..=5_000).collect::<Vec<_>>());
    }
}
