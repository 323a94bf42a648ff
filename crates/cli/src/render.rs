//! Rendering results: human text for one-shot commands, JSON for `--json`,
//! `call` and `batch`.

use serde_json::Value;
use wrench_core::{CallResult, OutputKind};

/// The text a person reads on stdout for a one-shot call, and the notes (or
/// the error) that go to stderr, with hints in CLI terms ([`for_people`]),
/// made safe for a terminal ([`wrench_core::frame::for_terminal`]: a file's
/// or a commit's control sequences, BEL, CR, C1 and bidi characters shown
/// as `⟨U+XXXX⟩`) before any colour is added. The JSON doors stay exact.
pub fn human(r: &CallResult) -> (String, String) {
    if let Ok(out) = &r.result
        && let Some(text) = escaped_as_is(out)
    {
        let notes = rewrite_notes(r, human_raw_notes(r));
        return (text, safe_for_terminal(notes));
    }
    let (text, notes) = human_unescaped(r);
    (safe_for_terminal(text), safe_for_terminal(notes))
}

/// The text [`human`] shows for `out` when no hint in it is rewritten and
/// no image is described, escaped straight from the result's text: a text
/// that needs escaping (a grep's lines with a hidden character) is copied
/// once, by the escaping, not once before it too. None when the general
/// path must run: an image, a hint to rewrite, or a text ending in a CR
/// (the line break added after it would make a CRLF of it).
fn escaped_as_is(out: &wrench_core::ToolOutput) -> Option<String> {
    if out.kind == OutputKind::Image || out.text.ends_with('\r') || has_text_hint(&out.text) {
        return None;
    }
    let mut s = match wrench_core::frame::for_terminal(&out.text) {
        std::borrow::Cow::Borrowed(t) => t.to_string(),
        std::borrow::Cow::Owned(o) => o,
    };
    if !s.is_empty() && !s.ends_with('\n') {
        s.push('\n');
    }
    Some(s)
}

/// [`wrench_core::frame::for_terminal`] that keeps the string it was given
/// when nothing needs escaping (a content view can be megabytes).
fn safe_for_terminal(s: String) -> String {
    match wrench_core::frame::for_terminal(&s) {
        std::borrow::Cow::Borrowed(_) => s,
        std::borrow::Cow::Owned(o) => o,
    }
}

fn human_unescaped(r: &CallResult) -> (String, String) {
    let (text, notes) = human_raw(r);
    (rewrite(text, true), rewrite_notes(r, notes))
}

/// The notes with their hints rewritten and, for a stale error, the CLI's
/// addition.
fn rewrite_notes(r: &CallResult, notes: String) -> String {
    let mut notes = rewrite(notes, false);
    if let Err(e) = &r.result
        && e.kind == wrench_core::ErrorKind::Stale
        && notes.ends_with('\n')
    {
        notes.pop();
        notes.push_str(STALE_SESSION_HINT);
        notes.push('\n');
    }
    notes
}

/// [`human_raw`]'s notes alone (the text not copied).
fn human_raw_notes(r: &CallResult) -> String {
    match &r.result {
        Ok(out) => {
            let mut notes = String::new();
            for n in r.repaired.iter().chain(out.notes.iter()) {
                notes.push_str(&format!("note: {n}\n"));
            }
            notes
        }
        Err(_) => human_raw(r).1,
    }
}

fn human_raw(r: &CallResult) -> (String, String) {
    match &r.result {
        Ok(out) => {
            let mut text = out.text.clone();
            if out.kind == OutputKind::Image {
                for img in &out.images {
                    let bytes = img.data.len() / 4 * 3;
                    text.push_str(&format!(
                        "\n[image: {}, about {bytes} bytes; use --json to get the data]",
                        img.mime_type
                    ));
                }
            }
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            let mut notes = String::new();
            for n in r.repaired.iter().chain(out.notes.iter()) {
                notes.push_str(&format!("note: {n}\n"));
            }
            (text, notes)
        }
        Err(e) => {
            let mut err = String::new();
            for n in &r.repaired {
                err.push_str(&format!("note: {n}\n"));
            }
            err.push_str(&format!("error[{}]: {}\n", e.kind, e.message));
            (String::new(), err)
        }
    }
}

/// One JSON line for a result.
pub fn json_line(r: &CallResult, with_group: bool) -> String {
    let v: Value = r.to_json(with_group);
    serde_json::to_string(&v).unwrap_or_else(|e| format!("{{\"ok\":false,\"error\":{{\"kind\":\"io\",\"message\":\"cannot encode result: {e}\"}}}}"))
}

/// One result as a person reads it among several (`call`/`batch` with
/// `--format text`): a header line with id, tool and outcome, then its text
/// and notes (or its error).
pub fn text_block(r: &CallResult) -> String {
    let outcome = match &r.result {
        Ok(_) => "ok".to_string(),
        Err(e) => format!("error[{}]", e.kind),
    };
    let mut s = format!("── {} {}: {outcome} ({} ms)\n", r.id, r.tool, r.elapsed_ms);
    let (text, notes) = human_unescaped(r);
    s.push_str(&text);
    s.push_str(&notes);
    wrench_core::frame::for_terminal(&s).into_owned()
}

/// Hints written for a model name JSON arguments (`pass replace_all:
/// true`, `bash_output {"id": "bg-1"}`, `offset=M`); a person at the CLI
/// gets the flag or command instead. Only wrench's own hint phrases are
/// rewritten: whole notes and error messages, and in a result's text only
/// the trailer lines tools write (a file's or command's own bytes are never
/// touched, since those patterns need wrench's exact wording at a line start).
pub fn for_people(s: &str) -> String {
    rewrite(s.to_string(), false)
}

/// [`for_people`] for a result's text: only the rules anchored at a
/// trailer line's start, never a phrase inside shown content.
pub fn for_people_text(s: &str) -> String {
    rewrite(s.to_string(), true)
}

/// One hint rewrite: a literal every match contains, the pattern, and its
/// replacement. The pattern is compiled only when the literal is there, so
/// a result without hints (nearly all) costs a substring search per rule.
struct Rule {
    needle: &'static str,
    pattern: &'static str,
    to: &'static str,
}

const RULES: [Rule; 9] = [
    Rule {
        needle: "pass replace_all: true",
        pattern: r"pass replace_all: true",
        to: "pass --replace-all",
    },
    Rule {
        needle: "Read its output with bash_output",
        pattern: r#"(?m)^Read its output with bash_output \{"id": "([^"]+)"\}; stop it with kill_shell \{"id": "([^"]+)"\}"#,
        to: "Read its output with `wrench bash-output $1`; stop it with `wrench kill-shell $2`",
    },
    Rule {
        needle: "  last output (",
        pattern: r"(?m)^(  last output \(\d+ bytes in all; )bash_output ((?:bg|pty)-\d+)",
        to: "${1}wrench bash-output $2",
    },
    Rule {
        needle: "[… more output unread; call bash_output ",
        pattern: r"(?m)^\[… more output unread; call bash_output ((?:bg|pty)-\d+) again\]",
        to: "[… more output unread; run `wrench bash-output $1` again]",
    },
    Rule {
        needle: " more lines; offset=",
        pattern: r"(?m)^(… \d+ more lines); offset=(\d+)$",
        to: "$1; --offset $2 for the rest",
    },
    Rule {
        needle: "read path=",
        pattern: r"read path=(\S+) offset=(\d+) for the rest",
        to: "`wrench read $1 --offset $2` for the rest",
    },
    Rule {
        needle: "pass offset and limit to read a part (e.g. offset=",
        pattern: r"pass offset and limit to read a part \(e\.g\. offset=(\d+), limit=(\d+)\)",
        to: "pass --offset and --limit to read a part (e.g. --offset $1 --limit $2)",
    },
    Rule {
        needle: "use --mode ",
        pattern: r"use --mode (read-only|ask|auto|yolo)",
        to: "use --permission-mode $1",
    },
    Rule {
        needle: "call webfetch again with offset=",
        pattern: r"call webfetch again with offset=(\d+)",
        to: "run wrench webfetch again with --offset $1",
    },
];

/// From this many bytes a text's hint needles are looked for in one pass
/// (compiled once, in well under a millisecond) rather than one per rule.
const ONE_PASS_MIN_BYTES: usize = 64 * 1024;

/// Whether a rule for a result's text ([`for_people_text`]) may rewrite
/// something in `text`: one of their needles is in it.
fn has_text_hint(text: &str) -> bool {
    match text_needles(text.len()) {
        Some(any) => any.is_match(text),
        None => RULES
            .iter()
            .any(|r| r.pattern.starts_with("(?m)^") && text.contains(r.needle)),
    }
}

/// The one-pass search for the needles of the text rules, for a text of
/// `len` bytes: None for a short text, or when it did not compile.
fn text_needles(len: usize) -> Option<&'static regex::Regex> {
    use std::sync::OnceLock;
    static TEXT_NEEDLES: OnceLock<Option<regex::Regex>> = OnceLock::new();
    if len < ONE_PASS_MIN_BYTES {
        return None;
    }
    TEXT_NEEDLES
        .get_or_init(|| {
            let needles: Vec<String> = RULES
                .iter()
                .filter(|r| r.pattern.starts_with("(?m)^"))
                .map(|r| regex::escape(r.needle))
                .collect();
            regex::Regex::new(&needles.join("|")).ok()
        })
        .as_ref()
}

fn rewrite(mut out: String, text: bool) -> String {
    use std::sync::OnceLock;
    static COMPILED: [OnceLock<Option<regex::Regex>>; RULES.len()] =
        [const { OnceLock::new() }; RULES.len()];
    // A long result's text (a grep's can be megabytes) is looked at once
    // for all the needles of the rules it may get (a multi-literal search),
    // not once per rule; a text without any is returned as it is. A short
    // one (most calls) is not worth compiling the search for.
    if text
        && let Some(any) = text_needles(out.len())
        && !any.is_match(&out)
    {
        return out;
    }
    for (rule, compiled) in RULES.iter().zip(&COMPILED) {
        if text && !rule.pattern.starts_with("(?m)^") {
            continue;
        }
        if !out.contains(rule.needle) {
            continue;
        }
        let Some(re) = compiled.get_or_init(|| regex::Regex::new(rule.pattern).ok()) else {
            continue;
        };
        if re.is_match(&out) {
            out = re.replace_all(&out, rule.to).into_owned();
        }
    }
    out
}

/// The CLI's own addition to a `stale` error: reads are kept per session.
pub const STALE_SESSION_HINT: &str = " (reads are kept per session: give the read and the change the same --session NAME, or WRENCH_SESSION)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_hints_become_flags_and_commands() {
        assert_eq!(
            for_people("… or pass replace_all: true to change every one"),
            "… or pass --replace-all to change every one"
        );
        assert_eq!(
            for_people_text("     3\tgamma\n… 7 more lines; offset=4\n"),
            "     3\tgamma\n… 7 more lines; --offset 4 for the rest\n"
        );
        assert_eq!(
            for_people_text(
                "Read its output with bash_output {\"id\": \"bg-2\"}; stop it with kill_shell {\"id\": \"bg-2\"}. It ends"
            ),
            "Read its output with `wrench bash-output bg-2`; stop it with `wrench kill-shell bg-2`. It ends"
        );
    }

    /// Every rule rewrites a text it was written for: its needle is really
    /// in every text its pattern matches (a wrong needle skips the rule).
    #[test]
    fn every_rule_rewrites_its_own_hint() {
        let cases = [
            ("pass replace_all: true", "pass --replace-all"),
            (
                "Read its output with bash_output {\"id\": \"bg-1\"}; stop it with kill_shell {\"id\": \"bg-1\"}",
                "Read its output with `wrench bash-output bg-1`; stop it with `wrench kill-shell bg-1`",
            ),
            (
                "  last output (120 bytes in all; bash_output bg-3",
                "  last output (120 bytes in all; wrench bash-output bg-3",
            ),
            (
                "[… more output unread; call bash_output pty-2 again]",
                "[… more output unread; run `wrench bash-output pty-2` again]",
            ),
            (
                "… 7 more lines; offset=4",
                "… 7 more lines; --offset 4 for the rest",
            ),
            (
                "read path=src/a.rs offset=9 for the rest",
                "`wrench read src/a.rs --offset 9` for the rest",
            ),
            (
                "pass offset and limit to read a part (e.g. offset=1, limit=500)",
                "pass --offset and --limit to read a part (e.g. --offset 1 --limit 500)",
            ),
            ("use --mode yolo", "use --permission-mode yolo"),
            (
                "call webfetch again with offset=3000",
                "run wrench webfetch again with --offset 3000",
            ),
        ];
        assert_eq!(cases.len(), RULES.len());
        for ((from, to), rule) in cases.iter().zip(&RULES) {
            assert!(regex::Regex::new(rule.pattern).is_ok(), "{}", rule.pattern);
            assert_eq!(for_people(from), *to, "rule {}", rule.pattern);
        }
    }

    /// A text is rewritten by the rules anchored at a line start and by
    /// those only, whether it holds one needle, several or none.
    #[test]
    fn a_text_gets_every_line_start_rule_and_no_other() {
        let mut text = String::new();
        let mut want = String::new();
        for rule in RULES.iter() {
            let hint = match rule.needle {
                "  last output (" => "  last output (120 bytes in all; bash_output bg-3",
                "[… more output unread; call bash_output " => {
                    "[… more output unread; call bash_output pty-2 again]"
                }
                " more lines; offset=" => "… 7 more lines; offset=4",
                "Read its output with bash_output" => {
                    "Read its output with bash_output {\"id\": \"bg-1\"}; stop it with kill_shell {\"id\": \"bg-1\"}"
                }
                other => other,
            };
            text.push_str(hint);
            text.push('\n');
            let line = if rule.pattern.starts_with("(?m)^") {
                for_people(hint)
            } else {
                hint.to_string()
            };
            want.push_str(&line);
            want.push('\n');
        }
        assert_ne!(text, want);
        assert_eq!(for_people_text(&text), want);
        // Past the one-pass threshold too.
        let pad = "x\n".repeat(ONE_PASS_MIN_BYTES / 2);
        assert_eq!(
            for_people_text(&format!("{pad}{text}")),
            format!("{pad}{want}")
        );
        let plain = "src/a.rs:1:fn main() {}\n".repeat(3);
        assert_eq!(for_people_text(&plain), plain);
    }

    /// The text a person reads is the same whether it is escaped straight
    /// from the result (no hint, no image, no CR at its end) or by the
    /// general path (copied, hints rewritten, then escaped).
    #[test]
    fn the_direct_escape_shows_what_the_general_path_shows() {
        let long = "src/a.rs:1:fn main() {}\n".repeat(ONE_PASS_MIN_BYTES / 20);
        let texts = [
            String::new(),
            "plain".into(),
            "plain\n".into(),
            "a\x1b[2Jb\r\nc\rd\u{202e}e\u{7f}".into(),
            "ends in a CR\r".into(),
            "ends in CRLF\r\n".into(),
            "… 7 more lines; offset=4".into(),
            "… 7 more lines; offset=4\r".into(),
            format!("{long}x\u{1b}y"),
            format!("{long}… 7 more lines; offset=4\n"),
        ];
        for t in texts {
            let mut out = wrench_core::ToolOutput::text(t.clone());
            out.notes.push("a \u{1b} note".into());
            let r = CallResult {
                id: "1".into(),
                tool: "read".into(),
                group: 0,
                result: Ok(out),
                elapsed_ms: 0,
                repaired: vec!["a repair".into()],
            };
            let (text, notes) = human_unescaped(&r);
            let general = (safe_for_terminal(text), safe_for_terminal(notes));
            assert_eq!(human(&r), general, "{t:?}");
        }
    }

    #[test]
    fn file_content_in_a_text_is_left_alone() {
        let shown = "    12\tpass replace_all: true\n    13\t… 7 more lines; offset=4\n";
        assert_eq!(for_people_text(shown), shown);
    }
}
