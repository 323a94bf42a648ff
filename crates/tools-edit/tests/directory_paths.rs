//! `write newdir/ ...` and `*** Add File: dir/` are refused with a clear
//! error; no regular file is created under the directory's name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use support::Fx;
use wrench_core::ErrorKind;

#[test]
fn a_trailing_slash_is_refused_by_write_and_add_file() {
    let f = Fx::new();
    let e = f.err("write", json!({"path": "newdir/", "content": "x"}));
    assert_eq!(e.kind, ErrorKind::InvalidArgs, "{}", e.message);
    assert!(e.message.contains("names a directory"), "{}", e.message);
    let e = f.err(
        "apply_patch",
        json!({"patch": "*** Begin Patch\n*** Add File: dir/\n+x\n*** End Patch\n"}),
    );
    assert_eq!(e.kind, ErrorKind::InvalidArgs, "{}", e.message);
    assert!(f.names("").is_empty(), "{:?}", f.names(""));
}
