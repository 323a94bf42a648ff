//! Colour for people on a terminal: paths, line numbers, matches and diff
//! hunks in a one-shot command's text. `--color auto` (the default) colours
//! only when standard output is a terminal, `NO_COLOR` is unset or empty and
//! `TERM` is not `dumb`; `always` and `never` force it. JSON is never
//! coloured. Colour is added after redaction and framing, to the text as
//! shown, and only ever as SGR codes around bytes that are already there:
//! [`paint`] first makes the text terminal-safe
//! ([`wrench_core::frame::for_terminal`]), so the only escape sequences in
//! its result are its own, and `out::styled_stdout` keeps SGR only.

#![warn(missing_docs)]

use serde_json::Value;

const PATH: &str = "\x1b[35m";
const LINE_NO: &str = "\x1b[32m";
const MATCH: &str = "\x1b[1;31m";
const HUNK: &str = "\x1b[36m";
const ADDED: &str = "\x1b[32m";
const REMOVED: &str = "\x1b[31m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Colour on a terminal only, unless `NO_COLOR` is set or `TERM=dumb`.
    Auto,
    /// Colour even into a pipe or a file.
    Always,
    /// Never colour.
    Never,
}

impl When {
    /// Parse `auto|always|never`.
    pub fn parse(s: &str) -> Option<When> {
        match s {
            "auto" => Some(When::Auto),
            "always" => Some(When::Always),
            "never" => Some(When::Never),
            _ => None,
        }
    }

    /// Whether to colour, given whether standard output is a terminal.
    pub fn enabled(self, stdout_is_tty: bool) -> bool {
        match self {
            When::Always => true,
            When::Never => false,
            When::Auto => {
                stdout_is_tty
                    && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
            }
        }
    }
}

fn wrap(code: &str, s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("{code}{s}{RESET}")
    }
}

/// The matcher of a grep call's pattern, as grep itself builds it.
fn grep_regex(args: &Value) -> Option<regex::Regex> {
    let pattern = args.get("pattern")?.as_str()?;
    let flag = |k: &str| args.get(k).and_then(Value::as_bool).unwrap_or(false);
    let mut p = if flag("fixed_strings") {
        regex::escape(pattern)
    } else {
        pattern.to_string()
    };
    if flag("word") {
        p = format!(r"\b(?:{p})\b");
    }
    regex::RegexBuilder::new(&p)
        .case_insensitive(flag("case_insensitive"))
        .size_limit(1 << 20)
        .build()
        .ok()
}

fn paint_matches(re: Option<&regex::Regex>, text: &str) -> String {
    let Some(re) = re else {
        return text.to_string();
    };
    let mut out = String::new();
    let mut last = 0;
    for m in re.find_iter(text) {
        if m.start() == m.end() {
            continue;
        }
        out.push_str(&text[last..m.start()]);
        out.push_str(&wrap(MATCH, m.as_str()));
        last = m.end();
    }
    out.push_str(&text[last..]);
    out
}

/// `path:N:text` (a match) or `path-N-text` (context): split at the first
/// `:N:` / `-N-` whose N is all digits.
fn split_hit(line: &str) -> Option<(&str, &str, char, &str)> {
    for (i, c) in line.char_indices() {
        if c != ':' && c != '-' {
            continue;
        }
        let rest = &line[i + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && rest[digits..].starts_with(c) && i > 0 {
            return Some((&line[..i], &rest[..digits], c, &rest[digits + 1..]));
        }
    }
    None
}

fn grep_line(line: &str, mode: &str, re: Option<&regex::Regex>) -> String {
    if line.is_empty()
        || line == "--"
        || line.starts_with('[')
        || line.contains(' ') && mode != "content"
    {
        return line.to_string();
    }
    match mode {
        "content" => match split_hit(line) {
            Some((path, n, sep, text)) => {
                let text = if sep == ':' {
                    paint_matches(re, text)
                } else {
                    text.to_string()
                };
                format!("{}{sep}{}{sep}{text}", wrap(PATH, path), wrap(LINE_NO, n))
            }
            None => line.to_string(),
        },
        "count" => match line.rsplit_once(':') {
            Some((path, n)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                format!("{}:{n}", wrap(PATH, path))
            }
            _ => line.to_string(),
        },
        _ => wrap(PATH, line),
    }
}

fn numbered_line(line: &str) -> String {
    let trimmed = line.trim_start();
    let pad = line.len() - trimmed.len();
    let digits = trimmed.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && trimmed[digits..].starts_with('\t') {
        format!(
            "{}{}{}",
            &line[..pad],
            wrap(LINE_NO, &trimmed[..digits]),
            &trimmed[digits..]
        )
    } else {
        line.to_string()
    }
}

fn diff_line(line: &str) -> String {
    if line.starts_with("@@") {
        wrap(HUNK, line)
    } else if line.starts_with("+++ ") || line.starts_with("--- ") || line.starts_with("diff --git")
    {
        wrap(BOLD, line)
    } else if line.starts_with('+') {
        wrap(ADDED, line)
    } else if line.starts_with('-') {
        wrap(REMOVED, line)
    } else {
        line.to_string()
    }
}

/// `text` (a one-shot call's stdout) with colour for `tool` called with
/// `args`; escaped for the terminal first, so no byte of the text can start
/// a sequence of its own.
pub fn paint(tool: &str, args: &Value, text: &str) -> String {
    let text = wrench_core::frame::for_terminal(text);
    let text = text.as_ref();
    let per_line: Box<dyn Fn(&str) -> String> = match tool {
        "grep" => {
            let mode = args
                .get("mode")
                .and_then(Value::as_str)
                .map(|m| match m {
                    "c" => "count",
                    "content" | "count" => m,
                    _ => "files",
                })
                .unwrap_or("files")
                .to_string();
            let re = grep_regex(args);
            Box::new(move |l| grep_line(l, &mode, re.as_ref()))
        }
        "glob" => Box::new(|l: &str| {
            if l.contains(' ') || l.is_empty() {
                l.to_string()
            } else {
                wrap(PATH, l)
            }
        }),
        "read" | "read_region" | "read_symbol" => Box::new(numbered_line),
        "edit" | "multi_edit" | "write" | "apply_patch" | "delete_range" | "delete_symbol"
        | "notebook_edit" | "move_file" | "rename_symbol" | "git" | "undo" | "checkpoints" => {
            Box::new(diff_line)
        }
        _ => return text.to_string(),
    };
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for piece in text.split_inclusive('\n') {
        let (line, nl) = match piece.strip_suffix('\n') {
            Some(l) => (l, "\n"),
            None => (piece, ""),
        };
        out.push_str(&per_line(line));
        out.push_str(nl);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn grep_content_paints_path_line_and_match() {
        let s = paint(
            "grep",
            &json!({"pattern": "fn", "mode": "content"}),
            "src/a.rs:3:pub fn x() {}\nsrc/a.rs-4-}\n",
        );
        assert_eq!(
            s,
            "\x1b[35msrc/a.rs\x1b[0m:\x1b[32m3\x1b[0m:pub \x1b[1;31mfn\x1b[0m x() {}\n\x1b[35msrc/a.rs\x1b[0m-\x1b[32m4\x1b[0m-}\n"
        );
    }

    #[test]
    fn diff_hunks_are_coloured_and_other_tools_are_not() {
        let d = paint("edit", &json!({}), "@@ -1 +1 @@\n-a\n+b\n");
        assert!(
            d.contains("\x1b[36m@@ -1 +1 @@")
                && d.contains("\x1b[31m-a")
                && d.contains("\x1b[32m+b")
        );
        assert_eq!(paint("todowrite", &json!({}), "+x\n"), "+x\n");
    }

    #[test]
    fn auto_never_colours_a_pipe() {
        assert!(!When::Auto.enabled(false));
        assert!(When::Always.enabled(false));
        assert!(!When::Never.enabled(true));
    }
}
