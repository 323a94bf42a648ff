//! `cargo run --release -p wrench-tools-edit --example bench_apply_patch -- CORPUS [HUNKS] [RUNS]`:
//! apply_patch of a many-hunk patch versus `git apply` of the same diff.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(corpus) = args.first() else {
        eprintln!("usage: bench_apply_patch CORPUS [HUNKS] [RUNS]");
        std::process::exit(2);
    };
    let hunks = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(wrench_tools_edit::bench::BENCH_HUNKS);
    let runs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    match wrench_tools_edit::bench::apply_patch_vs_git_apply(
        std::path::Path::new(corpus),
        hunks,
        runs,
    ) {
        Ok(r) => println!("{}", serde_json::to_string(&r).unwrap_or_default()),
        Err(e) => {
            eprintln!("bench: {e}");
            std::process::exit(1);
        }
    }
}
