//! The plan of what read/edit rules cover in a workspace
//! (`wrench_process::covers::plan`): real files, links and hard links in a
//! temp dir, rules given as path predicates.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use wrench_core::CommandPaths;
use wrench_process::covers::{Covers, plan};

/// Rules by root-relative prefix: `hide` covers reads, `freeze` changes
/// (a prefix `secrets/` covers everything in `secrets`, like `secrets/**`).
struct Rules {
    root: PathBuf,
    hide: Vec<&'static str>,
    freeze: Vec<&'static str>,
}

impl Rules {
    fn rel(&self, abs: &Path) -> String {
        abs.strip_prefix(&self.root)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
    fn any(&self, list: &[&str], abs: &Path) -> bool {
        let rel = self.rel(abs);
        list.iter().any(|p| {
            if let Some(ext) = p.strip_prefix("*") {
                rel.ends_with(ext)
            } else {
                rel.starts_with(p) && p.ends_with('/') || rel == *p
            }
        })
    }
}

impl CommandPaths for Rules {
    fn hides(&self, abs: &Path) -> bool {
        self.any(&self.hide, abs)
    }
    fn freezes(&self, abs: &Path) -> bool {
        self.any(&self.freeze, abs)
    }
}

fn tree(files: &[&str]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in files {
        let p = d.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, f).unwrap();
    }
    d
}

fn rels(root: &Path, v: &[PathBuf]) -> Vec<String> {
    let mut out: Vec<String> = v
        .iter()
        .map(|p| p.strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

fn run(root: &Path, hide: Vec<&'static str>, freeze: Vec<&'static str>, limit: usize) -> Covers {
    let r = Rules {
        root: root.to_path_buf(),
        hide,
        freeze,
    };
    plan(root, &r, limit)
}

#[test]
fn a_directory_a_read_rule_covers_whole_is_hidden_whole_and_its_files_are_not_listed() {
    let d = tree(&["secrets/a", "secrets/sub/b", "src/x.key", "src/main.rs"]);
    let c = run(d.path(), vec!["secrets/", "*.key"], vec![], 1000);
    assert_eq!(rels(d.path(), &c.hide_dirs), ["secrets"]);
    assert_eq!(rels(d.path(), &c.hide_files), ["src/x.key"]);
    assert!(c.freeze.is_empty() && !c.cut);
}

#[test]
fn another_name_of_a_covered_file_is_covered_too_even_from_inside_a_hidden_directory() {
    let d = tree(&["secrets/k", "conf/a", "src/main.rs"]);
    let r = d.path();
    std::fs::hard_link(r.join("secrets/k"), r.join("src/innocent.txt")).unwrap();
    std::fs::hard_link(r.join("conf/a"), r.join("src/other.txt")).unwrap();
    let c = run(r, vec!["secrets/"], vec!["conf/"], 1000);
    assert_eq!(rels(r, &c.hide_files), ["src/innocent.txt"]);
    assert_eq!(rels(r, &c.freeze), ["conf", "src/other.txt"]);
}

#[test]
fn a_symlink_is_never_followed_nor_covered_itself() {
    let d = tree(&["secrets/k", "src/main.rs"]);
    let r = d.path();
    std::os::unix::fs::symlink("/", r.join("src/secrets.key")).unwrap();
    std::os::unix::fs::symlink(r.join("secrets"), r.join("src/linkdir")).unwrap();
    let c = run(r, vec!["secrets/", "*.key"], vec![], 1000);
    assert_eq!(rels(r, &c.hide_dirs), ["secrets"]);
    assert!(c.hide_files.is_empty(), "{:?}", c.hide_files);
}

#[test]
fn inside_a_frozen_directory_hidden_files_are_still_hidden_and_nothing_is_frozen_twice() {
    let d = tree(&["conf/a", "conf/deep/b", "conf/deep/pass.key"]);
    let r = d.path();
    let c = run(r, vec!["*.key"], vec!["conf/"], 1000);
    assert_eq!(rels(r, &c.freeze), ["conf"]);
    assert_eq!(rels(r, &c.hide_files), ["conf/deep/pass.key"]);
}

#[test]
fn a_walk_over_its_budget_says_so_after_the_shallow_entries() {
    let mut files: Vec<String> = (0..50).map(|i| format!("deep/d{i}/f")).collect();
    files.push("top.key".into());
    let names: Vec<&str> = files.iter().map(String::as_str).collect();
    let d = tree(&names);
    let c = run(d.path(), vec!["*.key"], vec![], 10);
    assert!(c.cut);
    // Breadth first: the root's own entries come before anything deeper.
    assert_eq!(rels(d.path(), &c.hide_files), ["top.key"]);
    assert!(c.describe().contains("over"));
}

#[test]
fn no_rule_covers_nothing() {
    let d = tree(&["a", "b/c"]);
    let c = run(d.path(), vec![], vec![], 1000);
    assert!(c.is_empty() && !c.cut);
}

#[test]
fn a_path_the_call_names_stays_visible_and_its_directory_is_covered_entry_by_entry() {
    let d = tree(&["private/p", "private/q", "private/sub/r", "src/main.rs"]);
    let r = d.path();
    let rules = Rules {
        root: r.to_path_buf(),
        hide: vec!["private/"],
        freeze: vec![],
    };
    let named = wrench_process::covers::Named {
        reads: vec![r.join("private/p"), r.join("src")],
        writes: vec![],
    };
    let c = wrench_process::covers::plan_except(r, &rules, 1000, &named);
    assert!(
        c.hide_dirs
            .iter()
            .all(|h| !r.join("private/p").starts_with(h))
    );
    assert_eq!(rels(r, &c.hide_files), ["private/q"]);
    assert_eq!(rels(r, &c.hide_dirs), ["private/sub"]);
}

#[test]
fn a_named_path_no_rule_covers_opens_nothing() {
    // `find . -name conf` names `conf` as a read: no read rule covers it,
    // so the edit rule's read-only `conf` stays.
    let d = tree(&["conf/a", "src/main.rs"]);
    let r = d.path();
    let rules = Rules {
        root: r.to_path_buf(),
        hide: vec![],
        freeze: vec!["conf/"],
    };
    let named = wrench_process::covers::Named {
        reads: vec![r.join("conf"), r.join("conf/a")],
        writes: vec![r.join("src/new")],
    };
    let c = wrench_process::covers::plan_except(r, &rules, 1000, &named);
    assert_eq!(rels(r, &c.freeze), ["conf"]);
}
