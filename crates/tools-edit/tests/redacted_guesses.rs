//! A secret the redactor masks cannot be learned by guessing through the
//! edit tools: for every probe in `data/redacted_guesses.jsonl`, a right
//! guess of the secret's prefix and a wrong one get the same answer (kind
//! and message, the guess itself aside), and the file is unchanged. A
//! match on the marker itself is refused with one fixed message, and the
//! visible parts of a secret's line remain usable anchors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;
use serde_json::{Value, json};
use support::Fx;

const FILE: &str = "a\npassword = \"hunter2secretXYZ\"\nb\n";
const RIGHT: &str = "\"hunter2secretX";
const WRONG: &str = "\"hunter2secretQ";

fn answer(row: &Value, guess: &str) -> String {
    let f = Fx::new();
    f.put("f.txt", FILE);
    f.read("f.txt");
    let esc = serde_json::to_string(guess).unwrap();
    let args = row["args"]
        .to_string()
        .replace("{G}", &esc[1..esc.len() - 1]);
    let args: Value = serde_json::from_str(&args).unwrap();
    let out = match f.call(row["tool"].as_str().unwrap(), args) {
        Ok(o) => format!("ok: {}", o.text),
        Err(e) => format!("{:?}: {}", e.kind, e.message),
    };
    assert_eq!(f.text("f.txt"), FILE, "{row}: the file changed");
    out.replace(guess, "GUESS")
        .replace(&format!("{guess:?}"), "GUESS")
        .replace(&serde_json::to_string(guess).unwrap(), "GUESS")
}

#[test]
fn right_and_wrong_guesses_of_a_redacted_secret_get_the_same_answer() {
    let rows = include_str!("data/redacted_guesses.jsonl");
    for line in rows.lines().filter(|l| !l.trim().is_empty()) {
        let row: Value = serde_json::from_str(line).unwrap();
        let (r, w) = (answer(&row, RIGHT), answer(&row, WRONG));
        assert_eq!(
            r, w,
            "class {}: the answer depends on the secret",
            row["class"]
        );
        assert!(!r.contains("hunter2"), "class {}: {r}", row["class"]);
    }
}

#[test]
fn a_match_on_the_redaction_marker_is_refused_with_the_fixed_message() {
    let marker = "[REDACTED:password_assignment]";
    let probes = [
        (
            "edit",
            json!({"path": "f.txt", "old_string": format!("password = \"{marker}\""), "new_string": "password = \"x\""}),
        ),
        (
            "edit",
            json!({"path": "f.txt", "old_string": format!("a\npassword = \"{marker}\"\n"), "new_string": "a\n"}),
        ),
        (
            "delete_range",
            json!({"path": "f.txt", "start_anchor": marker, "end_anchor": "b"}),
        ),
        (
            "apply_patch",
            json!({"patch": format!("*** Begin Patch\n*** Update File: f.txt\n a\n-password = \"{marker}\"\n+password = \"x\"\n*** End Patch\n")}),
        ),
    ];
    let mut messages = Vec::new();
    for (tool, args) in probes {
        let f = Fx::new();
        f.put("f.txt", FILE);
        f.read("f.txt");
        let e = f.err(tool, args.clone());
        assert_eq!(
            e.kind,
            wrench_core::ErrorKind::Denied,
            "{tool} {args}: {}",
            e.message
        );
        assert!(e.message.contains("ask the user"), "{}", e.message);
        assert_eq!(f.text("f.txt"), FILE);
        messages.push(e.message);
    }
    messages.dedup();
    assert_eq!(messages.len(), 1, "{messages:#?}");
}

#[test]
fn the_visible_part_of_a_secrets_line_still_anchors_a_change() {
    let f = Fx::new();
    f.put("f.txt", FILE);
    f.read("f.txt");
    f.ok(
        "delete_range",
        json!({"path": "f.txt", "start_anchor": "password = ", "end_anchor": "password = "}),
    );
    assert_eq!(f.text("f.txt"), "a\nb\n");
    let f = Fx::new();
    f.put("f.txt", FILE);
    f.read("f.txt");
    f.ok(
        "edit",
        json!({"path": "f.txt", "old_string": "a\npassword", "new_string": "A\npassword"}),
    );
    assert_eq!(f.text("f.txt"), "A\npassword = \"hunter2secretXYZ\"\nb\n");
}
