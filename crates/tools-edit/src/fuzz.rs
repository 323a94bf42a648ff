//! Entry points for fuzzing (the `cargo fuzz` targets in `fuzz/` and the
//! stable proptest harness call these): they must never panic.

/// The text the fuzzed patches are applied to: CRLF and LF lines, a blank
/// line, trailing spaces, Unicode quotes, no final newline.
pub const FUZZ_FILE: &str = "a\nb\r\n\nc  \n\u{201C}d\u{201D}";

/// Parse arbitrary bytes as a patch and, when it parses, apply every Update
/// and check that the diff built from where the hunks landed turns the old
/// text into the new one. The input is `file NUL patch` (or a bare patch,
/// applied to [`FUZZ_FILE`]). Any panic is a bug.
pub fn patch_parser(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let (file, patch) = s.split_once('\0').unwrap_or((FUZZ_FILE, s));
    if let Ok(p) = crate::patch::parse(patch) {
        for op in &p.ops {
            if let crate::patch::Op::Update { chunks, .. } = op
                && let Ok(r) = crate::patch::apply_update(file, chunks, "f")
            {
                let d = crate::diff::file_diff_kept("f", "f", file, &r.text, &r.kept);
                assert_eq!(
                    apply_unified(file, &d.text).as_deref(),
                    Some(r.text.as_str()),
                    "the diff does not turn the old text into the new:\n{}",
                    d.text
                );
            }
        }
    }
}

/// Run the edit engine on arbitrary text: split the input into file, old
/// and new at NUL bytes. Any panic is a bug, and so is an identity edit
/// (new = old) that changes the file: copied lines keep the file's bytes.
pub fn edit_engine(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    let mut parts = s.splitn(3, '\0');
    let (Some(f), Some(o), Some(n)) = (parts.next(), parts.next(), parts.next()) else {
        return;
    };
    let _ = crate::engine::replace(f, o, n, false, "f");
    let _ = crate::engine::replace(f, o, n, true, "f");
    for all in [false, true] {
        if let Ok(a) = crate::engine::replace(f, o, o, all, "f") {
            assert_eq!(a.text, f, "identity edit of {o:?} changed the file");
        }
    }
}

/// Apply a one-file unified diff to `old` strictly, as `patch` would with no
/// fuzz: every context and removed line must match. None when it does not.
pub fn apply_unified(old: &str, diff: &str) -> Option<String> {
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let d: Vec<&str> = diff.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0usize;
    let mut i = d
        .iter()
        .position(|l| l.starts_with("@@ "))
        .unwrap_or(d.len());
    while i < d.len() {
        let start = hunk_old_start(d[i])?;
        if start < at || start > a.len() {
            return None;
        }
        a[at..start].iter().for_each(|l| out.push_str(l));
        at = start;
        i += 1;
        while i < d.len() && !d[i].starts_with("@@ ") {
            let (tag, body) = d[i].split_at(d[i].char_indices().nth(1).map_or(d[i].len(), |c| c.0));
            let no_nl = d
                .get(i + 1)
                .is_some_and(|n| n.starts_with("\\ No newline at end of file"));
            let body = if no_nl {
                body.strip_suffix('\n')?
            } else {
                body
            };
            match tag {
                " " | "-" => {
                    if a.get(at) != Some(&body) {
                        return None;
                    }
                    if tag == " " {
                        out.push_str(body);
                    }
                    at += 1;
                }
                "+" => out.push_str(body),
                _ => return None,
            }
            i += if no_nl { 2 } else { 1 };
        }
    }
    a[at..].iter().for_each(|l| out.push_str(l));
    Some(out)
}

/// Where the old side of a `@@ -S[,L] +… @@` hunk starts (0-based).
fn hunk_old_start(h: &str) -> Option<usize> {
    let old = h.strip_prefix("@@ -")?.split(' ').next()?;
    let (s, l) = match old.split_once(',') {
        Some((s, l)) => (s.parse::<usize>().ok()?, l.parse::<usize>().ok()?),
        None => (old.parse::<usize>().ok()?, 1),
    };
    if l == 0 { Some(s) } else { s.checked_sub(1) }
}
