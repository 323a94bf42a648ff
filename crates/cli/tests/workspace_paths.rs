//! Paths as the one-shot CLI resolves them, with the relative base (the
//! current directory inside the root) and a root named through a symlink:
//! whatever the spelling, a path is either under the canonical root or
//! refused, and both spellings of the root name the same file.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use std::path::PathBuf;
use wrench_permissions::Workspace;
use wrench_permissions::workspace::{add_root_spelling, set_relative_base};

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    link: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let top = std::fs::canonicalize(dir.path()).unwrap();
    let root = top.join("root");
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    std::fs::write(root.join("src/a.txt"), "a").unwrap();
    std::fs::create_dir_all(top.join("root-evil")).unwrap();
    let link = top.join("link");
    std::os::unix::fs::symlink(&root, &link).unwrap();
    Fixture {
        _dir: dir,
        root,
        link,
    }
}

#[test]
fn both_spellings_of_a_linked_root_name_the_same_file() {
    let f = fixture();
    add_root_spelling(&f.root, &f.link);
    let ws = Workspace::open(&f.root).unwrap();
    let via_link = ws
        .resolve(f.link.join("src/a.txt").to_str().unwrap())
        .unwrap();
    let via_real = ws
        .resolve(f.root.join("src/a.txt").to_str().unwrap())
        .unwrap();
    assert_eq!(via_link, via_real);
    // A sibling sharing the link's prefix is not the root.
    let evil = format!("{}-evil/x", f.link.display());
    assert!(ws.resolve(&evil).is_err());
    let evil = format!("{}/../root-evil/x", f.link.display());
    assert!(ws.resolve(&evil).is_err());
}

fn segment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("..".to_string()),
        Just(".".to_string()),
        Just("src".to_string()),
        Just("deep".to_string()),
        Just("root".to_string()),
        Just("root-evil".to_string()),
        Just("link".to_string()),
        "[a-z]{1,3}",
    ]
}

proptest! {
    /// From any base inside the root, any relative or absolute spelling
    /// resolves under the canonical root or is refused.
    #[test]
    fn a_path_resolves_under_the_root_or_is_refused(
        base in prop::collection::vec(prop_oneof![Just("src"), Just("deep")], 0..3),
        segs in prop::collection::vec(segment(), 1..8),
        absolute in 0..3u8,
    ) {
        let f = fixture();
        add_root_spelling(&f.root, &f.link);
        let base: PathBuf = base.iter().collect();
        set_relative_base(&f.root, &base);
        let ws = Workspace::open(&f.root).unwrap();
        let rel = segs.join("/");
        let p = match absolute {
            0 => rel,
            1 => format!("{}/{rel}", f.link.display()),
            _ => format!("{}/{rel}", f.root.display()),
        };
        if let Ok(r) = ws.resolve(&p) {
            prop_assert!(r.abs.starts_with(&f.root), "{p} -> {}", r.abs.display());
            prop_assert_eq!(f.root.join(&r.rel), r.abs);
        }
    }
}
