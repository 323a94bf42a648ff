//! One index of a tree in a fresh process, for `perf stat` and hyperfine:
//! `cargo run --release -p wrench-symbols --example index_once -- DIR [CACHE_DIR]`
//!
//! Without `CACHE_DIR` the index is cold (a new empty cache in a temp dir);
//! with it, the on-disk cache there is loaded first and refreshed (the
//! warm-cache case after the first run). Prints files and symbols.

use std::sync::atomic::AtomicBool;

fn main() {
    let mut args = std::env::args_os().skip(1);
    let Some(root) = args.next() else {
        eprintln!("usage: index_once DIR [CACHE_DIR]");
        std::process::exit(2);
    };
    let temp = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("index_once: cannot make a temp dir: {e}");
            std::process::exit(1);
        }
    };
    let cache = args
        .next()
        .map_or_else(|| temp.path().join("symbols"), std::path::PathBuf::from);
    let ws = match wrench_permissions::Workspace::open(std::path::Path::new(&root)) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("index_once: {e}");
            std::process::exit(1);
        }
    };
    let stop = AtomicBool::new(false);
    let (files, symbols, parsed) =
        wrench_symbols::index::with_index(&ws, &cache, &stop, |_, st| {
            (st.files, st.symbols, st.parsed)
        });
    println!("files={files} symbols={symbols} parsed={parsed}");
}
