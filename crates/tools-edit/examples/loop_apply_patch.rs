//! `cargo run --release -p wrench-tools-edit --example loop_apply_patch -- CORPUS WORKDIR [HUNKS] [ROUNDS]`:
//! apply a many-hunk patch and its reverse over and over (for profilers);
//! prints the median milliseconds of one apply.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(corpus), Some(work)) = (args.first(), args.get(1)) else {
        eprintln!("usage: loop_apply_patch CORPUS WORKDIR [HUNKS] [ROUNDS]");
        std::process::exit(2);
    };
    let hunks = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(wrench_tools_edit::bench::BENCH_HUNKS);
    let rounds = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    match wrench_tools_edit::bench::apply_patch_loop(
        std::path::Path::new(corpus),
        std::path::Path::new(work),
        hunks,
        rounds,
    ) {
        Ok(mut ms) => {
            ms.sort_by(f64::total_cmp);
            let med = ms.get(ms.len() / 2).copied().unwrap_or(0.0);
            println!("{{\"applies\":{},\"median_ms\":{med:.2}}}", ms.len());
        }
        Err(e) => {
            eprintln!("loop: {e}");
            std::process::exit(1);
        }
    }
}
