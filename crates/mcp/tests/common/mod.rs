//! What the table-driven tests of this crate share.

#![allow(clippy::unwrap_used, clippy::expect_used)]

/// The rows of the tab-separated table `tests/data/FILE`, each with its line
/// number; blank lines and `#` comments skipped.
pub fn rows(file: &str) -> Vec<(usize, Vec<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(file);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| (i + 1, l.split('\t').map(String::from).collect()))
        .collect()
}
