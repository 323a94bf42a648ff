//! The redactor's cost on real files, for comparing two builds:
//! `scrub_cost FILE...` (or `scrub_cost -` reading paths from stdin) scrubs
//! each file whole and, for a view, every tenth line alone through
//! `spans_shown`, and prints the bytes and the CPU-bound wall time (and,
//! first, that of `needs_whole_source` on every file; `SCRUB_COST_SHOW=1`
//! prints each finding). Run it
//! under `perf stat` for instruction counts.

use std::io::BufRead;
use wrench_redact::Redactor;

fn main() {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths == ["-"] {
        paths = std::io::stdin()
            .lock()
            .lines()
            .map_while(Result::ok)
            .collect();
    }
    let texts: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect();
    let r = Redactor::new();
    // What grep asks of every file it shows lines of.
    let start = std::time::Instant::now();
    let whole = texts.iter().filter(|t| r.needs_whole_source(t)).count();
    println!(
        "needs_whole_source: {whole} of {} files, {:?}",
        texts.len(),
        start.elapsed()
    );
    let start = std::time::Instant::now();
    let (mut bytes, mut found) = (0usize, 0usize);
    let show = std::env::var_os("SCRUB_COST_SHOW").is_some();
    for (t, path) in texts.iter().zip(&paths) {
        bytes += t.len();
        let f = r.find(t);
        if show {
            for x in &f {
                println!("{path}: {} {:?}", x.kind, &t[x.start..x.end]);
            }
        }
        found += f.len();
        let mut at = 0;
        let shown: Vec<std::ops::Range<usize>> = t
            .split_inclusive('\n')
            .enumerate()
            .filter_map(|(i, l)| {
                let range = at..at + l.len();
                at += l.len();
                (i % 10 == 0).then_some(range)
            })
            .collect();
        found += r.spans_shown(t, shown.into_iter().take(20)).len();
    }
    println!(
        "{} files, {bytes} bytes, {found} findings, {:?}",
        texts.len(),
        start.elapsed()
    );
}
