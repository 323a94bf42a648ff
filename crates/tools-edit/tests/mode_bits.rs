//! A rewrite keeps the file's mode but drops setuid and setgid
//! (security.md 7.1), whichever tool rewrites it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use support::Fx;

#[test]
fn a_rewrite_drops_setuid_and_setgid_and_keeps_the_rest_of_the_mode() {
    // (mode before, mode after)
    let cases = [
        (0o4755, 0o755),
        (0o2755, 0o755),
        (0o6750, 0o750),
        (0o755, 0o755),
        (0o640, 0o640),
    ];
    for (before, after) in cases {
        for tool in ["edit", "write", "apply_patch"] {
            let f = Fx::new();
            f.put("f.sh", "a\n");
            std::fs::set_permissions(f.path("f.sh"), std::fs::Permissions::from_mode(before))
                .unwrap();
            f.read("f.sh");
            let args = match tool {
                "edit" => json!({"path": "f.sh", "old_string": "a", "new_string": "b"}),
                "write" => json!({"path": "f.sh", "content": "b\n"}),
                _ => {
                    json!({"patch": "*** Begin Patch\n*** Update File: f.sh\n-a\n+b\n*** End Patch\n"})
                }
            };
            f.ok(tool, args);
            let mode = std::fs::metadata(f.path("f.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o7777;
            assert_eq!(mode, after, "{tool} of a {before:o} file");
        }
    }
}
