//! Cold index and warm symbol_search timings over a tree:
//! `cargo run --release -p wrench-symbols --example bench_index -- CORPUS_DIR`
//! Prints one JSON object (see `wrench_symbols::BenchReport`).

fn main() {
    let Some(root) = std::env::args_os().nth(1) else {
        eprintln!("usage: bench_index DIR");
        std::process::exit(2);
    };
    let state = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("bench_index: cannot make a temp dir: {e}");
            std::process::exit(1);
        }
    };
    match wrench_symbols::bench_index(std::path::Path::new(&root), state.path()) {
        Ok(r) => println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default()),
        Err(e) => {
            eprintln!("bench_index: {e}");
            std::process::exit(1);
        }
    }
}
