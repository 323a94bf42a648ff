//! Timing of the index for `cargo xtask bench` (see [`crate::bench_index`]).

use crate::index;
use crate::symbol_search::{SymbolSearchArgs, search};
use serde::Serialize;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime};
use wrench_core::{ToolError, ToolResult};
use wrench_permissions::Workspace;
use wrench_permissions::pathrule::ReadFilter;

/// Warm queries timed per measure (the median is reported).
pub const BENCH_WARM_RUNS: usize = 15;

/// What [`crate::bench_index`] measured. Times in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct BenchReport {
    pub files: usize,
    pub symbols: usize,
    pub skipped: usize,
    /// Walk + parse of every file, plus writing the cache.
    pub cold_index_ms: f64,
    /// CPU time (user + system, all threads) of the cold index.
    pub cold_index_cpu_ms: f64,
    /// Threads the cold index could run on (the CPUs this process may use).
    pub threads: usize,
    /// symbol_search in the same process, nothing changed (median).
    pub warm_search_ms: f64,
    /// symbol_search in the same process right after one file's mtime moved (median).
    pub warm_search_after_change_ms: f64,
    /// symbol_search in the same process with a live watcher (as in the
    /// workspace daemon) right after one file's mtime moved (median).
    pub live_search_after_change_ms: f64,
    /// symbol_search from a fresh process state: load the cache from disk,
    /// check freshness, search (median).
    pub fresh_process_search_ms: f64,
    /// Bytes of the on-disk cache.
    pub cache_bytes: u64,
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// CPU time (user + system, all threads) of this process so far, in
/// milliseconds.
fn cpu_ms() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } != 0 {
        return f64::NAN;
    }
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub(crate) fn run(root: &Path, state_dir: &Path) -> ToolResult<BenchReport> {
    let ws = Workspace::open(root)?;
    let cache = state_dir.join("symbols");
    let _ = std::fs::remove_dir_all(&cache);
    index::drop_in_memory(&cache);
    let stop = AtomicBool::new(false);

    let cpu = cpu_ms();
    let t = Instant::now();
    let (files, symbols, skipped, first) = index::with_index(&ws, &cache, &stop, |idx, st| {
        let first = idx
            .files()
            .into_iter()
            .find(|f| f.status == index::FileStatus::Parsed)
            .map(|f| f.rel.clone());
        (st.files, st.symbols, st.skipped(), first)
    });
    let cold_index_ms = ms(t);
    let cold_index_cpu_ms = cpu_ms() - cpu;

    let args = SymbolSearchArgs {
        query: Some("new".into()),
        ..Default::default()
    };
    let mut warm = Vec::new();
    for _ in 0..BENCH_WARM_RUNS {
        let t = Instant::now();
        search(&ws, &cache, &args, &ReadFilter::unrestricted(), &stop)?;
        warm.push(ms(t));
    }

    // Move one file's mtime (content untouched), search, put the mtime back.
    let mut after = Vec::new();
    let mut live_after = Vec::new();
    if let Some(rel) = first {
        let p = ws.root().join(&rel);
        let orig = std::fs::metadata(&p)
            .and_then(|m| m.modified())
            .map_err(|e| ToolError::from_io(&rel, &e))?;
        let f = std::fs::File::options()
            .write(true)
            .open(&p)
            .map_err(|e| ToolError::from_io(&rel, &e))?;
        for i in 0..BENCH_WARM_RUNS {
            let when = SystemTime::now() + std::time::Duration::from_secs(i as u64 + 1);
            f.set_modified(when)
                .map_err(|e| ToolError::from_io(&rel, &e))?;
            let t = Instant::now();
            search(&ws, &cache, &args, &ReadFilter::unrestricted(), &stop)?;
            after.push(ms(t));
        }
        // The same with the file watcher the daemon runs.
        let live = crate::live::start(ws.root(), &cache).map_err(ToolError::io)?;
        for _ in 0..2 {
            search(&ws, &cache, &args, &ReadFilter::unrestricted(), &stop)?;
        }
        for i in 0..BENCH_WARM_RUNS {
            let when = SystemTime::now() + std::time::Duration::from_secs(i as u64 + 100);
            f.set_modified(when)
                .map_err(|e| ToolError::from_io(&rel, &e))?;
            let t = Instant::now();
            search(&ws, &cache, &args, &ReadFilter::unrestricted(), &stop)?;
            live_after.push(ms(t));
        }
        drop(live);
        f.set_modified(orig)
            .map_err(|e| ToolError::from_io(&rel, &e))?;
    }

    let mut fresh = Vec::new();
    for _ in 0..BENCH_WARM_RUNS.min(5) {
        index::drop_in_memory(&cache);
        let t = Instant::now();
        search(&ws, &cache, &args, &ReadFilter::unrestricted(), &stop)?;
        fresh.push(ms(t));
    }
    let cache_bytes = std::fs::read_dir(&cache)
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    Ok(BenchReport {
        files,
        symbols,
        skipped,
        cold_index_ms,
        cold_index_cpu_ms,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        warm_search_ms: median(warm),
        warm_search_after_change_ms: median(after),
        live_search_after_change_ms: median(live_after),
        fresh_process_search_ms: median(fresh),
        cache_bytes,
    })
}
