//! The generator of `tests/data/near_miss/cases.jsonl`: windows cut from real
//! package sources (the benchmark corpus, `../shared/bench/make-corpus.sh`),
//! an intended change (a renamed identifier, an inserted line, a deleted
//! line), and the model's view of both sides with one realistic mistake (or
//! two). The expected bytes are built from the intended change in the file's
//! own style, never by running the engine.
//!
//! Regenerate: `WRENCH_CORPUS=/path/to/corpus cargo test -p wrench-tools-edit
//! --test near_miss -- --ignored generate --nocapture`.

use super::Case;
use wrench_core::text::{self, Encoding, Legacy};

/// Lines in one case's file.
const WINDOW: usize = 14;

/// xorshift64*: deterministic, so a regeneration gives the same cases.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("rs" | "py" | "go" | "js" | "ts")
        ) {
            out.push(p);
        }
    }
}

fn indent_of(l: &str) -> &str {
    &l[..l.len() - l.trim_start_matches([' ', '\t']).len()]
}

/// The first identifier of 3+ characters in the line's content, as a byte range.
fn word(l: &str) -> Option<(usize, usize)> {
    let b = l.as_bytes();
    let mut i = indent_of(l).len();
    while i < b.len() {
        if b[i].is_ascii_alphabetic() || b[i] == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            if i - s >= 3 {
                return Some((s, i));
            }
        } else {
            i += 1;
        }
    }
    None
}

fn fold(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' => '\'',
        '\u{201C}' | '\u{201D}' => '"',
        '\u{2013}' | '\u{2014}' => '-',
        '\u{00A0}' => ' ',
        c => c,
    }
}

/// A line as every lenient tier sees it at most: look-alikes folded, no
/// leading or trailing whitespace.
fn norm(l: &str) -> String {
    l.chars().map(fold).collect::<String>().trim().to_string()
}

/// How many places `k` lines like `slice` (normalized) occur in `lines`.
fn loose_count(lines: &[String], slice: &[String]) -> usize {
    let want: Vec<String> = slice.iter().map(|l| norm(l)).collect();
    (0..=lines.len().saturating_sub(slice.len()))
        .filter(|&i| (0..slice.len()).all(|k| norm(&lines[i + k]) == want[k]))
        .count()
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mistake {
    None,
    SmartQuotes,
    Dashes,
    Nbsp,
    TabsToSpaces(usize),
    SpacesToTabs(usize),
    SpacesWidth(usize, usize),
    TrailingWsModel,
    TrailingWsFile,
    Crlf,
    CrlfMixed,
    NoFinalNewline,
    Dedent,
    Indent,
    LineNumbers,
    UnicodeEscapes,
    AsciiForTypographic,
    QuotesAndTabs(usize),
    CrlfAndTrailing,
    ModelCrlf,
}

impl Mistake {
    fn name(self) -> String {
        format!("{self:?}")
            .to_lowercase()
            .replace(['(', ')'], "_")
            .replace(", ", "_")
            .trim_end_matches('_')
            .to_string()
    }
}

/// Apply the model's mistake to one line of the model's text.
fn model_line(m: Mistake, l: &str, flip: &mut bool, rng: &mut Rng) -> String {
    let quotes = |s: &str, flip: &mut bool| -> String {
        s.chars()
            .map(|c| match c {
                '"' => {
                    *flip = !*flip;
                    if *flip { '\u{201C}' } else { '\u{201D}' }
                }
                '\'' => '\u{2019}',
                c => c,
            })
            .collect()
    };
    let ind = indent_of(l);
    let body = &l[ind.len()..];
    let retab = |ind: &str, from_tab: usize, to: &str| -> String {
        // a tab is `from_tab` columns; columns regrouped into `to` units
        let cols: usize = ind
            .chars()
            .map(|c| if c == '\t' { from_tab } else { 1 })
            .sum();
        let unit = if to == "\t" { from_tab } else { to.len() };
        format!("{}{}", to.repeat(cols / unit), " ".repeat(cols % unit))
    };
    match m {
        Mistake::TrailingWsFile => l.trim_end().to_string(),
        Mistake::None
        | Mistake::ModelCrlf
        | Mistake::Crlf
        | Mistake::CrlfMixed
        | Mistake::NoFinalNewline
        | Mistake::LineNumbers => l.to_string(),
        Mistake::SmartQuotes => quotes(l, flip),
        Mistake::Dashes => {
            let d = if rng.below(2) == 0 {
                "\u{2013}"
            } else {
                "\u{2014}"
            };
            format!("{ind}{}", body.replace('-', d))
        }
        Mistake::Nbsp => format!("{ind}{}", body.replace(' ', "\u{00A0}")),
        Mistake::TabsToSpaces(w) => format!("{}{body}", retab(ind, w, &" ".repeat(w))),
        Mistake::SpacesToTabs(w) => {
            let n = ind.len();
            format!("{}{}{body}", "\t".repeat(n / w), " ".repeat(n % w))
        }
        Mistake::SpacesWidth(from, to) => {
            let n = ind.len();
            format!(
                "{}{}{body}",
                " ".repeat(n / from * to),
                " ".repeat(n % from)
            )
        }
        Mistake::TrailingWsModel => {
            if l.trim().is_empty() {
                l.to_string()
            } else {
                format!("{l}  ")
            }
        }
        Mistake::Dedent => l.to_string(),
        Mistake::Indent => {
            if l.trim().is_empty() {
                l.to_string()
            } else {
                format!("    {l}")
            }
        }
        Mistake::UnicodeEscapes => l
            .chars()
            .map(|c| {
                if c.is_ascii() {
                    c.to_string()
                } else {
                    format!("\\u{:04x}", u32::from(c))
                }
            })
            .collect(),
        Mistake::AsciiForTypographic => l.chars().map(fold).collect(),
        Mistake::QuotesAndTabs(w) => {
            let q = quotes(body, flip);
            format!("{}{q}", retab(ind, w, &" ".repeat(w)))
        }
        Mistake::CrlfAndTrailing => {
            if l.trim().is_empty() {
                l.to_string()
            } else {
                format!("{l} ")
            }
        }
    }
}

/// The model's text of `lines` (LF; each line ends with `\n`).
fn model_text(
    m: Mistake,
    lines: &[String],
    rng: &mut Rng,
    first_no: usize,
    common: &str,
) -> String {
    let mut flip = false;
    let mut out: Vec<String> = lines
        .iter()
        .map(|l| model_line(m, l, &mut flip, rng))
        .collect();
    if m == Mistake::Dedent {
        out = out
            .into_iter()
            .map(|l| l.strip_prefix(common).unwrap_or(&l).to_string())
            .collect();
    }
    if m == Mistake::LineNumbers {
        out = out
            .into_iter()
            .enumerate()
            .map(|(k, l)| format!("{:>6}\t{l}", first_no + k))
            .collect();
    }
    let eol = if m == Mistake::ModelCrlf {
        "\r\n"
    } else {
        "\n"
    };
    out.iter().map(|l| format!("{l}{eol}")).collect()
}

/// The indentation every non-blank line of `lines` shares.
fn common_indent(lines: &[String]) -> String {
    lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l).to_string())
        .min_by_key(|s| s.len())
        .unwrap_or_default()
}

fn applies(m: Mistake, slice: &[String]) -> bool {
    let any = |f: &dyn Fn(&str) -> bool| slice.iter().any(|l| f(l));
    match m {
        Mistake::SmartQuotes => any(&|l| l.contains('"') || l.contains('\'')),
        Mistake::QuotesAndTabs(_) => {
            any(&|l| l.contains('"') || l.contains('\'')) && any(&|l| l.starts_with('\t'))
        }
        Mistake::Dashes => any(&|l| l.trim_start().contains('-')),
        Mistake::Nbsp => any(&|l| l.trim().contains(' ')),
        Mistake::TabsToSpaces(_) => any(&|l| l.starts_with('\t')),
        Mistake::SpacesToTabs(w) | Mistake::SpacesWidth(w, _) => {
            any(&|l| indent_of(l).len() >= w)
                && slice.iter().all(|l| {
                    let i = indent_of(l);
                    !i.contains('\t') && (l.trim().is_empty() || i.len().is_multiple_of(w))
                })
        }
        Mistake::Dedent => slice
            .iter()
            .filter(|l| !l.trim().is_empty())
            .all(|l| !indent_of(l).is_empty()),
        Mistake::UnicodeEscapes => any(&|l| !l.is_ascii()),
        Mistake::AsciiForTypographic => any(&|l| l.chars().any(|c| fold(c) != c)),
        _ => true,
    }
}

const MISTAKES: &[(Mistake, usize)] = &[
    (Mistake::None, 12),
    (Mistake::SmartQuotes, 36),
    (Mistake::Dashes, 28),
    (Mistake::Nbsp, 20),
    (Mistake::TabsToSpaces(4), 25),
    (Mistake::TabsToSpaces(2), 12),
    (Mistake::TabsToSpaces(8), 12),
    (Mistake::SpacesToTabs(4), 20),
    (Mistake::SpacesToTabs(2), 12),
    (Mistake::SpacesWidth(4, 2), 10),
    (Mistake::SpacesWidth(2, 4), 10),
    (Mistake::TrailingWsModel, 18),
    (Mistake::TrailingWsFile, 15),
    (Mistake::Crlf, 20),
    (Mistake::CrlfMixed, 10),
    (Mistake::NoFinalNewline, 20),
    (Mistake::Dedent, 20),
    (Mistake::Indent, 12),
    (Mistake::LineNumbers, 12),
    (Mistake::UnicodeEscapes, 10),
    (Mistake::AsciiForTypographic, 12),
    (Mistake::QuotesAndTabs(4), 12),
    (Mistake::CrlfAndTrailing, 10),
    (Mistake::ModelCrlf, 10),
];

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Change {
    Rename,
    Insert,
    RenameInsert,
    Delete,
    Identity,
}

fn marker_line(path: &str) -> &'static str {
    if path.ends_with(".py") {
        "wrench_marker = \"on\"  # added"
    } else if path.ends_with(".go") {
        "wrenchMarker(\"on\") // added"
    } else {
        "wrench_marker(\"on\"); // added"
    }
}

/// The intended new lines of the slice (file style), or None when the
/// change does not fit the slice.
fn change_lines(ch: Change, slice: &[String], j: usize, path: &str) -> Option<Vec<String>> {
    let mut out = slice.to_vec();
    let rename = |l: &str| word(l).map(|(s, e)| format!("{}{}_v2{}", &l[..s], &l[s..e], &l[e..]));
    match ch {
        Change::Identity => {}
        Change::Rename => out[j] = rename(&slice[j])?,
        Change::Insert => out.insert(
            j + 1,
            format!("{}{}", indent_of(&slice[j]), marker_line(path)),
        ),
        Change::RenameInsert => {
            out[j] = rename(&slice[j])?;
            out.insert(
                j + 1,
                format!("{}{}", indent_of(&slice[j]), marker_line(path)),
            );
        }
        Change::Delete => {
            if slice.len() < 3 {
                return None;
            }
            out.remove(j);
        }
    }
    Some(out)
}

fn join(lines: &[String], eols: &[&str]) -> String {
    lines
        .iter()
        .zip(eols)
        .map(|(l, e)| format!("{l}{e}"))
        .collect()
}

struct Source {
    path: String,
    lines: Vec<String>,
}

fn sources(root: &std::path::Path) -> Vec<Source> {
    let mut files = Vec::new();
    walk(root, &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let t = std::fs::read_to_string(&p).ok()?;
            if t.contains('\r') || t.len() > 400_000 || t.lines().count() < WINDOW {
                return None;
            }
            let rel = p.strip_prefix(root).ok()?.to_string_lossy().to_string();
            Some(Source {
                path: rel,
                lines: t.lines().map(str::to_string).collect(),
            })
        })
        .collect()
}

/// A window of the source and a slice in it that fits `m` and is unique
/// even as the most lenient tier sees it.
fn pick<'a>(
    src: &'a [Source],
    rng: &mut Rng,
    ok: impl Fn(&[String], &[String]) -> bool,
) -> Option<(&'a Source, usize, Vec<String>, usize, usize)> {
    for _ in 0..4000 {
        let s = &src[rng.below(src.len())];
        let w0 = rng.below(s.lines.len() - WINDOW + 1);
        let win: Vec<String> = s.lines[w0..w0 + WINDOW].to_vec();
        let k = 2 + rng.below(4);
        let at = rng.below(WINDOW - k + 1);
        let slice = &win[at..at + k];
        if slice.iter().all(|l| l.trim().is_empty()) || slice.iter().any(|l| l.len() > 160) {
            continue;
        }
        if ok(&win, slice) {
            return Some((s, w0, win, at, k));
        }
    }
    None
}

fn case_id(n: usize, kind: &str) -> String {
    format!("{n:04}-{kind}")
}

pub fn generate(root: &std::path::Path) -> Vec<Case> {
    let src = sources(root);
    assert!(!src.is_empty(), "no sources under {}", root.display());
    let mut rng = Rng(0x5EED_2026_0021);
    let mut cases = Vec::new();
    let changes = [
        Change::Rename,
        Change::Insert,
        Change::RenameInsert,
        Change::Delete,
        Change::Rename,
    ];
    for &(m, count) in MISTAKES {
        let mut made = 0;
        for _ in 0..count * 8 {
            if made == count {
                break;
            }
            let ch = if rng.below(8) == 0 {
                Change::Identity
            } else {
                changes[rng.below(changes.len())]
            };
            if let Some(c) = applied_case(&src, &mut rng, m, ch, cases.len()) {
                cases.push(c);
                made += 1;
            }
        }
    }
    let mut made = 0;
    for _ in 0..400 {
        if made == 25 {
            break;
        }
        if let Some(c) = ambiguous_case(&src, &mut rng, cases.len()) {
            cases.push(c);
            made += 1;
        }
    }
    for i in 0..25 {
        let m = [
            Mistake::None,
            Mistake::SmartQuotes,
            Mistake::TabsToSpaces(4),
        ][i % 3];
        for hallucinated in [true, false] {
            for _ in 0..20 {
                if let Some(c) = refused_case(&src, &mut rng, m, hallucinated, cases.len()) {
                    cases.push(c);
                    break;
                }
            }
        }
    }
    let mut made = 0;
    for i in 0..2000 {
        if made == 40 {
            break;
        }
        if let Some(c) = legacy_case(&src, &mut rng, made % 5 == 4, cases.len()) {
            cases.push(c);
            made += 1;
        }
        let _ = i;
    }
    cases
}

fn applied_case(src: &[Source], rng: &mut Rng, m: Mistake, ch: Change, n: usize) -> Option<Case> {
    let tab_file = matches!(m, Mistake::TabsToSpaces(_) | Mistake::QuotesAndTabs(_));
    let want_w = match m {
        Mistake::SpacesToTabs(w) | Mistake::SpacesWidth(w, _) => Some(w),
        _ => None,
    };
    let (s, w0, mut win, at, k) = pick(src, rng, |win, slice| {
        if !applies(m, slice) || loose_count(win, slice) != 1 {
            return false;
        }
        let has_tabs = win.iter().any(|l| l.starts_with('\t'));
        if tab_file != has_tabs {
            return false;
        }
        if let Some(w) = want_w {
            // the file's unit must be w: indents in the window are multiples of w
            // and some consecutive lines differ by exactly w
            let ind: Vec<usize> = win
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| indent_of(l).len())
                .collect();
            if ind.iter().any(|i| i % w != 0) || !ind.windows(2).any(|p| p[0].abs_diff(p[1]) == w) {
                return false;
            }
            if w == 2 && ind.windows(2).any(|p| p[0].abs_diff(p[1]) == 4) {
                return false;
            }
        }
        if m == Mistake::UnicodeEscapes
            && !win
                .iter()
                .all(|l| l.chars().all(|c| c.is_ascii() || c.is_alphabetic()))
        {
            return false;
        }
        true
    })?;
    let mut slice: Vec<String> = win[at..at + k].to_vec();
    let cand: Vec<usize> = (0..k)
        .filter(|&j| word(&slice[j]).is_some() && !slice[j].trim().is_empty())
        .collect();
    if cand.is_empty() {
        return None;
    }
    let j = cand[rng.below(cand.len())];
    // File-side variations.
    let mut eols = vec!["\n"; WINDOW];
    match m {
        Mistake::TrailingWsFile => {
            for l in win[at..at + k].iter_mut() {
                if !l.trim().is_empty() && rng.below(2) == 0 {
                    l.push_str("   ");
                }
            }
            slice = win[at..at + k].to_vec();
        }
        Mistake::Crlf | Mistake::CrlfAndTrailing => eols = vec!["\r\n"; WINDOW],
        Mistake::CrlfMixed => {
            for (i, e) in eols.iter_mut().enumerate() {
                if i % 2 == 0 {
                    *e = "\r\n";
                }
            }
        }
        _ => {}
    }
    // The slice ends the file in the no-final-newline case.
    if m == Mistake::NoFinalNewline && win[at + k - 1].trim().is_empty() {
        return None;
    }
    let (win, at) = if m == Mistake::NoFinalNewline {
        let cut = at + k;
        win.truncate(cut);
        eols[cut - 1] = "";
        (win, at)
    } else {
        (win, at)
    };
    let eols = &eols[..win.len()];
    let new_slice = change_lines(ch, &slice, j, &s.path)?;
    let file = join(&win, eols);
    // Expected: the slice replaced by the new lines in the file's style;
    // copied lines keep their own ending, a changed line its line's, an
    // inserted line the ending of the line before it.
    let mut exp_lines: Vec<String> = win[..at].to_vec();
    let mut exp_eols: Vec<&str> = eols[..at].to_vec();
    let slice_eols = &eols[at..at + k];
    for (q, l) in new_slice.iter().enumerate() {
        let e = match ch {
            Change::Insert | Change::RenameInsert if q == j + 1 => slice_eols[j],
            Change::Insert | Change::RenameInsert if q > j + 1 => slice_eols[q - 1],
            Change::Delete if q >= j => slice_eols[q + 1],
            _ => slice_eols[q],
        };
        exp_lines.push(l.clone());
        exp_eols.push(e);
    }
    exp_lines.extend(win[at + k..].iter().cloned());
    exp_eols.extend(eols[at + k..].iter().copied());
    // an inserted line after the file's last line (no final newline) ends
    // with the line before's ending, and the last line keeps none
    if m == Mistake::NoFinalNewline {
        let last = exp_eols.len() - 1;
        for e in exp_eols.iter_mut().take(last) {
            if e.is_empty() {
                *e = "\n";
            }
        }
        exp_eols[last] = "";
    }
    let expect = join(&exp_lines, &exp_eols);
    // The model's view.
    let common = common_indent(&slice);
    let old = model_text(m, &slice, rng, at + 1, &common);
    let new = model_text(m, &new_slice, rng, at + 1, &common);
    // Nor occur more than once in the file's LF view (mid-line included).
    let lf = file.replace("\r\n", "\n");
    if lf.matches(old.replace("\r\n", "\n").as_str()).count() > 1 {
        return None;
    }
    // A perturbation must not make old_string occur verbatim somewhere else.
    if old != slice.iter().map(|l| format!("{l}\n")).collect::<String>()
        && file.matches(old.as_str()).count() > 0
        && m != Mistake::TrailingWsFile
        && m != Mistake::Crlf
        && m != Mistake::CrlfMixed
        && m != Mistake::NoFinalNewline
    {
        return None;
    }
    if m == Mistake::None && file.matches(old.as_str()).count() != 1 {
        return None;
    }
    let kind = format!("{}+{:?}", m.name(), ch).to_lowercase();
    Some(Case {
        id: case_id(n, &kind),
        source: format!("{}:{}", s.path, w0 + 1),
        kind,
        encoding: None,
        file,
        old_string: old,
        new_string: new,
        expect: Some(expect),
        expect_error: None,
    })
}

fn ambiguous_case(src: &[Source], rng: &mut Rng, n: usize) -> Option<Case> {
    let (s, w0, win, at, k) = pick(src, rng, |win, slice| {
        slice.len() <= 3
            && slice.iter().all(|l| !l.trim().is_empty())
            && loose_count(win, slice) >= 2
    })?;
    let slice = &win[at..at + k];
    let old: String = slice.iter().map(|l| format!("{l}\n")).collect();
    let file: String = win.iter().map(|l| format!("{l}\n")).collect();
    // ambiguous as written: a unique exact match is applied, rightly
    if file.matches(old.as_str()).count() < 2 {
        return None;
    }
    let new: String = slice.iter().map(|l| format!("{l} // changed\n")).collect();
    Some(Case {
        id: case_id(n, "ambiguous"),
        source: format!("{}:{}", s.path, w0 + 1),
        kind: "refuse_ambiguous".into(),
        encoding: None,
        file,
        old_string: old,
        new_string: new,
        expect: None,
        expect_error: Some("conflict".into()),
    })
}

/// A hallucinated token in old_string, or an edit already applied: refused
/// with no_match, the file untouched.
fn refused_case(
    src: &[Source],
    rng: &mut Rng,
    m: Mistake,
    hallucinated: bool,
    n: usize,
) -> Option<Case> {
    let tab_file = matches!(m, Mistake::TabsToSpaces(_));
    let (s, w0, win, at, k) = pick(src, rng, |win, slice| {
        applies(m, slice)
            && loose_count(win, slice) == 1
            && tab_file == win.iter().any(|l| l.starts_with('\t'))
            && slice.iter().any(|l| word(l).is_some())
    })?;
    let slice: Vec<String> = win[at..at + k].to_vec();
    let j = (0..k).find(|&j| word(&slice[j]).is_some())?;
    let renamed = change_lines(Change::Rename, &slice, j, &s.path)?;
    let (file_lines, old_lines, new_lines, kind) = if hallucinated {
        // the model remembers a name the file does not have
        let mut halluc = slice.clone();
        let (a, b) = word(&slice[j])?;
        halluc[j] = format!("{}{}Qz{}", &slice[j][..a], &slice[j][a..b], &slice[j][b..]);
        (win, halluc, renamed, "refuse_hallucinated")
    } else {
        let mut applied = win;
        applied.splice(at..at + k, renamed.iter().cloned());
        (applied, slice, renamed, "refuse_already_applied")
    };
    if loose_count(&file_lines, &old_lines) != 0 {
        return None;
    }
    Some(Case {
        id: case_id(n, kind),
        source: format!("{}:{}", s.path, w0 + 1),
        kind: format!("{kind}+{}", m.name()),
        encoding: None,
        file: file_lines.iter().map(|l| format!("{l}\n")).collect(),
        old_string: model_text(m, &old_lines, rng, at + 1, ""),
        new_string: model_text(m, &new_lines, rng, at + 1, ""),
        expect: None,
        expect_error: Some("no_match".into()),
    })
}

/// A windows-1252 file (a window with Latin-1 letters): new text the
/// encoding can carry is written in it; a character it cannot is refused.
fn legacy_case(src: &[Source], rng: &mut Rng, unsupported: bool, n: usize) -> Option<Case> {
    let enc = Legacy::for_label("windows-1252")?;
    let latin = |l: &String| l.chars().any(|c| ('\u{c0}'..='\u{ff}').contains(&c));
    let spots: Vec<(usize, usize)> = src
        .iter()
        .enumerate()
        .flat_map(|(f, s)| {
            s.lines
                .iter()
                .enumerate()
                .filter(|(_, l)| latin(l))
                .map(move |(i, _)| (f, i))
        })
        .collect();
    if spots.is_empty() {
        return None;
    }
    let (f, i) = spots[rng.below(spots.len())];
    let s = &src[f];
    let w0 = i
        .saturating_sub(rng.below(WINDOW))
        .min(s.lines.len() - WINDOW);
    let win: Vec<String> = s.lines[w0..w0 + WINDOW].to_vec();
    let t: String = win.iter().map(|l| format!("{l}\n")).collect();
    let fits = text::try_encode(&t, Encoding::Legacy(enc), "f")
        .is_ok_and(|b| text::decode(&b, "f").is_ok_and(|d| d.encoding == Encoding::Legacy(enc)));
    if !fits {
        return None;
    }
    let slices: Vec<(usize, usize)> = (0..WINDOW - 2)
        .flat_map(|a| (2..5).map(move |k| (a, k)))
        .filter(|&(a, k)| a + k <= WINDOW)
        .filter(|&(a, k)| {
            let slice = &win[a..a + k];
            loose_count(&win, slice) == 1
                && slice.iter().any(|l| word(l).is_some())
                && slice.iter().all(|l| l.len() <= 160)
        })
        .collect();
    if slices.is_empty() {
        return None;
    }
    let (at, k) = slices[rng.below(slices.len())];
    let slice: Vec<String> = win[at..at + k].to_vec();
    let j = (0..k).find(|&j| word(&slice[j]).is_some())?;
    let mut new_slice = slice.clone();
    let extra = if unsupported {
        "caf\u{e9} \u{2192} na\u{ef}ve"
    } else {
        "caf\u{e9} d\u{e9}j\u{e0} na\u{ef}ve"
    };
    new_slice.insert(j + 1, format!("{}// {extra}", indent_of(&slice[j])));
    let file: String = win.iter().map(|l| format!("{l}\n")).collect();
    let mut exp = win;
    exp.splice(at..at + k, new_slice.iter().cloned());
    let m = if rng.below(2) == 0 {
        Mistake::SmartQuotes
    } else {
        Mistake::None
    };
    Some(Case {
        id: case_id(n, "legacy"),
        source: format!("{}:{}", s.path, w0 + 1),
        kind: format!(
            "legacy_{}+{}",
            if unsupported {
                "unsupported"
            } else {
                "windows1252"
            },
            m.name()
        ),
        encoding: Some(enc.name().to_string()),
        file,
        old_string: model_text(m, &slice, rng, at + 1, ""),
        new_string: model_text(m, &new_slice, rng, at + 1, ""),
        expect: (!unsupported).then(|| exp.iter().map(|l| format!("{l}\n")).collect()),
        expect_error: unsupported.then(|| "unsupported".into()),
    })
}
