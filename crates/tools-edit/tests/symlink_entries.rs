//! Deleting or moving a path that is an in-root symlink acts on the link
//! itself, as `rm` and `mv` do, and says so; the file it points to is never
//! deleted or moved.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use std::os::unix::fs::symlink;
use support::Fx;

fn linked() -> Fx {
    let f = Fx::new();
    f.put("real", "r\n");
    symlink("real", f.path("alias")).unwrap();
    f.read("real");
    f
}

fn is_link(f: &Fx, rel: &str) -> bool {
    std::fs::symlink_metadata(f.path(rel))
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

#[test]
fn patch_delete_of_a_symlink_removes_the_link_and_keeps_its_target() {
    let f = linked();
    let out = f.ok(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Delete File: alias\n*** End Patch\n"}),
    );
    assert!(out.text.contains("the symlink itself"), "{}", out.text);
    assert!(std::fs::symlink_metadata(f.path("alias")).is_err());
    assert_eq!(f.text("real"), "r\n");
}

#[test]
fn move_file_of_a_symlink_moves_the_link_and_keeps_its_target() {
    let f = linked();
    let out = f.ok(
        "move_file",
        json!({"source_path": "alias", "destination_path": "sub/alias2"}),
    );
    assert!(out.text.contains("the link itself"), "{}", out.text);
    assert!(is_link(&f, "sub/alias2"));
    assert!(std::fs::symlink_metadata(f.path("alias")).is_err());
    assert_eq!(f.text("real"), "r\n");
}

#[test]
fn a_plain_file_still_moves_and_deletes_as_before() {
    let f = linked();
    f.ok(
        "move_file",
        json!({"source_path": "real", "destination_path": "moved"}),
    );
    assert_eq!(f.text("moved"), "r\n");
    f.read("moved");
    f.ok(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Delete File: moved\n*** End Patch\n"}),
    );
    assert!(!f.path("moved").exists());
}

#[test]
fn patch_update_with_move_of_a_symlink_is_refused_whole() {
    let f = linked();
    let e = f.err(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Update File: alias\n*** Move to: moved\n-r\n+R\n*** End Patch\n"}),
    );
    assert_eq!(e.kind, wrench_core::ErrorKind::InvalidArgs, "{}", e.message);
    assert!(is_link(&f, "alias"));
    assert_eq!(f.text("real"), "r\n");
    assert!(!f.path("moved").exists());
}
