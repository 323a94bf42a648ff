//! The near-miss corpus: edits with realistic model mistakes cut from real
//! package sources (`tests/data/near_miss/cases.jsonl`, made by
//! `near_miss/gen.rs`), each with the exact bytes the file must have after
//! the edit or the refusal it must get. The runner prints `% right` and
//! `applied wrong` and lists every case that is not right:
//! `cargo test -p wrench-tools-edit --test near_miss -- --nocapture`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "near_miss/gen.rs"]
mod generator;

use serde::{Deserialize, Serialize};
use wrench_core::text::{self, Encoding, Legacy};
use wrench_tools_edit::edit::{EditOp, apply_ops};

const CASES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/near_miss/cases.jsonl"
);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Case {
    pub id: String,
    /// Where the window was cut from (corpus path:first line).
    pub source: String,
    /// The model's mistake and the intended change.
    pub kind: String,
    /// The file's encoding when it is not UTF-8 (WHATWG name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    pub file: String,
    pub old_string: String,
    pub new_string: String,
    /// The file after the edit, exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<String>,
    /// Or the error kind the edit must be refused with (file untouched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect_error: Option<String>,
}

pub fn load() -> Vec<Case> {
    std::fs::read_to_string(CASES)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

enum Outcome {
    Right,
    /// Refused (or refused with another kind) where it should have applied.
    Refused(String),
    /// Written with bytes other than the expected ones, or written where it
    /// should have been refused.
    Wrong(String),
}

fn encoding(c: &Case) -> Encoding {
    match &c.encoding {
        Some(name) => Encoding::Legacy(Legacy::for_label(name).unwrap()),
        None => Encoding::Utf8,
    }
}

/// What the `edit` tool does with the file's bytes: decode, apply, encode.
fn run(c: &Case) -> Outcome {
    let enc = encoding(c);
    let bytes = text::encode(&c.file, enc);
    let decoded = match text::decode(&bytes, "f") {
        Ok(d) => d,
        Err(e) => return Outcome::Refused(format!("decode: {}", e.message)),
    };
    let ops = [EditOp {
        old_string: c.old_string.clone(),
        new_string: c.new_string.clone(),
        replace_all: false,
    }];
    let result = apply_ops(&decoded.text, &ops, "f")
        .and_then(|ch| text::try_encode(&ch.text, decoded.encoding, "f"));
    match (result, &c.expect, &c.expect_error) {
        (Ok(got), Some(want), _) => {
            let want = text::encode(want, enc);
            if got == want {
                Outcome::Right
            } else {
                Outcome::Wrong(format!(
                    "wrote\n{:?}\nwant\n{:?}",
                    String::from_utf8_lossy(&got),
                    String::from_utf8_lossy(&want)
                ))
            }
        }
        (Ok(got), None, kind) => {
            if got == bytes {
                Outcome::Refused(format!("no-op where {kind:?} was expected"))
            } else {
                Outcome::Wrong(format!(
                    "applied where {kind:?} was expected:\n{:?}",
                    String::from_utf8_lossy(&got)
                ))
            }
        }
        (Err(e), _, Some(kind)) if e.kind.as_str() == kind => Outcome::Right,
        (Err(e), _, _) => Outcome::Refused(format!("{}: {}", e.kind.as_str(), e.message)),
    }
}

#[test]
fn near_miss_corpus_lands_right_and_never_wrong() {
    let cases = load();
    assert!(cases.len() >= 400, "only {} cases", cases.len());
    let (mut right, mut wrong, mut refused) = (0usize, Vec::new(), Vec::new());
    let mut by_kind: std::collections::BTreeMap<String, (usize, usize)> = Default::default();
    for c in &cases {
        let family = c.kind.split('+').next().unwrap_or("").to_string();
        let e = by_kind.entry(family).or_default();
        e.1 += 1;
        match run(c) {
            Outcome::Right => {
                right += 1;
                e.0 += 1;
            }
            Outcome::Wrong(m) => wrong.push(format!("{} ({}, {}): {m}", c.id, c.kind, c.source)),
            Outcome::Refused(m) => {
                refused.push(format!("{} ({}, {}): {m}", c.id, c.kind, c.source))
            }
        }
    }
    for (k, (r, n)) in &by_kind {
        println!("{k:<28} {r:>4}/{n:<4}");
    }
    for m in refused.iter().chain(&wrong) {
        println!("NOT RIGHT {m}\n");
    }
    let pct = 100.0 * right as f64 / cases.len() as f64;
    println!(
        "near-miss corpus: {} cases, {pct:.1}% right, {} refused, {} applied wrong",
        cases.len(),
        refused.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{} applied wrong", wrong.len());
    assert!(pct >= 99.0, "{pct:.1}% right");
}

/// Regenerate the corpus from the benchmark corpus named by `WRENCH_CORPUS`.
#[test]
#[ignore = "needs the benchmark corpus (WRENCH_CORPUS); rewrites tests/data/near_miss/cases.jsonl"]
fn generate() {
    let root = std::env::var("WRENCH_CORPUS").expect("set WRENCH_CORPUS to the corpus directory");
    let cases = generator::generate(std::path::Path::new(&root));
    let mut out = String::new();
    for c in &cases {
        out.push_str(&serde_json::to_string(c).unwrap());
        out.push('\n');
    }
    std::fs::create_dir_all(std::path::Path::new(CASES).parent().unwrap()).unwrap();
    std::fs::write(CASES, out).unwrap();
    println!("{} cases written", cases.len());
}

mod identity {
    //! For random unique slices of the corpus's real files, a copy of the
    //! slice with random look-alike, indentation, trailing-whitespace and
    //! line-ending mistakes as old_string and the same text as new_string
    //! leaves the file unchanged byte for byte: lines the model copied keep
    //! the file's bytes.
    use super::load;
    use proptest::prelude::*;
    use std::sync::OnceLock;
    use wrench_core::ErrorKind;
    use wrench_tools_edit::engine::{fold_char, replace};

    fn files() -> &'static Vec<String> {
        static FILES: OnceLock<Vec<String>> = OnceLock::new();
        FILES.get_or_init(|| {
            let mut v: Vec<String> = load()
                .into_iter()
                .filter(|c| c.encoding.is_none())
                .map(|c| c.file)
                .collect();
            v.sort();
            v.dedup();
            v
        })
    }

    fn norm(l: &str) -> String {
        l.chars()
            .map(fold_char)
            .collect::<String>()
            .trim()
            .to_string()
    }

    #[derive(Debug, Clone, Copy)]
    enum Mistake {
        Quotes,
        Dashes,
        Nbsp,
        TabsToSpaces(usize),
        Shift,
        Dedent,
        Trailing,
        Crlf,
        NoFinalNewline,
    }

    fn mistake() -> impl Strategy<Value = Mistake> {
        prop_oneof![
            Just(Mistake::Quotes),
            Just(Mistake::Dashes),
            Just(Mistake::Nbsp),
            prop::sample::select(vec![2usize, 4, 8]).prop_map(Mistake::TabsToSpaces),
            Just(Mistake::Shift),
            Just(Mistake::Dedent),
            Just(Mistake::Trailing),
            Just(Mistake::Crlf),
            Just(Mistake::NoFinalNewline),
        ]
    }

    fn perturb(lines: &mut [String], m: Mistake, pick: &[bool]) {
        let on = |k: usize| pick.get(k % pick.len().max(1)).copied().unwrap_or(true);
        match m {
            Mistake::Quotes => {
                for (k, l) in lines.iter_mut().enumerate() {
                    if on(k) {
                        let mut open = false;
                        *l = l
                            .chars()
                            .map(|c| match c {
                                '"' => {
                                    open = !open;
                                    if open { '\u{201C}' } else { '\u{201D}' }
                                }
                                '\'' => '\u{2019}',
                                c => c,
                            })
                            .collect();
                    }
                }
            }
            Mistake::Dashes => lines.iter_mut().enumerate().for_each(|(k, l)| {
                if on(k) {
                    *l = l.replace('-', "\u{2013}");
                }
            }),
            Mistake::Nbsp => lines.iter_mut().enumerate().for_each(|(k, l)| {
                let ind = l.len() - l.trim_start().len();
                if on(k) {
                    *l = format!("{}{}", &l[..ind], l[ind..].replace(' ', "\u{a0}"));
                }
            }),
            Mistake::TabsToSpaces(w) => lines.iter_mut().for_each(|l| {
                let tabs = l.len() - l.trim_start_matches('\t').len();
                *l = format!("{}{}", " ".repeat(tabs * w), &l[tabs..]);
            }),
            // one level deeper, in the block's own style
            Mistake::Shift => {
                let unit = if lines.iter().any(|l| l.starts_with('\t')) {
                    "\t"
                } else {
                    "    "
                };
                lines.iter_mut().for_each(|l| {
                    if !l.trim().is_empty() {
                        *l = format!("{unit}{l}");
                    }
                })
            }
            Mistake::Dedent => {
                let common = lines
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.len() - l.trim_start_matches([' ', '\t']).len())
                    .min()
                    .unwrap_or(0);
                let first = lines.iter().find(|l| !l.trim().is_empty()).cloned();
                let prefix: String = first.map(|f| f[..common].to_string()).unwrap_or_default();
                for l in lines.iter_mut() {
                    if let Some(r) = l.strip_prefix(prefix.as_str()) {
                        *l = r.to_string();
                    }
                }
            }
            Mistake::Trailing => lines.iter_mut().enumerate().for_each(|(k, l)| {
                if on(k) {
                    *l = format!("{} ", l.trim_end());
                } else {
                    *l = l.trim_end().to_string();
                }
            }),
            Mistake::Crlf | Mistake::NoFinalNewline => {}
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            max_global_rejects: 1_000_000,
            ..ProptestConfig::with_cases(400)
        })]

        #[test]
        fn perturbed_copies_of_unique_slices_leave_the_file_unchanged(
            f in any::<prop::sample::Index>(),
            start in any::<prop::sample::Index>(),
            len in 1usize..6,
            mistakes in prop::collection::vec(mistake(), 1..3),
            pick in prop::collection::vec(any::<bool>(), 1..4),
            crlf_file in any::<bool>(),
        ) {
            let file = f.get(files());
            let file = if crlf_file { file.replace('\n', "\r\n") } else { file.clone() };
            let lines: Vec<&str> = file.split_inclusive('\n').collect();
            prop_assume!(lines.len() > len);
            let s = start.index(lines.len() - len);
            let texts: Vec<String> = lines
                .iter()
                .map(|l| l.trim_end_matches(['\n', '\r']).to_string())
                .collect();
            let slice = &texts[s..s + len];
            prop_assume!(slice.iter().any(|l| !l.trim().is_empty()));
            // A slice holding a secret the redactor masks is never matched
            // (tests/redacted_guesses.rs): not a near miss.
            prop_assume!(!slice.iter().any(|l| wrench_core::Redactor::global().contains_secret(l)));
            // unique even as the most lenient tier sees it
            let want: Vec<String> = slice.iter().map(|l| norm(l)).collect();
            let places = (0..=texts.len() - len)
                .filter(|&i| (0..len).all(|k| norm(&texts[i + k]) == want[k]))
                .count();
            prop_assume!(places == 1);
            let mut model: Vec<String> = slice.to_vec();
            for m in &mistakes {
                perturb(&mut model, *m, &pick);
            }
            let eol = if mistakes.iter().any(|m| matches!(m, Mistake::Crlf)) { "\r\n" } else { "\n" };
            let mut old: String = model.iter().map(|l| format!("{l}{eol}")).collect();
            if mistakes.iter().any(|m| matches!(m, Mistake::NoFinalNewline)) {
                old.truncate(old.len() - eol.len());
            }
            prop_assume!(!old.trim().is_empty());
            match replace(&file, &old, &old, false, "f") {
                Ok(a) => prop_assert_eq!(a.text, file, "old_string {:?}", old),
                Err(e) => prop_assert!(
                    e.kind == ErrorKind::Conflict,
                    "{:?} for old_string {:?}: {}", e.kind, old, e.message
                ),
            }
        }
    }
}
