//! The apply_patch benchmark `cargo xtask bench` runs: one patch of many
//! hunks over a corpus, applied by wrench's `apply_patch` (in process,
//! through the mutation guard, all or nothing) and by `git apply` of the
//! equivalent unified diff, on identical copies; medians of several runs.

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Hunks in the standard case.
pub const BENCH_HUNKS: usize = 2_000;
/// Files larger than this are not used.
pub const BENCH_MAX_FILE_BYTES: u64 = 512 * 1024;
/// Lines between two hunks of one file (so contexts never overlap).
const HUNK_SPACING: usize = 12;

/// Figures of one benchmark run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BenchReport {
    /// Hunks in the patch.
    pub hunks: usize,
    /// Files the patch touches.
    pub files: usize,
    /// Runs of each side; the times are their medians.
    pub runs: usize,
    /// Median wall time of wrench's `apply_patch`, in milliseconds.
    pub wrench_ms: f64,
    /// Median wall time of `git apply` on the same change, in milliseconds.
    pub git_apply_ms: f64,
    /// wrench / git apply (goal: at most 1.0).
    pub ratio: f64,
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = rd.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let p = e.path();
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        match e.file_type() {
            Ok(t) if t.is_dir() => walk(&p, out),
            Ok(t) if t.is_file() => out.push(p),
            _ => {}
        }
    }
}

struct FileCase {
    rel: String,
    text: String,
    lines: Vec<usize>,
}

/// Pick files and hunk lines from `corpus`, deterministically.
fn plan(corpus: &Path, hunks: usize) -> Vec<FileCase> {
    let mut files = Vec::new();
    walk(corpus, &mut files);
    let mut cases: Vec<FileCase> = Vec::new();
    let mut left = hunks;
    for p in files {
        if left == 0 {
            break;
        }
        let Ok(m) = std::fs::metadata(&p) else {
            continue;
        };
        if m.len() > BENCH_MAX_FILE_BYTES {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        if text.contains('\r') || !text.ends_with('\n') {
            continue;
        }
        let lines: Vec<&str> = text.lines().collect();
        let mut picks = Vec::new();
        let mut i = 4;
        while i + 4 < lines.len() && left > 0 {
            // A line whose 7-line window is unique enough: skip blank centres.
            if !lines[i].trim().is_empty() {
                picks.push(i);
                left -= 1;
                i += HUNK_SPACING;
            } else {
                i += 1;
            }
        }
        if picks.is_empty() {
            continue;
        }
        let rel = p.strip_prefix(corpus).unwrap_or(&p).display().to_string();
        cases.push(FileCase {
            rel,
            text,
            lines: picks,
        });
    }
    cases
}

/// The V4A patch and the equivalent unified diff.
fn patches(cases: &[FileCase]) -> (String, String) {
    patches_dir(cases, false)
}

/// The patches, or (`reverse`) the ones that take the change back.
fn patches_dir(cases: &[FileCase], reverse: bool) -> (String, String) {
    let mut v4a = String::from("*** Begin Patch\n");
    let mut udiff = String::new();
    for c in cases {
        let lines: Vec<&str> = c.text.lines().collect();
        v4a.push_str(&format!("*** Update File: {}\n", c.rel));
        udiff.push_str(&format!(
            "diff --git a/{0} b/{0}\n--- a/{0}\n+++ b/{0}\n",
            c.rel
        ));
        for &i in &c.lines {
            v4a.push_str("@@\n");
            udiff.push_str(&format!("@@ -{0},7 +{0},7 @@\n", i - 2));
            for (k, l) in lines.iter().enumerate().take(i + 4).skip(i - 3) {
                if k == i && reverse {
                    v4a.push_str(&format!("-{l} // bench\n+{l}\n"));
                    udiff.push_str(&format!("-{l} // bench\n+{l}\n"));
                } else if k == i {
                    v4a.push_str(&format!("-{l}\n+{l} // bench\n"));
                    udiff.push_str(&format!("-{l}\n+{l} // bench\n"));
                } else {
                    v4a.push_str(&format!(" {l}\n"));
                    udiff.push_str(&format!(" {l}\n"));
                }
            }
        }
    }
    v4a.push_str("*** End Patch\n");
    (v4a, udiff)
}

fn lay_out(dir: &Path, cases: &[FileCase]) -> Result<(), String> {
    for c in cases {
        let p = dir.join(&c.rel);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        }
        std::fs::write(&p, &c.text).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Lay the files out under `dir` and record a full read of each, as a
/// model would have read them before patching.
fn read_copy(dir: &Path, state: &Path, cases: &[FileCase]) -> Result<wrench_core::Context, String> {
    lay_out(dir, cases)?;
    let ctx = wrench_core::context_for(dir, state, std::sync::Arc::new(wrench_core::AllowAll))
        .map_err(|e| e.to_string())?;
    for c in cases {
        let real = ctx.root.join(&c.rel);
        let meta = std::fs::metadata(&real).map_err(|e| e.to_string())?;
        ctx.session
            .record_read(wrench_core::ReadEvidence::of(
                &real,
                c.text.as_bytes(),
                &meta,
                true,
                None,
            ))
            .map_err(|e| e.to_string())?;
    }
    Ok(ctx)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Run the benchmark: `hunks` hunks over text files of `corpus`, `runs` times each.
pub fn apply_patch_vs_git_apply(
    corpus: &Path,
    hunks: usize,
    runs: usize,
) -> Result<BenchReport, String> {
    let cases = plan(corpus, hunks);
    let got: usize = cases.iter().map(|c| c.lines.len()).sum();
    if got == 0 {
        return Err(format!("no usable text files under {}", corpus.display()));
    }
    let (v4a, udiff) = patches(&cases);
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (wdir, gdir, state) = (
        tmp.path().join("w"),
        tmp.path().join("g"),
        tmp.path().join("state"),
    );
    let diff_file = tmp.path().join("bench.diff");
    std::fs::write(&diff_file, &udiff).map_err(|e| e.to_string())?;

    let mut wt = Vec::new();
    let mut gt = Vec::new();
    for _ in 0..runs.max(1) {
        let ctx = read_copy(&wdir, &state, &cases)?;
        lay_out(&gdir, &cases)?;
        let t = Instant::now();
        crate::apply_patch::apply(&ctx, &v4a).map_err(|e| e.to_string())?;
        wt.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let st = std::process::Command::new("git")
            .args(["apply", "--whitespace=nowarn"])
            .arg(&diff_file)
            .current_dir(&gdir)
            .status()
            .map_err(|e| format!("git apply: {e}"))?;
        gt.push(t.elapsed().as_secs_f64() * 1e3);
        if !st.success() {
            return Err(format!("git apply failed ({st})"));
        }
        for c in &cases {
            let a = std::fs::read(wdir.join(&c.rel)).map_err(|e| e.to_string())?;
            let b = std::fs::read(gdir.join(&c.rel)).map_err(|e| e.to_string())?;
            if a != b {
                return Err(format!("wrench and git apply disagree on {}", c.rel));
            }
        }
    }
    let (w, g) = (median(wt), median(gt));
    Ok(BenchReport {
        hunks: got,
        files: cases.len(),
        runs: runs.max(1),
        wrench_ms: w,
        git_apply_ms: g,
        ratio: if g > 0.0 { w / g } else { 0.0 },
    })
}

/// For profiling: lay the files out once under `work`, then apply the patch
/// and its reverse `rounds` times each; milliseconds of every apply.
pub fn apply_patch_loop(
    corpus: &Path,
    work: &Path,
    hunks: usize,
    rounds: usize,
) -> Result<Vec<f64>, String> {
    let cases = plan(corpus, hunks);
    if cases.is_empty() {
        return Err(format!("no usable text files under {}", corpus.display()));
    }
    let (fwd, _) = patches_dir(&cases, false);
    let (back, _) = patches_dir(&cases, true);
    let (wdir, state) = (work.join("w"), work.join("state"));
    let ctx = read_copy(&wdir, &state, &cases)?;
    let mut ms = Vec::new();
    for _ in 0..rounds {
        for p in [&fwd, &back] {
            let t = Instant::now();
            crate::apply_patch::apply(&ctx, p).map_err(|e| e.to_string())?;
            ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(ms)
}
