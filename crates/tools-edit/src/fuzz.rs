//! Entry points for fuzzing (the `cargo fuzz` target in `fuzz/` and the
//! stable proptest harness call these): they must never panic.

/// Parse arbitrary bytes as a patch and, when it parses, apply every Update
/// to a small fixed text. Any panic is a bug.
pub fn patch_parser(data: &[u8]) {
    let Ok(s) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = crate::patch::parse(s) {
        for op in &p.ops {
            if let crate::patch::Op::Update { chunks, .. } = op {
                let _ = crate::patch::apply_chunks("a\nb\r\n\nc  \n\u{201C}d\u{201D}", chunks, "f");
            }
        }
    }
}

/// Run the edit engine on arbitrary text: split the input into file, old
/// and new at NUL bytes. Any panic is a bug.
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
}
