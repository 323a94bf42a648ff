//! The file as the caller sees it: every span the workspace's redactor
//! masks is replaced by its `[REDACTED:<kind>]` marker (one per line of a
//! multi-line secret, so line numbers stay the same), and every match,
//! anchor, hint and "closest lines" is computed on that view only. So no
//! answer of an edit tool (success, no_match, ambiguity, hint, dry-run
//! diff) depends on the text inside a secret, and a match that touches a
//! marker is refused with one fixed message ([`secret_refused`]), whatever
//! text the caller gave for it. Cost: one redactor pass over the file per
//! call (text without a keyword is one prefilter scan).

use std::borrow::Cow;
use std::ops::Range;
use wrench_core::ToolError;

/// The masked view of a file's text.
pub struct Masked<'a> {
    view: Cow<'a, str>,
    /// (range in the view, range in the real text) of each marker.
    pieces: Vec<(Range<usize>, Range<usize>)>,
}

impl<'a> Masked<'a> {
    /// Mask the secrets of `real` (borrowed when it has none).
    pub fn of(real: &'a str) -> Masked<'a> {
        let found = wrench_core::Redactor::global().find(real);
        if found.is_empty() {
            return Masked {
                view: Cow::Borrowed(real),
                pieces: Vec::new(),
            };
        }
        let mut view = String::with_capacity(real.len());
        let mut pieces = Vec::new();
        let mut at = 0;
        for f in found {
            if f.start < at || f.end > real.len() {
                continue;
            }
            view.push_str(&real[at..f.start]);
            let marker = format!("{}{}]", wrench_core::redact::REDACTION_PREFIX, f.kind);
            // One marker per line of the secret; its line breaks stay.
            let mut seg = f.start;
            for (k, part) in real[f.start..f.end].split('\n').enumerate() {
                if k > 0 {
                    view.push('\n');
                }
                let body = part.strip_suffix('\r').unwrap_or(part);
                if !body.is_empty() {
                    let v0 = view.len();
                    view.push_str(&marker);
                    pieces.push((v0..view.len(), seg..seg + body.len()));
                }
                if body.len() < part.len() {
                    view.push('\r');
                }
                seg += part.len() + 1;
            }
            at = f.end;
        }
        view.push_str(&real[at..]);
        Masked {
            view: Cow::Owned(view),
            pieces,
        }
    }

    /// The text the caller sees.
    pub fn view(&self) -> &str {
        &self.view
    }

    /// Whether any secret was masked.
    pub fn any(&self) -> bool {
        !self.pieces.is_empty()
    }

    /// Whether view range `r` touches a marker.
    pub fn overlaps(&self, r: &Range<usize>) -> bool {
        self.pieces
            .iter()
            .any(|(v, _)| r.start < v.end && v.start < r.end.max(r.start + 1))
    }

    /// The real offset of view offset `v`, which lies outside every marker
    /// (or at one's edge).
    pub fn to_real(&self, v: usize) -> usize {
        let mut shift: isize = 0;
        for (pv, pr) in &self.pieces {
            if pv.start >= v {
                break;
            }
            shift += pr.len() as isize - pv.len() as isize;
        }
        (v as isize + shift) as usize
    }

    /// The view line `line` (its text starting at view offset `start`) with
    /// every marker replaced by a NUL: text found in it lies outside every
    /// secret.
    pub fn visible_only(&self, start: usize, line: &str) -> Cow<'a, str> {
        let end = start + line.len();
        let mut out = String::new();
        let mut at = start;
        for (v, _) in &self.pieces {
            if v.end <= start || v.start >= end {
                continue;
            }
            out.push_str(&self.view[at..v.start.max(at)]);
            out.push('\0');
            at = v.end.min(end);
        }
        if out.is_empty() && at == start {
            return Cow::Owned(line.to_string());
        }
        out.push_str(&self.view[at..end]);
        Cow::Owned(out)
    }
}

/// The one answer to a match, anchor or hunk that touches a redacted
/// secret, whether or not the caller's text for it is right.
pub fn secret_refused(what: &str) -> ToolError {
    ToolError::denied(format!(
        "the text to match in {what} touches a secret that wrench redacts (shown as [REDACTED:<kind>]); any match, anchor or hunk line that overlaps one is refused, whatever text stands for it, and nothing was changed. Edit around the secret (match only the visible text before or after it), replace the whole line by anchoring on its visible parts (delete_range with an anchor from the visible part of the line, then add the new line), or ask the user to change it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_becomes_its_marker_and_offsets_map_back() {
        let real = "a\npassword = \"hunter2secretXYZ\"\nb\n";
        let m = Masked::of(real);
        assert!(m.any());
        assert!(!m.view().contains("hunter2"));
        let b = m.view().rfind('b').unwrap_or(0);
        assert_eq!(&real[m.to_real(b)..], "b\n");
        assert_eq!(m.view().lines().count(), real.lines().count());
    }

    #[test]
    fn a_multi_line_secret_keeps_its_lines_and_an_edit_after_it_keeps_its_bytes() {
        let body = "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQzuVaE8AkAFmxZzow3x+VJYKdjykkJ0iT9wCS0DRTXu269V264Vf/3jvredZiKRkgwlL9xNAwxXFg0x/XFw005UWVRIkdgcKWTjpBP2dPwVZ4WWC+9aGVd+Gyn1o0CLelf4rEjGoXbAAEgAqeGUxrcIlbjXfbcmwIDAQABAoIBAQCR";
        let real = format!(
            "a\r\n-----BEGIN RSA PRIVATE KEY-----\r\n{body}\r\n{body}\r\n-----END RSA PRIVATE KEY-----\r\nb\r\n"
        );
        let m = Masked::of(&real);
        assert!(m.any(), "no secret found");
        assert_eq!(m.view().split('\n').count(), real.split('\n').count());
        assert!(!m.view().contains("MIIE"));
        let a = super::super::replace(&real, "b", "B", false, "f").unwrap();
        assert_eq!(a.text, real.replace("\nb\r\n", "\nB\r\n"));
        assert_eq!(a.lines, vec![6]);
    }
}
