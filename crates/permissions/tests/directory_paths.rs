//! A change path that names a directory (a trailing `/`, `/.` or `/..`)
//! is refused with a clear error instead of changing a file of the same
//! name. Cases in `data/directory_paths.tsv`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use wrench_permissions::Workspace;

#[test]
fn paths_naming_a_directory_are_refused_for_changes() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("dir")).unwrap();
    let ws = Workspace::open(d.path()).unwrap();
    for line in include_str!("data/directory_paths.tsv").lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (path, refused) = line.split_once('\t').unwrap();
        let r = ws.resolve_for_write(path);
        assert_eq!(r.is_err(), refused == "yes", "{path:?}: {r:?}");
        if let Err(e) = r {
            assert_eq!(
                e.kind,
                wrench_core::ErrorKind::InvalidArgs,
                "{path:?}: {}",
                e.message
            );
        }
        let e = ws.resolve_entry_for_change(path);
        assert_eq!(e.is_err(), refused == "yes", "{path:?} (entry)");
    }
}
