//! Config sections and keys are checked against the registry when parsed:
//! a typo is an error naming it and the nearest valid name; user-named
//! tables (`[mcp.servers.NAME]`) stay open. The table is data
//! (`tests/data/config_keys.tsv`), every failing row reported.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers may panic

use proptest::prelude::*;
use wrench_core::Config;
use wrench_core::config::SECTIONS;

#[test]
fn config_keys_table() {
    let mut failed = Vec::new();
    let mut rows = 0;
    for line in include_str!("data/config_keys.tsv").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        rows += 1;
        let cols: Vec<&str> = line.split('\t').collect();
        let (want, toml, needle) = (cols[0], cols[1].replace("\\n", "\n"), cols[2]);
        match (want, Config::from_str(&toml)) {
            ("ok", Ok(_)) => {}
            ("error", Err(e))
                if e.message.contains(needle) && e.kind.to_string() == "invalid_args" => {}
            (_, got) => failed.push(format!("{toml:?}: want {want} {needle:?}, got {got:?}")),
        }
    }
    assert!(rows >= 20);
    assert!(
        failed.is_empty(),
        "{} of {rows} rows failed:\n{}",
        failed.len(),
        failed.join("\n")
    );
}

/// Every section a crate reads (`config.section("NAME")` anywhere in the
/// workspace's sources) is in the registry, so a new section cannot be
/// refused as a typo, nor an old one's typo pass.
#[test]
fn every_section_read_in_the_sources_is_registered() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let re = regex::Regex::new(r#"\.section(?:::<[^>]*>)?\(\s*"([a-z_]+)""#).unwrap();
    let mut missing = Vec::new();
    let mut seen = 0;
    let mut stack = vec![crates];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                if !p.ends_with("target") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "rs")
                && p.components().any(|c| c.as_os_str() == "src")
            {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                for c in re.captures_iter(&text) {
                    seen += 1;
                    let name = &c[1];
                    if !SECTIONS.iter().any(|s| s.name == name) {
                        missing.push(format!("{}: [{name}]", p.display()));
                    }
                }
            }
        }
    }
    assert!(seen >= 8, "found only {seen} section reads");
    assert!(
        missing.is_empty(),
        "sections read but not in config::SECTIONS:\n{}",
        missing.join("\n")
    );
}

proptest! {
    /// Every registered key of every section is accepted; any other name
    /// in a section is refused and named.
    #[test]
    fn only_registered_keys_pass(section in 0..SECTIONS.len(), name in "[a-z_]{1,12}") {
        let s = &SECTIONS[section];
        for key in s.keys {
            let ok = Config::from_str(&format!("[{}]\n{key} = 1\n", s.name));
            prop_assert!(ok.is_ok(), "[{}] {key}: {ok:?}", s.name);
        }
        let r = Config::from_str(&format!("[{}]\n{name} = 1\n", s.name));
        if s.keys.contains(&name.as_str()) {
            prop_assert!(r.is_ok());
        } else {
            let e = r.unwrap_err();
            prop_assert!(e.message.contains(&format!("`{name}`")), "{}", e.message);
        }
    }
}
