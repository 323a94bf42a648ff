//! apply_patch with unified diffs: real `git diff` output applied to a
//! real tree, all or nothing, planned like V4A patches; the parser never
//! panics and a diff `similar` writes round-trips.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use proptest::prelude::*;
use serde_json::json;
use support::Fx;
use wrench_core::ErrorKind;
use wrench_tools_edit::patch::{self, Op};

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "core.autocrlf=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `git diff` of a worked-on copy of the tree, applied by apply_patch to
/// the original tree, leaves it byte-equal to the worked-on copy: edits,
/// a new file, a deleted file, a rename with edits, a non-ASCII (quoted)
/// name, CRLF lines and a removed final newline.
#[test]
fn a_real_git_diff_applies_to_the_tree_it_was_taken_from() {
    let f = Fx::new();
    let files: &[(&str, &[u8])] = &[
        (
            "src/lib.rs",
            b"fn a() {\n    one();\n}\n\nfn b() {\n    two();\n}\n",
        ),
        ("gone.txt", b"bye\n"),
        ("old name.txt", b"1\n2\n3\n4\n5\n6\n7\n8\n"),
        ("t\u{e9}st.txt", b"caf\xc3\xa9\n"),
        ("dos.txt", b"a\r\nb\r\nc\r\n"),
        ("tail.txt", b"x\ny\n"),
    ];
    let repo = f.dir.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    for (p, b) in files {
        f.put(p, b);
        std::fs::write(repo.join(p), b).unwrap();
        f.read(p);
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "base"]);
    std::fs::write(
        repo.join("src/lib.rs"),
        "fn a() {\n    uno();\n}\n\nfn b() {\n    two();\n    three();\n}\n",
    )
    .unwrap();
    std::fs::remove_file(repo.join("gone.txt")).unwrap();
    std::fs::write(repo.join("new.txt"), "fresh\nfile").unwrap();
    git(&repo, &["mv", "old name.txt", "new name.txt"]);
    std::fs::write(repo.join("new name.txt"), "1\n2\n3\n4\nfive\n6\n7\n8\n").unwrap();
    std::fs::write(repo.join("t\u{e9}st.txt"), "caf\u{e9} cr\u{e8}me\n").unwrap();
    std::fs::write(repo.join("dos.txt"), "a\r\nB\r\nc\r\n").unwrap();
    std::fs::write(repo.join("tail.txt"), "x\ny").unwrap();
    git(&repo, &["add", "-A"]);
    let diff = git(&repo, &["diff", "--cached", "-M"]);
    assert!(diff.contains("rename from old name.txt"), "{diff}");
    assert!(diff.contains("\"a/t\\303\\251st.txt\""), "{diff}");
    let out = f.ok("apply_patch", json!({"patch": diff}));
    for p in [
        "src/lib.rs",
        "new.txt",
        "new name.txt",
        "t\u{e9}st.txt",
        "dos.txt",
        "tail.txt",
    ] {
        assert_eq!(
            f.get(p),
            std::fs::read(repo.join(p)).unwrap(),
            "{p}\n{}",
            out.text
        );
    }
    assert!(!f.path("gone.txt").exists());
    assert!(!f.path("old name.txt").exists());
}

#[test]
fn a_failing_hunk_in_one_file_leaves_every_file_untouched() {
    let f = Fx::new();
    f.put("a.txt", "1\n2\n3\n");
    f.put("b.txt", "x\ny\n");
    f.read("a.txt");
    f.read("b.txt");
    let diff = "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n 1\n-2\n+two\n 3\n--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n x\n-nope\n+z\n";
    let e = f.err("apply_patch", json!({"patch": diff}));
    assert_eq!(e.kind, ErrorKind::NoMatch, "{}", e.message);
    assert_eq!(f.text("a.txt"), "1\n2\n3\n");
    assert_eq!(f.text("b.txt"), "x\ny\n");
}

/// The guard is the V4A one: unread files are stale, paths leaving the
/// root or into protected places are denied, a new file onto an existing
/// one is a conflict; nothing is written in any case.
#[test]
fn unified_diffs_pass_the_same_guard_as_v4a_patches() {
    let f = Fx::new();
    f.put("a.txt", "1\n");
    let edit_a = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-1\n+2\n";
    let e = f.err("apply_patch", json!({"patch": edit_a}));
    assert_eq!(e.kind, ErrorKind::Stale, "{}", e.message);
    for hostile in [
        "--- /dev/null\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+x\n",
        "--- /dev/null\n+++ /etc/evil.txt\n@@ -0,0 +1 @@\n+x\n",
        "diff --git a/.git/hooks/pre-commit b/.git/hooks/pre-commit\nnew file mode 100755\n--- /dev/null\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+x\n",
        "diff --git \"a/x\" \"b/..\\057..\\057esc\"\nrename from x\nrename to ../../esc\n",
    ] {
        let e = f.err("apply_patch", json!({"patch": hostile}));
        assert!(
            matches!(e.kind, ErrorKind::Denied | ErrorKind::NotFound),
            "{hostile:?}: {:?} {}",
            e.kind,
            e.message
        );
    }
    f.read("a.txt");
    let add_a = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n";
    let e = f.err("apply_patch", json!({"patch": add_a}));
    assert_eq!(e.kind, ErrorKind::Conflict, "{}", e.message);
    assert_eq!(f.text("a.txt"), "1\n");
    assert!(!f.dir.path().join("outside.txt").exists());
}

/// A rename is planned as a Delete of the old path and a Write of the
/// new one: a deny rule on either side refuses the whole patch.
#[test]
fn a_rename_is_planned_on_both_paths() {
    let f = Fx::new();
    f.put("keep/x.txt", "1\n");
    f.read("keep/x.txt");
    let diff = "diff --git a/keep/x.txt b/out/x.txt\nsimilarity index 100%\nrename from keep/x.txt\nrename to out/x.txt\n";
    let p = patch::parse(diff).unwrap();
    assert_eq!(p.ops.len(), 1);
    let plan = futures::executor::block_on(f.exec.plan_only(wrench_core::Call::new(
        "1",
        "apply_patch",
        json!({"patch": diff}),
    )))
    .unwrap();
    let shown = format!("{:?}", plan.actions);
    assert!(
        shown.contains("Delete") && shown.contains("keep/x.txt"),
        "{shown}"
    );
    assert!(
        shown.contains("Write") && shown.contains("out/x.txt"),
        "{shown}"
    );
    f.ok("apply_patch", json!({"patch": diff}));
    assert_eq!(f.text("out/x.txt"), "1\n");
}

/// Lines of the old text: unique, so every hunk has one place.
fn old_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z ]{0,6}", 0..30).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, s)| format!("{i}:{s}"))
            .collect()
    })
}

fn join(lines: &[String], final_nl: bool, crlf: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut s = lines.join(eol);
    if final_nl && !lines.is_empty() {
        s.push_str(eol);
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary text (and arbitrary text after a git header) never makes
    /// the parser panic.
    #[test]
    fn any_text_parses_or_is_refused_without_panic(s in "\\PC{0,400}", b in prop::collection::vec(any::<u8>(), 0..400)) {
        let _ = patch::parse(&s);
        let _ = patch::parse(&format!("diff --git a/f b/f\n--- a/f\n+++ b/f\n{s}"));
        let _ = patch::parse(&format!("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n{s}"));
        wrench_tools_edit::fuzz::patch_parser(&b);
        let mut g = b"--- a/f\n+++ b/f\n@@ -1 +1 @@\n".to_vec();
        g.extend_from_slice(&b);
        wrench_tools_edit::fuzz::patch_parser(&g);
    }

    /// `similar`'s unified diff of two texts, read back and applied to the
    /// old text, gives the new text byte for byte (final newline and CRLF
    /// included).
    #[test]
    fn a_similar_diff_round_trips(
        old in old_lines(),
        edits in prop::collection::vec((0usize..40, 0u8..3, "[a-z ]{0,5}"), 0..8),
        old_nl in any::<bool>(),
        new_nl in any::<bool>(),
        crlf in any::<bool>(),
    ) {
        let mut new = old.clone();
        for (at, what, s) in edits {
            let at = if new.is_empty() { 0 } else { at % (new.len() + 1) };
            match what {
                0 => new.insert(at, format!("new {s}")),
                1 if at < new.len() => { new.remove(at); }
                _ if at < new.len() => new[at] = format!("{} {s}", new[at]),
                _ => new.push(s),
            }
        }
        let (o, n) = (join(&old, old_nl, crlf), join(&new, new_nl, crlf));
        prop_assume!(o != n);
        // Lines inserted into a file with no line ending yet take LF.
        prop_assume!(!crlf || old.len() > 1 || (old_nl && !old.is_empty()));
        let diff = similar::TextDiff::from_lines(&o, &n)
            .unified_diff()
            .header("a/f.txt", "b/f.txt")
            .to_string();
        let text = format!("diff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n{diff}");
        let p = patch::parse(&text).map_err(|e| TestCaseError::fail(format!("{}\n{text}", e.message)))?;
        let got = match &p.ops[..] {
            [Op::Update { chunks, .. }] => {
                patch::apply_update(&o, chunks, "f.txt")
                    .map_err(|e| TestCaseError::fail(format!("{}\n{text}", e.message)))?
                    .text
            }
            [Op::Add { lines, final_newline, .. }] if o.is_empty() => {
                let mut s = lines.join("\n");
                if *final_newline && !lines.is_empty() { s.push('\n'); }
                s
            }
            [Op::Delete { .. }] if n.is_empty() => String::new(),
            other => return Err(TestCaseError::fail(format!("{other:?}\n{text}"))),
        };
        prop_assert_eq!(got, n, "{}", text);
    }
}

/// The table of hostile and malformed unified diffs (tests/data/
/// unified_hostile.tsv): each row's patch, on a fresh tree (a.txt and
/// b.txt read, c.txt not, a symlink leading out of the root), must end in
/// the row's error kind (or ok) and, when refused, change nothing. Every
/// failing row is reported.
#[test]
fn hostile_and_malformed_unified_diffs_table() {
    let table = include_str!("data/unified_hostile.tsv");
    let unescape = |s: &str| {
        let mut out = String::new();
        let mut it = s.chars();
        while let Some(c) = it.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match it.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(o) => out.push(o),
                None => out.push('\\'),
            }
        }
        out
    };
    let mut failed = Vec::new();
    for line in table
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, patch, want) = (cols[0], unescape(cols[1]), cols[2]);
        let f = Fx::new();
        for (p, body) in [("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")] {
            f.put(p, body);
        }
        f.read("a.txt");
        f.read("b.txt");
        std::os::unix::fs::symlink("..", f.path("link_out")).unwrap();
        let got = match f.call("apply_patch", json!({"patch": patch})) {
            Ok(_) => "ok".to_string(),
            Err(e) => serde_json::to_value(e.kind)
                .unwrap()
                .as_str()
                .unwrap()
                .to_string(),
        };
        let untouched =
            f.text("a.txt") == "a\n" && f.text("b.txt") == "b\n" && f.text("c.txt") == "c\n";
        let outside = f
            .dir
            .path()
            .read_dir()
            .unwrap()
            .filter(|e| {
                let n = e.as_ref().unwrap().file_name();
                n != "root" && n != "state"
            })
            .count();
        if got != want || (want != "ok" && (!untouched || outside != 0)) {
            failed.push(format!("{name}: want {want}, got {got} (files untouched: {untouched}, entries beside the root: {outside})"));
        }
    }
    assert!(
        failed.is_empty(),
        "{} rows failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}
