//! What `checkpoints` and `undo` show of a file follows the `read` rules and
//! the redactor, whatever tool is showing it: a read-denied file's lines,
//! digests and sizes are never shown, and a private key's body lines are
//! masked in every diff (found on each whole version, not on the diff's
//! pieces).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Env, wrench_cmd};
use serde_json::{Value, json};

fn run(e: &Env, extra: &[&str], tool: &str, args: Value) -> (i32, String) {
    let out = wrench_cmd(e, &["--mode", "yolo"])
        .args(extra)
        .args(["call", tool, &args.to_string()])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// A PEM private key whose 20 body lines are distinct, recognisable strings.
fn key() -> (String, Vec<String>) {
    let body: Vec<String> = (0..20)
        .map(|i| {
            let mut l = format!("MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC{i:02}");
            while l.len() < 64 {
                l.push(char::from(b'A' + ((l.len() * 7 + i) % 26) as u8));
            }
            l
        })
        .collect();
    let pem = format!(
        "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
        body.join("\n")
    );
    (pem, body)
}

fn leaked<'a>(text: &str, body: &'a [String]) -> Vec<&'a String> {
    body.iter().filter(|l| text.contains(l.as_str())).collect()
}

#[test]
fn a_checkpoint_diff_and_an_undo_conflict_mask_a_private_keys_body() {
    let e = Env::new();
    let (pem, body) = key();
    std::fs::write(e.root.join("key.pem"), &pem).unwrap();
    let (code, v) = run(
        &e,
        &[],
        "bash",
        json!({"command": "sed -i '11s/^./Z/' key.pem"}),
    );
    assert_eq!(code, 0, "{v}");
    let (_, diff) = run(
        &e,
        &[],
        "checkpoints",
        json!({"action": "diff", "id": "cp-1"}),
    );
    assert!(diff.contains("key.pem"), "{diff}");
    assert!(leaked(&diff, &body).is_empty(), "checkpoints diff: {diff}");
    // A change outside wrench: undo refuses with a diff, masked too.
    let now = std::fs::read_to_string(e.root.join("key.pem")).unwrap();
    std::fs::write(e.root.join("key.pem"), now.replacen("MIIEv", "QIIEv", 1)).unwrap();
    let (code, undo) = run(&e, &[], "undo", json!({}));
    assert_ne!(code, 0, "{undo}");
    assert!(undo.contains("changed outside wrench"), "{undo}");
    assert!(leaked(&undo, &body).is_empty(), "undo conflict: {undo}");
}

#[test]
fn a_read_denied_file_shows_no_lines_digest_or_size_through_checkpoints_or_undo() {
    let e = Env::new();
    std::fs::write(e.root.join("secret.txt"), "api_note=hello\nline2\nline3\n").unwrap();
    let deny = ["--deny", "read(secret.txt)"];
    let (code, v) = run(
        &e,
        &deny,
        "bash",
        json!({"command": "echo added-by-bash >> secret.txt"}),
    );
    assert_eq!(code, 0, "{v}");
    std::fs::write(
        e.root.join("secret.txt"),
        "api_note=hello\nline2\nline3\nadded-by-bash\nUSER-EDIT private plans\n",
    )
    .unwrap();
    let (code, undo) = run(&e, &deny, "undo", json!({}));
    assert_ne!(code, 0, "{undo}");
    for l in ["line2", "added-by-bash", "USER-EDIT"] {
        assert!(!undo.contains(l), "undo showed {l}: {undo}");
    }
    let (_, diff) = run(&e, &deny, "checkpoints", json!({"action": "diff", "id": 1}));
    for l in ["line2", "added-by-bash", "USER-EDIT"] {
        assert!(!diff.contains(l), "diff showed {l}: {diff}");
    }
    for action in ["show", "list"] {
        let (_, out) = run(&e, &deny, "checkpoints", json!({"action": action, "id": 1}));
        let v: Value = serde_json::from_str(&out).unwrap();
        let s = v["output"].to_string();
        assert!(s.contains("secret.txt"), "{action}: {s}");
        assert!(!s.contains("sha256"), "{action} gave a digest: {s}");
        assert!(!s.contains("\"size\""), "{action} gave a size: {s}");
    }
    // Without the rule, the same checkpoint shows its states.
    let (_, out) = run(&e, &[], "checkpoints", json!({"action": "show", "id": 1}));
    assert!(out.contains("sha256"), "{out}");
}

#[test]
fn an_edit_of_a_file_read_before_a_deny_rule_shows_none_of_its_lines() {
    let e = Env::new();
    std::fs::write(
        e.root.join("secret.txt"),
        "alpha\nbeta SECRETVALUE-1\ngamma SECRETVALUE-2\n",
    )
    .unwrap();
    let (code, v) = run(&e, &[], "read", json!({"path": "secret.txt"}));
    assert_eq!(code, 0, "{v}");
    let deny = ["--deny", "read(secret.txt)"];
    let (code, miss) = run(
        &e,
        &deny,
        "edit",
        json!({"path": "secret.txt", "old_string": "beta SECRETVALUE-9", "new_string": "x"}),
    );
    assert_ne!(code, 0, "{miss}");
    assert!(miss.contains("not found"), "{miss}");
    assert!(!miss.contains("SECRETVALUE"), "a miss showed lines: {miss}");
    let (code, done) = run(
        &e,
        &deny,
        "edit",
        json!({"path": "secret.txt", "old_string": "alpha", "new_string": "omega"}),
    );
    assert_eq!(code, 0, "{done}");
    assert!(
        !done.contains("SECRETVALUE"),
        "the diff showed lines: {done}"
    );
}
