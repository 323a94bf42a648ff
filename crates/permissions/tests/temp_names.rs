//! The stale-temp sweep removes only files named exactly as wrench names
//! its temp files; a user's file that merely starts with `.wrench-tmp-`
//! survives. Cases in `data/temp_names.tsv`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, SystemTime};
use wrench_permissions::Workspace;

#[test]
fn only_wrench_shaped_temp_names_are_swept() {
    let d = tempfile::tempdir().unwrap();
    let rows: Vec<(&str, bool)> = include_str!("data/temp_names.tsv")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let (n, w) = l.split_once('\t').unwrap();
            (n, w == "yes")
        })
        .collect();
    for (name, _) in &rows {
        std::fs::write(d.path().join(name), "x").unwrap();
    }
    let ws = Workspace::open(d.path()).unwrap();
    let dir = ws.open_write_dir(Path::new(""), false).unwrap();
    // Every file is older than a cutoff an hour ahead.
    let n = dir.clean_stale_temps(SystemTime::now() + Duration::from_secs(3600));
    for (name, swept) in &rows {
        assert_eq!(!d.path().join(name).exists(), *swept, "{name}");
    }
    assert_eq!(n, rows.iter().filter(|r| r.1).count());
}
