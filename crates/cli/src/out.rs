//! Writing to stdout and stderr: safe for a person's terminal, and without
//! panicking on a closed pipe.
//!
//! Every byte the CLI prints goes through here, in one of three kinds:
//!
//! - [`stdout`], [`stderr`], [`line`]: text for a person. Tool text carries
//!   bytes a repository, a web page or a server chose (a file's lines, a
//!   commit's author, a command's output, an error quoting a name), so
//!   everything a terminal would act on is written as a visible escape
//!   (`frame::for_terminal`: ESC and every CSI/OSC/DCS with it, BEL, CR
//!   but the one of a CRLF, DEL, C1, bidi and invisible characters).
//! - [`styled_stdout`], [`styled_stderr`]: text wrench escaped and then
//!   coloured (`color::paint`, clap's help): the same escaping, except for
//!   SGR sequences (`ESC [ digits m`, colour and weight only).
//! - [`document`]: the man page and completion scripts, byte for byte.
//! - [`json`], [`json_line`]: JSON for programs, exact: a string's value is
//!   never changed, but DEL, C1 and invisible characters (which JSON allows
//!   raw) are written as `\uXXXX` escapes, so a terminal showing the JSON
//!   does not act on them either.
//!
//! `println!` panics when the reader has gone (`wrench … | head`); here a
//! broken pipe marks the stream closed and later writes to it are dropped,
//! so the command finishes its work (jobs, language servers, state) and
//! exits 0, as `rg` does.

use std::borrow::Cow;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use wrench_core::frame;

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);
static STDERR_CLOSED: AtomicBool = AtomicBool::new(false);

fn write_to(w: &mut dyn Write, closed: &AtomicBool, bytes: &[u8]) {
    if closed.load(Ordering::Relaxed) || bytes.is_empty() {
        return;
    }
    if let Err(e) = w.write_all(bytes).and_then(|()| w.flush())
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        closed.store(true, Ordering::Relaxed);
    }
}

fn raw_stdout(bytes: &[u8]) {
    write_to(&mut std::io::stdout().lock(), &STDOUT_CLOSED, bytes);
}

fn raw_stderr(bytes: &[u8]) {
    write_to(&mut std::io::stderr().lock(), &STDERR_CLOSED, bytes);
}

/// Write text for a person to standard output (escaped for the terminal).
pub fn stdout(text: impl AsRef<str>) {
    raw_stdout(frame::for_terminal(text.as_ref()).as_bytes());
}

/// Write a line of text for a person to standard output.
pub fn line(text: impl AsRef<str>) {
    let mut s = frame::for_terminal(text.as_ref()).into_owned();
    s.push('\n');
    raw_stdout(s.as_bytes());
}

/// Write text that [`frame::for_terminal`] already made safe for a
/// terminal, as it is: escaping it again would change nothing (its output
/// holds nothing it escapes; see the test), so it is not scanned twice.
pub fn escaped_stdout(text: &str) {
    debug_assert!(matches!(frame::for_terminal(text), Cow::Borrowed(_)));
    raw_stdout(text.as_bytes());
}

/// Write text for a person to standard error (escaped for the terminal).
pub fn stderr(text: impl AsRef<str>) {
    raw_stderr(frame::for_terminal(text.as_ref()).as_bytes());
}

/// Write escaped-then-coloured text to standard output: its SGR sequences
/// are kept, everything else a terminal acts on is escaped.
pub fn styled_stdout(text: impl AsRef<str>) {
    raw_stdout(keep_sgr_only(text.as_ref()).as_bytes());
}

/// [`styled_stdout`] for standard error.
pub fn styled_stderr(text: impl AsRef<str>) {
    raw_stderr(keep_sgr_only(text.as_ref()).as_bytes());
}

/// Write JSON to standard output, as it is but for the `\uXXXX` escapes of
/// [`json_escaped`].
pub fn json(text: impl AsRef<str>) {
    raw_stdout(json_escaped(text.as_ref()).as_bytes());
}

/// Write one JSON document and a newline to standard output ([`json`]).
pub fn json_line(text: impl AsRef<str>) {
    let mut s = json_escaped(text.as_ref()).into_owned();
    s.push('\n');
    raw_stdout(s.as_bytes());
}

/// Write a document wrench generated from its own definitions (the man
/// page, a completion script) byte for byte.
pub fn document(bytes: impl AsRef<[u8]>) {
    raw_stdout(bytes.as_ref());
}

/// Did the reader of standard output go away?
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::Relaxed)
}

/// The length of the SGR sequence (`ESC [`, digits, `;` or `:`, `m`) at the
/// start of `s`, if one is there.
fn sgr_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix("\x1b[")?;
    let params = rest
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';' || *b == b':')
        .count();
    (rest.as_bytes().get(params) == Some(&b'm')).then_some(2 + params + 1)
}

/// [`frame::for_terminal`] on everything but SGR sequences.
fn keep_sgr_only(text: &str) -> Cow<'_, str> {
    if !text.contains('\x1b') {
        return frame::for_terminal(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut copied = 0;
    let mut i = 0;
    while let Some(off) = text[i..].find('\x1b') {
        let at = i + off;
        match sgr_len(&text[at..]) {
            Some(n) => {
                out.push_str(&frame::for_terminal(&text[copied..at]));
                out.push_str(&text[at..at + n]);
                copied = at + n;
                i = copied;
            }
            None => i = at + 1,
        }
    }
    out.push_str(&frame::for_terminal(&text[copied..]));
    Cow::Owned(out)
}

/// JSON text with DEL, C1 controls and invisible or bidi characters written
/// as `\uXXXX` escapes (a surrogate pair above U+FFFF). Outside strings
/// JSON holds only ASCII, so only string contents change, and only in their
/// spelling: every value parses back the same. serde_json already escapes
/// the C0 controls.
pub fn json_escaped(text: &str) -> Cow<'_, str> {
    use std::fmt::Write as _;
    let escape = |c: char| c == '\x7f' || (!c.is_ascii() && frame::is_hidden(c));
    if !text.chars().any(escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 32);
    for c in text.chars() {
        if escape(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// What `for_terminal` writes it leaves alone: text it escaped once
        /// may be written by [`escaped_stdout`] without a second pass.
        #[test]
        fn terminal_escaping_is_idempotent(s in "(?s).{0,64}", raw in proptest::collection::vec(proptest::num::u8::ANY, 0..64)) {
            let bytes = String::from_utf8_lossy(&raw).into_owned();
            for text in [s, bytes, "a\r\nb\rc\x1b[2J\u{9b}\u{202e}\u{e0041}\u{7f}⟨U+001B⟩".to_string()] {
                let once = frame::for_terminal(&text).into_owned();
                proptest::prop_assert!(
                    matches!(frame::for_terminal(&once), Cow::Borrowed(_)),
                    "{:?} -> {:?}", text, once
                );
            }
        }
    }

    #[test]
    fn styled_text_keeps_only_sgr() {
        assert_eq!(
            keep_sgr_only("\x1b[35ma\x1b[0m:\x1b[1;31mb\x1b[0m"),
            "\x1b[35ma\x1b[0m:\x1b[1;31mb\x1b[0m"
        );
        assert_eq!(
            keep_sgr_only("\x1b[32mx\x1b[0m\x1b]52;c;eA==\x07\x1b[2J\r"),
            "\x1b[32mx\x1b[0m⟨U+001B⟩]52;c;eA==⟨U+0007⟩⟨U+001B⟩[2J⟨U+000D⟩"
        );
        assert_eq!(keep_sgr_only("\x1b["), "⟨U+001B⟩[");
    }

    #[test]
    fn json_keeps_every_value_and_escapes_what_a_terminal_acts_on() {
        let v = serde_json::json!({"t": "a\u{1b}[2J\u{9b}1m\u{7f}\u{202e}\u{e0041}é"});
        let s = serde_json::to_string(&v).unwrap_or_default();
        let e = json_escaped(&s);
        assert!(
            !e.contains(['\u{1b}', '\u{9b}', '\u{7f}', '\u{202e}', '\u{e0041}']),
            "{e}"
        );
        assert!(e.contains("\\udb40\\udc41") && e.contains('é'), "{e}");
        let back: serde_json::Value = serde_json::from_str(&e).unwrap_or_default();
        assert_eq!(back, v);
    }
}
