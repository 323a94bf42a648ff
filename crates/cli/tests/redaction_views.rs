//! Partial views through the real binary: every tool that shows part of a
//! file (a read window, grep lines and their context, an edit's or a patch's
//! diff, a near-miss error quoting the closest lines, a write's removed lines,
//! `git diff`/`git show`)
//! hides the pieces of a secret whose context (a PEM header, a YAML key, a
//! `.netrc` `machine`) is outside what it shows.
//!
//! The table is `data/redaction_views.jsonl`: a file (its secret bytes marked
//! `«…»`, random parts as templates, so the repository holds no credential),
//! the calls run in one session, and `redact` (no 12-byte run of a marked
//! line that the calls did not pass themselves is printed, and a marker is) or
//! `keep` (nothing is redacted). Every failing row is listed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench};

#[allow(dead_code)]
mod template {
    include!("../../redact/tests/common/template.rs");
}

/// A run of this many bytes of a secret line in the output is a leak.
const WINDOW: usize = 12;

/// `{L5}` is line 5 of the file, `{L5:0:16}` its bytes 0..16, `{L5~}` line 5
/// with its 11th byte changed (a near miss).
fn fill(arg: &str, text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    let mut rest = arg;
    while let Some(i) = rest.find("{L") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find('}').expect("closed placeholder") + i;
        let spec = &rest[i + 2..end];
        let (num, tail) = spec.split_at(spec.find([':', '~']).unwrap_or(spec.len()));
        let line = lines[num.parse::<usize>().expect("line number") - 1];
        if tail == "~" {
            let mut b = line.as_bytes().to_vec();
            b[10] = if b[10] == b'Y' { b'Z' } else { b'Y' };
            out.push_str(&String::from_utf8(b).expect("ascii line"));
        } else if let Some(range) = tail.strip_prefix(':') {
            let (a, z) = range.split_once(':').expect("L<n>:<from>:<to>");
            out.push_str(&line[a.parse::<usize>().unwrap()..z.parse::<usize>().unwrap()]);
        } else {
            out.push_str(line);
        }
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

#[test]
fn partial_views_of_multi_line_secrets_show_no_piece_of_them() {
    let data = include_str!("data/redaction_views.jsonl");
    let mut failures = Vec::new();
    for (i, line) in data.lines().enumerate() {
        let row: serde_json::Value = serde_json::from_str(line).expect("row is JSON");
        let label = row["label"].as_str().expect("label");
        let note = row["note"].as_str().unwrap_or("");
        let (text, marks) = template::materialize(row["text"].as_str().unwrap(), i as u64 + 1);
        let env = Env::new();
        let file = env.root.join(row["file"].as_str().unwrap());
        std::fs::write(&file, &text).unwrap();
        if let Some(change) = row["git_change"].as_array() {
            // Committed as it is, then changed in the work tree.
            for args in [
                &["init", "-q"][..],
                &["add", "-A"],
                &[
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "commit",
                    "-qm",
                    "init",
                ],
            ] {
                let ok = std::process::Command::new("git")
                    .args(args)
                    .current_dir(&env.root)
                    .env("HOME", &env.state)
                    .env("GIT_CONFIG_NOSYSTEM", "1")
                    .status()
                    .unwrap()
                    .success();
                assert!(ok, "git {args:?}");
            }
            let (from, to) = (change[0].as_str().unwrap(), change[1].as_str().unwrap());
            std::fs::write(&file, text.replacen(from, to, 1)).unwrap();
        }
        let mut out = String::new();
        let mut passed = String::new();
        for call in row["calls"].as_array().expect("calls") {
            let args: Vec<String> = call
                .as_array()
                .expect("argv")
                .iter()
                .map(|a| fill(a.as_str().unwrap(), &text))
                .collect();
            passed.push_str(&args.join("\n"));
            let mut argv = vec![
                "--no-daemon",
                "--color",
                "never",
                "--mode",
                "yolo",
                "--session",
                "views",
            ];
            argv.extend(args.iter().map(String::as_str));
            let o = wrench(&env, &argv);
            out = format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let redacted = out.contains("[REDACTED:");
        let why = match label {
            "redact" => {
                let leaked: Vec<&str> = marks
                    .iter()
                    .flat_map(|&(s, e)| text[s..e].split(['\n']))
                    .flat_map(|l| l.split("\\n"))
                    .flat_map(|l| {
                        (0..l.len().saturating_sub(WINDOW - 1)).map(move |k| &l[k..k + WINDOW])
                    })
                    .filter(|w| out.contains(w) && !passed.contains(w))
                    .collect();
                // A near miss against a file with secrets may show none of
                // its lines at all (matching runs on the masked view, and
                // says so): nothing shown, nothing to mark.
                let masked_match = out.contains("holds secrets wrench redacts");
                match (leaked.first(), redacted) {
                    (Some(w), _) => Some(format!("leaked {w:?}")),
                    (None, false) if !masked_match => Some("no marker in the output".to_string()),
                    _ => None,
                }
            }
            _ => redacted.then(|| "redacted a keep row".to_string()),
        };
        if let Some(why) = why {
            failures.push(format!("row {} ({note}): {why}\n{out}", i + 1));
        }
    }
    assert!(
        failures.is_empty(),
        "{} failing rows:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
