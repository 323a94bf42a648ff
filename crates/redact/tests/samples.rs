//! The labelled table: every row of `data/samples.jsonl` is a realistic text
//! (JSON, YAML, .env, shell history, logs, source code, PEM, HTTP, ...) that
//! must be redacted or kept. Secret bytes are marked `«…»`; random parts are
//! written as templates (`⟦A:36⟧`: 36 alphanumerics, deterministic per row),
//! so the file holds no literal credential.
//!
//! A `redact` row is a true positive when every marked byte is covered by a
//! finding and no finding covers an unmarked byte; a `keep` row is a true
//! negative when nothing is found. Precision and recall are printed and must
//! both be 100%; every failing row is listed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use wrench_redact::Redactor;

include!("common/template.rs");

#[test]
fn labelled_samples_have_full_precision_and_recall() {
    let data = include_str!("data/samples.jsonl");
    let r = Redactor::new();
    let (mut tp, mut fp, mut fn_, mut tn) = (0usize, 0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    let mut formats = std::collections::BTreeSet::new();
    for (i, line) in data.lines().enumerate() {
        let row: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
        let label = row["label"].as_str().expect("label");
        formats.insert(row["format"].as_str().expect("format").to_string());
        let (text, spans) = materialize(row["text"].as_str().expect("text"), i as u64 + 1);
        let found = r.find(&text);
        let covered = |a: usize| found.iter().any(|f| f.start <= a && a < f.end);
        let marked = |a: usize| spans.iter().any(|&(s, e)| s <= a && a < e);
        let missed: Vec<usize> = spans
            .iter()
            .flat_map(|&(s, e)| s..e)
            .filter(|&a| !covered(a))
            .collect();
        let over: Vec<_> = found
            .iter()
            .filter(|f| (f.start..f.end).any(|a| !marked(a)))
            .collect();
        let scrubbed = r.scrub(&text);
        let survived = spans
            .iter()
            .any(|&(s, e)| e - s >= 8 && scrubbed.contains(&text[s..e]));
        let why = match label {
            "redact" => {
                assert!(!spans.is_empty(), "row {} redacts nothing marked", i + 1);
                if missed.is_empty() && !survived {
                    tp += 1;
                } else {
                    fn_ += 1;
                }
                if !over.is_empty() {
                    fp += 1;
                }
                (!missed.is_empty() || survived || !over.is_empty()).then(|| {
                    format!(
                        "missed {} marked bytes, over-redacted {:?}",
                        missed.len(),
                        over
                    )
                })
            }
            "keep" => {
                assert!(spans.is_empty(), "keep row {} has marks", i + 1);
                if found.is_empty() {
                    tn += 1;
                    None
                } else {
                    fp += 1;
                    Some(format!("redacted {found:?}"))
                }
            }
            other => panic!("row {}: unknown label {other}", i + 1),
        };
        if let Some(why) = why {
            failures.push(format!(
                "row {} ({label}, {}, {}): {why}\n    text: {text:?}\n    scrub: {scrubbed:?}",
                i + 1,
                row["format"],
                row["note"].as_str().unwrap_or("")
            ));
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64 * 100.0;
    let recall = tp as f64 / (tp + fn_).max(1) as f64 * 100.0;
    println!(
        "samples: {} rows ({} redact, {} keep) in {} formats; precision {precision:.1}% recall {recall:.1}% (tp {tp}, fp {fp}, fn {fn_}, tn {tn})",
        tp + fn_ + tn + failures.iter().filter(|f| f.contains("(keep")).count(),
        tp + fn_,
        tn + failures.iter().filter(|f| f.contains("(keep")).count(),
        formats.len()
    );
    assert!(
        data.lines().count() >= 300,
        "the table needs at least 300 rows"
    );
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!((precision, recall), (100.0, 100.0));
}

#[test]
fn every_kind_appears_in_the_table() {
    let data = include_str!("data/samples.jsonl");
    let r = Redactor::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, line) in data.lines().enumerate() {
        let row: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
        let (text, _) = materialize(row["text"].as_str().expect("text"), i as u64 + 1);
        for f in r.find(&text) {
            seen.insert(f.kind);
        }
    }
    let missing: Vec<_> = Redactor::kinds()
        .into_iter()
        .filter(|k| !seen.contains(k))
        .collect();
    assert!(missing.is_empty(), "kinds with no row: {missing:?}");
}

/// Byte ranges of `text`'s lines (each without its `\n`), 1-based as shown.
fn line_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        out.push(at..at + l.trim_end_matches('\n').len());
        at += l.len();
    }
    out
}

/// `N`, `N-M` (lines) or `N@FROM+LEN` (bytes FROM..FROM+LEN of line N).
fn shown_ranges(text: &str, show: &[serde_json::Value]) -> Vec<std::ops::Range<usize>> {
    let lines = line_ranges(text);
    let line = |n: &str| lines[n.parse::<usize>().expect("line number") - 1].clone();
    show.iter()
        .map(|v| {
            let s = v.as_str().expect("show entry is a string");
            if let Some((n, cut)) = s.split_once('@') {
                let (from, len) = cut.split_once('+').expect("N@FROM+LEN");
                let l = line(n);
                let a = l.start + from.parse::<usize>().expect("from");
                a..(a + len.parse::<usize>().expect("len")).min(l.end)
            } else if let Some((a, b)) = s.split_once('-') {
                line(a).start..line(b).end
            } else {
                line(s)
            }
        })
        .collect()
}

/// Whether the spans found from the `shown` ranges of `text` hide exactly the
/// marked bytes shown (None) or what went wrong. `pad` lines of filler go
/// before the text, so the lines shown are a small part of the source and
/// only they are scanned (with the source-reach rules on the whole source);
/// with no filler, most of the source is shown and it is scanned whole.
fn view_verdict(
    r: &Redactor,
    text: &str,
    marks: &[(usize, usize)],
    shown: &[std::ops::Range<usize>],
    pad: usize,
) -> Option<String> {
    let filler = "// filler line\n".repeat(pad);
    let source = format!("{filler}{text}");
    let off = filler.len();
    let found = r.spans_shown(&source, shown.iter().map(|s| s.start + off..s.end + off));
    let covered = |a: usize| found.iter().any(|f| f.start <= a + off && a + off < f.end);
    let marked = |a: usize| marks.iter().any(|&(s, e)| s <= a && a < e);
    let shown_bytes = shown.iter().flat_map(|s| s.clone());
    let missed: Vec<usize> = shown_bytes
        .clone()
        .filter(|&a| marked(a) && !covered(a))
        .collect();
    let over: Vec<usize> = shown_bytes.filter(|&a| !marked(a) && covered(a)).collect();
    (!missed.is_empty() || !over.is_empty()).then(|| {
        format!(
            "pad {pad}: {} marked shown bytes not hidden (first at {:?}), {} unmarked shown bytes hidden (first at {:?}); spans {:?}",
            missed.len(),
            missed.first(),
            over.len(),
            over.first(),
            found
        )
    })
}

/// The view table: each row is a source, the lines (or the piece of a line)
/// a tool shows, and the secret bytes marked. Every marked byte shown must be
/// hidden and no unmarked byte shown may be, whether the source is scanned
/// whole or only around the lines shown. Every failing row is listed.
#[test]
fn views_hide_the_secret_bytes_they_show_and_nothing_else() {
    let data = include_str!("data/views.jsonl");
    let r = Redactor::new();
    let mut failures = Vec::new();
    for (i, line) in data.lines().enumerate() {
        let row: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
        let label = row["label"].as_str().expect("label");
        let (text, marks) = materialize(row["text"].as_str().expect("text"), i as u64 + 1);
        assert_eq!(
            label == "redact",
            !marks.is_empty(),
            "row {}: label and marks disagree",
            i + 1
        );
        let shown = shown_ranges(&text, row["show"].as_array().expect("show"));
        let pad = text.len() / 8 + 4;
        for p in [0, pad] {
            if let Some(why) = view_verdict(&r, &text, &marks, &shown, p) {
                failures.push(format!(
                    "row {} ({label}, {}): {why}\n    text: {text:?}",
                    i + 1,
                    row["note"].as_str().unwrap_or("")
                ));
            }
        }
    }
    assert!(
        data.lines().count() >= 25,
        "the view table needs at least 25 rows"
    );
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every line of every labelled sample, shown alone out of a larger source:
/// the marked bytes on it are hidden and, on keep rows, nothing is.
#[test]
fn every_line_of_the_labelled_samples_hides_its_secret_bytes_alone() {
    let data = include_str!("data/samples.jsonl");
    let r = Redactor::new();
    let mut failures = Vec::new();
    for (i, line) in data.lines().enumerate() {
        let row: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
        let (text, marks) = materialize(row["text"].as_str().expect("text"), i as u64 + 1);
        let pad = text.len() / 8 + 4;
        for (n, l) in line_ranges(&text).into_iter().enumerate() {
            if l.is_empty() {
                continue;
            }
            if let Some(why) = view_verdict(&r, &text, &marks, std::slice::from_ref(&l), pad) {
                failures.push(format!(
                    "row {} line {} ({}): {why}\n    text: {text:?}",
                    i + 1,
                    n + 1,
                    row["note"].as_str().unwrap_or("")
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing lines:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
