//! `cargo xtask bench [--full]`: wrench grep and glob side by side with
//! ripgrep and fd on the benchmark corpus, in the same run, with ratios.
//!
//! Steps: build (or reuse) the corpus with `make-corpus.sh` (the small CI
//! variant unless `--full`) under `target/bench-corpus/`; build `wrench` in
//! the shipped `dist` profile (release with fat LTO); for each case run the wrench command and its anchor once to check
//! that both print the same number of lines; then time each pair back to back
//! (hyperfine when installed, else an own loop taking medians) and print a
//! table of medians and wrench/anchor ratios. The goal is every ratio ≤ 1.0.
//! Then three more tables: `apply_patch` of a 2,000-hunk patch versus
//! `git apply` (goal ≤ 1.0), the cold symbol index versus `ctags -R` (goal
//! ≤ 1.0) with warm `symbol_search` latency (goal ≤ 20 ms), and 1,000 MCP
//! reads through `wrench mcp serve` versus server-filesystem (goal ≤ 0.2;
//! needs `bash .ci/install.sh`). Then language servers (`--only lsp`, no corpus
//! or release build needed): see `bench_lsp`. `--only apply_patch|symbols|mcp|lsp`
//! picks one.
//!
//! The one-shot cases time a whole process: `wrench read FILE` versus
//! `rg -n '' FILE` (a 20-32 KB source file) and `wrench --version` versus
//! `rg --version` (goal ≤ 1.5). `--threads N` runs wrench and every anchor
//! under `taskset -c 0-(N-1)`: both size their thread pools by the CPUs
//! they may use, so the ratio at 1 and 2 threads shows a serial stage.
//!
//! Options: `--full`, `--runs N` (default 10), `--threads N`, `--corpus DIR` (use a ready
//! corpus), `--wrench PATH` (skip the build), `--only SUBSTR` (cases whose id
//! contains it). The corpus script is `../shared/bench/make-corpus.sh` next to
//! the workspace, or `$WRENCH_CORPUS_SCRIPT`.
//! Needs `rg`; `fd` (or Debian's `fdfind`) for the fd cases, which are
//! skipped without it; `hyperfine` is optional.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Largest output wrench may print in the bench (its `max_chars` ceiling).
const BENCH_MAX_CHARS: &str = "33554432";
/// Entry limit passed to wrench so nothing is cut.
const BENCH_LIMIT: &str = "1000000";
const GLOB_LIMIT: &str = "100000";

struct Opts {
    full: bool,
    runs: usize,
    /// Run wrench and every anchor on CPUs 0..N only (`taskset`).
    threads: Option<usize>,
    corpus: Option<PathBuf>,
    wrench: Option<PathBuf>,
    only: Option<String>,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        full: false,
        runs: 10,
        threads: None,
        corpus: None,
        wrench: None,
        only: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--full" => o.full = true,
            "--runs" => {
                o.runs = val("--runs")?
                    .parse()
                    .map_err(|_| "--runs needs a number".to_string())?
            }
            "--threads" => {
                let n: usize = val("--threads")?
                    .parse()
                    .map_err(|_| "--threads needs a number".to_string())?;
                let cpus = std::thread::available_parallelism().map_or(1, |c| c.get());
                if n == 0 || n > cpus {
                    return Err(format!(
                        "--threads {n}: pick 1-{cpus} (the CPUs this process may run on)"
                    ));
                }
                o.threads = Some(n);
            }
            "--corpus" => o.corpus = Some(PathBuf::from(val("--corpus")?)),
            "--wrench" => {
                // The cases run in the corpus directory: a relative path
                // would name nothing there.
                let given = val("--wrench")?;
                let abs = std::fs::canonicalize(&given).map_err(|e| {
                    format!("--wrench {given}: {e}; give the path of a built wrench binary")
                })?;
                o.wrench = Some(abs);
            }
            "--only" => o.only = Some(val("--only")?),
            other => {
                return Err(format!(
                    "unknown bench option {other}; use --full, --runs N, --threads N, --corpus DIR, --wrench PATH, --only SUBSTR"
                ));
            }
        }
    }
    Ok(o)
}

fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(Path::to_path_buf).unwrap_or(here)
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
}

fn which(names: &[&str]) -> Option<String> {
    let path = std::env::var_os("PATH")?;
    for n in names {
        for d in std::env::split_paths(&path) {
            if d.join(n).is_file() {
                return Some(d.join(n).display().to_string());
            }
        }
    }
    None
}

fn corpus(root: &Path, o: &Opts) -> Result<PathBuf, String> {
    if let Some(c) = &o.corpus {
        return Ok(c.clone());
    }
    let base = root.join("target/bench-corpus");
    let out = base.join(if o.full { "full" } else { "small" });
    let script = std::env::var_os("WRENCH_CORPUS_SCRIPT")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("../shared/bench/make-corpus.sh"));
    if !script.is_file() {
        return Err(format!(
            "corpus script {} not found; set WRENCH_CORPUS_SCRIPT or pass --corpus DIR",
            script.display()
        ));
    }
    let mut c = Command::new("bash");
    c.arg(&script);
    if !o.full {
        c.arg("--small");
    }
    c.arg("--cache").arg(base.join("cache")).arg(&out);
    eprintln!("bench: corpus {} (make-corpus.sh)", out.display());
    let st = c
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if !st.success() {
        return Err(format!("make-corpus.sh failed ({st})"));
    }
    Ok(out)
}

fn build_wrench(root: &Path, o: &Opts) -> Result<PathBuf, String> {
    if let Some(w) = &o.wrench {
        return Ok(w.clone());
    }
    eprintln!("bench: cargo build --profile dist -p wrench-cli");
    let st = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "--profile", "dist", "-p", "wrench-cli"])
        .current_dir(root)
        .status()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !st.success() {
        return Err("building wrench-cli failed".into());
    }
    Ok(target_dir(root).join("dist/wrench"))
}

/// Quote for /bin/sh.
fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn join(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| sh_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

struct Case {
    id: String,
    wrench: String,
    anchor: String,
    /// Both print the same lines (a one-shot read numbers its lines its
    /// own way, a miss explains itself): checked before timing.
    same_lines: bool,
}

/// The tools each case runs, as shell words (already quoted), and the
/// file of the one-shot read.
struct Tools<'a> {
    wrench: &'a str,
    rg: &'a str,
    fd: Option<&'a str>,
    read_file: Option<&'a str>,
}

fn cases(t: &Tools<'_>) -> Vec<Case> {
    let (wrench, rg) = (t.wrench, t.rg);
    let alt = r"fn test_\w+|def test_\w+|func Test\w+";
    let patterns: [(&str, Vec<&str>, Vec<&str>); 3] = [
        ("lit", vec!["TODO"], vec!["-F", "TODO"]),
        ("alt", vec![alt], vec![alt]),
        (
            "iword",
            vec![r"\btimeout\b", "--case-insensitive"],
            vec!["-i", "-w", "timeout"],
        ),
    ];
    let case = |id: &str, w: String, a: String, same_lines: bool| Case {
        id: id.to_string(),
        wrench: w,
        anchor: a,
        same_lines,
    };
    let grep = |pat: &[&str], mode: &[&str]| {
        let mut w = vec!["grep"];
        w.extend(pat.iter().copied());
        w.extend(mode.iter().copied());
        w.extend(["--limit", BENCH_LIMIT, "--max-chars", BENCH_MAX_CHARS]);
        format!("{wrench} {}", join(&w))
    };
    let mut v = Vec::new();
    for (pid, wpat, rpat) in &patterns {
        for (mid, wmode, rmode) in [
            ("l", vec!["--mode", "files_with_matches"], vec!["-l"]),
            ("c", vec!["--mode", "count"], vec!["-c"]),
            (
                "ctx",
                vec!["--mode", "content", "--context-lines", "2"],
                vec!["-n", "-C2"],
            ),
        ] {
            let mut a = rmode.clone();
            a.extend(rpat.iter().copied());
            v.push(case(
                &format!("grep.{pid}.{mid}"),
                grep(wpat, &wmode),
                format!("{rg} {}", join(&a)),
                true,
            ));
        }
    }
    v.push(case(
        "grep.miss.l",
        grep(&["wrenchNoSuchString"], &["--mode", "files_with_matches"]),
        format!("{rg} -l -F wrenchNoSuchString"),
        false,
    ));
    v.push(case(
        "glob.rs.newest",
        format!("{wrench} glob '*.rs' --limit {GLOB_LIMIT}"),
        format!("{rg} --files -g '*.rs' --sortr=modified"),
        true,
    ));
    if let Some(fd) = t.fd {
        for (id, wglob, fglob) in [
            ("glob.rs", "*.rs", "*.rs"),
            ("glob.test", "**/test*", "test*"),
        ] {
            v.push(case(
                id,
                format!("{wrench} {}", join(&["glob", wglob, "--limit", GLOB_LIMIT])),
                format!("{fd} {}", join(&["-t", "f", "-g", fglob])),
                true,
            ));
        }
    }
    if let Some(f) = t.read_file {
        v.push(case(
            "oneshot.read",
            format!("{wrench} read {}", sh_quote(f)),
            format!("{rg} -n '' {}", sh_quote(f)),
            false,
        ));
    }
    v.push(case(
        "oneshot.version",
        format!("{wrench} --version"),
        format!("{rg} --version"),
        false,
    ));
    v
}

/// The one-shot read's file: the first (by path) source file of 20-32 KB
/// in the corpus, like the 26 KB file of the MCP read anchor.
fn read_file(dir: &Path) -> Option<String> {
    fn walk(dir: &Path, rel: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir.join(rel)) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let r = rel.join(&name);
            match e.file_type() {
                Ok(t) if t.is_dir() => walk(dir, &r, out),
                Ok(t) if t.is_file() => {
                    let len = e.metadata().map_or(0, |m| m.len());
                    if (20_000..32_000).contains(&len) && r.extension().is_some_and(|x| x == "rs") {
                        out.push(r);
                    }
                }
                _ => {}
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, Path::new(""), &mut found);
    found.sort();
    found.first().map(|p| p.display().to_string())
}

fn lines_of(cmd: &str, dir: &Path) -> Result<usize, String> {
    let out = Command::new("sh")
        .args(["-c", cmd])
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {cmd}: {e}"))?;
    Ok(out.stdout.iter().filter(|&&b| b == b'\n').count())
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Medians (ms) of `cmds`, timed in one hyperfine call.
fn time_hyperfine(
    hf: &str,
    cmds: &[&str],
    dir: &Path,
    runs: usize,
    prepare: &str,
) -> Result<Vec<f64>, String> {
    let tmp = std::env::temp_dir().join(format!("wrench-bench-{}.json", std::process::id()));
    let mut c = Command::new(hf);
    // `--ignore-failure`: a miss exits 1 in both tools (no match), as it
    // should; the line-count check before timing ran every command.
    c.args([
        "--style",
        "none",
        "--ignore-failure",
        "--warmup",
        "2",
        "--runs",
    ])
    .arg(runs.to_string())
    .args(["--output", "pipe", "--prepare", prepare, "--export-json"])
    .arg(&tmp)
    .args(cmds)
    .current_dir(dir)
    .stdout(Stdio::null());
    let st = c
        .status()
        .map_err(|e| format!("cannot run hyperfine: {e}"))?;
    if !st.success() {
        return Err(format!("hyperfine failed for {cmds:?}"));
    }
    let text = std::fs::read_to_string(&tmp).map_err(|e| format!("hyperfine export: {e}"))?;
    let _ = std::fs::remove_file(&tmp);
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("hyperfine export: {e}"))?;
    let results = v["results"].as_array().cloned().unwrap_or_default();
    Ok(results
        .iter()
        .map(|r| r["median"].as_f64().unwrap_or(f64::NAN) * 1000.0)
        .collect())
}

/// Medians (ms) from an own loop: the commands alternate, `runs` times each.
fn time_loop(cmds: &[&str], dir: &Path, runs: usize, prepare: &str) -> Result<Vec<f64>, String> {
    let run = |cmd: &str| -> Result<f64, String> {
        let t = Instant::now();
        let st = Command::new("sh")
            .args(["-c", cmd])
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("cannot run {cmd}: {e}"))?;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if !st.success() && st.code() != Some(1) {
            return Err(format!("{cmd} failed ({st})"));
        }
        Ok(ms)
    };
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); cmds.len()];
    for i in 0..runs + 2 {
        for (k, c) in cmds.iter().enumerate() {
            let _ = Command::new("sh")
                .args(["-c", prepare])
                .current_dir(dir)
                .status();
            let ms = run(c)?;
            if i >= 2 {
                times[k].push(ms);
            }
        }
    }
    Ok(times.into_iter().map(median).collect())
}

/// Run the benchmarks and print the table.
pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    let root = workspace_root();
    let want = |id: &str| o.only.as_ref().is_none_or(|s| id.contains(s.as_str()));
    if want("lsp") {
        bench_lsp(&root, o.runs.min(5))?;
        if o.only.as_deref() == Some("lsp") {
            return Ok(());
        }
    }
    let hf = which(&["hyperfine"]);
    let dir = corpus(&root, &o)?;
    let wrench = build_wrench(&root, &o)?;
    // rg and fd are the anchors of the grep/glob/one-shot cases only.
    let names = Tools {
        wrench: "wrench",
        rg: "rg",
        fd: Some("fd"),
        read_file: Some("f"),
    };
    if cases(&names).iter().any(|c| want(&c.id)) {
        bench_search(&root, &o, &dir, &wrench, hf.as_deref())?;
    }
    if want("apply_patch") {
        bench_apply_patch(&root, &dir, o.runs.min(5))?;
    }
    if want("symbols") {
        bench_symbols(&root, &dir, hf.as_deref(), o.runs.min(5), o.threads)?;
    }
    if want("mcp") {
        bench_mcp(&root, &wrench)?;
    }
    Ok(())
}

/// wrench grep, glob and one-shot calls versus rg and fd, back to back,
/// with line-count checks; with `--threads N` both run on the same N CPUs.
fn bench_search(
    root: &Path,
    o: &Opts,
    dir: &Path,
    wrench: &Path,
    hf: Option<&str>,
) -> Result<(), String> {
    let rg = which(&["rg"])
        .ok_or("ripgrep (`rg`) is not on PATH; install it (cargo install ripgrep, or apt-get install ripgrep)")?;
    let fd = which(&["fd", "fdfind"]);
    // Both tools get the same CPUs: ripgrep and wrench both size their
    // thread pools by the CPUs they may run on.
    let pin = match o.threads {
        Some(n) => {
            which(&["taskset"]).ok_or("--threads needs taskset (util-linux) on PATH")?;
            format!("taskset -c 0-{} ", n - 1)
        }
        None => String::new(),
    };
    // wrench keeps session state; keep it out of the user's.
    let state = target_dir(root).join("bench-state");
    let wrench_cmd = format!(
        "WRENCH_STATE_DIR={} {pin}{}",
        sh_quote(&state.display().to_string()),
        sh_quote(&wrench.display().to_string())
    );
    let rg_cmd = format!("{pin}{}", sh_quote(&rg));
    let fd_cmd = fd.as_ref().map(|f| format!("{pin}{}", sh_quote(f)));
    let file = read_file(dir);
    // Re-read the tree before every timed run: this VM evicts page cache on its own.
    let prepare = format!(
        "{} --files -uu -0 | xargs -0 cat > /dev/null",
        sh_quote(&rg)
    );
    let rg_version = Command::new(&rg)
        .arg("--version")
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    println!(
        "corpus {} | {} | fd {} | timer {} | {} runs | threads {} | load {}",
        dir.display(),
        rg_version,
        fd.as_deref().unwrap_or("not installed (fd cases skipped)"),
        hf.unwrap_or("own loop (no hyperfine)"),
        o.runs,
        o.threads
            .map_or("all CPUs".to_string(), |n| format!("{n} (taskset)")),
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split(' ').next().map(str::to_string))
            .unwrap_or_default(),
    );
    println!("| case | anchor | lines wrench / anchor | anchor ms | wrench ms | ratio |");
    println!("|---|---|---:|---:|---:|---:|");
    let tools = Tools {
        wrench: &wrench_cmd,
        rg: &rg_cmd,
        fd: fd_cmd.as_deref(),
        read_file: file.as_deref(),
    };
    let mut worst: f64 = 0.0;
    let mut mismatches = 0;
    for c in cases(&tools) {
        if o.only.as_ref().is_some_and(|s| !c.id.contains(s.as_str())) {
            continue;
        }
        let wl = lines_of(&c.wrench, dir)?;
        let al = lines_of(&c.anchor, dir)?;
        let mismatch = c.same_lines && wl != al;
        if mismatch {
            mismatches += 1;
        }
        let cmds = [c.anchor.as_str(), c.wrench.as_str()];
        let t = match &hf {
            Some(h) => time_hyperfine(h, &cmds, dir, o.runs, &prepare)?,
            None => time_loop(&cmds, dir, o.runs, &prepare)?,
        };
        let (a, w) = (
            t.first().copied().unwrap_or(f64::NAN),
            t.get(1).copied().unwrap_or(f64::NAN),
        );
        let ratio = w / a;
        worst = worst.max(ratio);
        let mut anchor_short = c.anchor.replace(&sh_quote(&rg), "rg").replace(&pin, "");
        if let Some(f) = &fd {
            anchor_short = anchor_short.replace(&sh_quote(f), "fd");
        }
        println!(
            "| {} | `{}` | {wl} / {al}{} | {a:.1} | {w:.1} | {ratio:.2} |",
            c.id,
            anchor_short,
            if mismatch { " MISMATCH" } else { "" }
        );
    }
    println!(
        "worst ratio {worst:.2} (goal ≤ 1.00; one-shot ≤ 1.5, glob ≤ 0.6); line-count mismatches: {mismatches}"
    );
    if mismatches > 0 {
        return Err(format!(
            "{mismatches} case(s) printed a different number of lines than the anchor"
        ));
    }
    Ok(())
}

/// Run a release example of the workspace and parse the JSON it prints.
fn run_example(
    root: &Path,
    pkg: &str,
    example: &str,
    args: &[String],
) -> Result<serde_json::Value, String> {
    run_example_in(root, pkg, example, args, &["--release"], &[])
}

/// Run an example with `profile` flags (`--release`, or none for dev).
fn run_example_in(
    root: &Path,
    pkg: &str,
    example: &str,
    args: &[String],
    profile: &[&str],
    envs: &[(&str, std::ffi::OsString)],
) -> Result<serde_json::Value, String> {
    eprintln!(
        "bench: cargo run {} -p {pkg} --example {example}",
        profile.join(" ")
    );
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["run", "-q"])
        .args(profile)
        .args(["-p", pkg, "--example", example, "--"])
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .args(args)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "example {example} of {pkg} failed ({})",
            out.status
        ));
    }
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("example {example} printed no JSON report: {e}"))
}

fn num(v: &serde_json::Value, k: &str) -> f64 {
    v[k].as_f64().unwrap_or(f64::NAN)
}

/// apply_patch of a 2,000-hunk patch over the corpus versus `git apply` of
/// the same unified diff (both on fresh copies; medians).
fn bench_apply_patch(root: &Path, dir: &Path, runs: usize) -> Result<(), String> {
    let r = run_example(
        root,
        "wrench-tools-edit",
        "bench_apply_patch",
        &[
            dir.display().to_string(),
            "2000".into(),
            runs.max(1).to_string(),
        ],
    )?;
    println!();
    println!("| case | anchor | hunks / files | anchor ms | wrench ms | ratio |");
    println!("|---|---|---:|---:|---:|---:|");
    println!(
        "| apply_patch | `git apply` | {} / {} | {:.1} | {:.1} | {:.2} |",
        r["hunks"],
        r["files"],
        num(&r, "git_apply_ms"),
        num(&r, "wrench_ms"),
        num(&r, "ratio")
    );
    Ok(())
}

/// Cold full symbol index of the corpus versus `ctags -R` of the same tree
/// (which also reads what .gitignore leaves out and other languages), and
/// versus `ctags -L` of the files wrench indexes (the same file set: `rg
/// --files` with wrench's extensions); wall and CPU (user + system) time.
/// Warm symbol_search latency after one file changed. With `--threads N`
/// this process, and so wrench and ctags, run on CPUs 0..N only.
fn bench_symbols(
    root: &Path,
    dir: &Path,
    hf: Option<&str>,
    runs: usize,
    threads: Option<usize>,
) -> Result<(), String> {
    let Some(ctags) = which(&["ctags", "universal-ctags"]) else {
        println!("symbols: ctags not on PATH (apt-get install universal-ctags); skipped");
        return Ok(());
    };
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    if let Some(n) = threads {
        pin_self(n)?;
    }
    let out = symbols_runs(root, dir, hf, runs, &ctags);
    if threads.is_some() {
        pin_self(all)?;
    }
    let (r, rows) = out?;
    let cold = num(&r, "cold_index_ms");
    let cold_cpu = num(&r, "cold_index_cpu_ms");
    println!();
    println!(
        "symbols | threads {} | load {}",
        r["threads"],
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split(' ').next().map(str::to_string))
            .unwrap_or_default()
    );
    println!(
        "| case | anchor | files / symbols | anchor ms (CPU) | wrench ms (CPU) | ratio wall / CPU |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    for (name, ct, ct_cpu) in rows {
        println!(
            "| cold index | {name} | {} / {} | {ct:.1} ({ct_cpu:.0}) | {cold:.1} ({cold_cpu:.0}) | {:.2} / {:.2} (≤ 0.7) |",
            r["files"],
            r["symbols"],
            cold / ct,
            cold_cpu / ct_cpu
        );
    }
    println!(
        "| warm symbol_search, one file changed | — | | | {:.1} | (≤ 20 ms) |",
        num(&r, "warm_search_after_change_ms")
    );
    println!(
        "| symbol_search in the daemon (file watcher), one file changed | — | | | {:.2} | (≤ 2 ms) |",
        num(&r, "live_search_after_change_ms")
    );
    println!(
        "| warm symbol_search, nothing changed / fresh process | — | | | {:.1} / {:.1} | |",
        num(&r, "warm_search_ms"),
        num(&r, "fresh_process_search_ms")
    );
    Ok(())
}

/// The runs of [`bench_symbols`]: wrench's report, and per ctags anchor its
/// name, wall and CPU milliseconds.
type SymbolRuns = (serde_json::Value, Vec<(&'static str, f64, f64)>);

fn symbols_runs(
    root: &Path,
    dir: &Path,
    hf: Option<&str>,
    runs: usize,
    ctags: &str,
) -> Result<SymbolRuns, String> {
    let r = run_example(
        root,
        "wrench-symbols",
        "bench_index",
        &[dir.display().to_string()],
    )?;
    let tmp = std::env::temp_dir();
    let id = std::process::id();
    let tags = tmp.join(format!("wrench-bench-tags-{id}"));
    let list = tmp.join(format!("wrench-bench-files-{id}"));
    let q = |p: &Path| sh_quote(&p.display().to_string());
    let mut cmds = vec![(
        "`ctags -R`",
        format!("{} -R -f {} .", sh_quote(ctags), q(&tags)),
    )];
    // The files wrench indexes (gitignore rules as its walk applies them).
    if let Some(rg) = which(&["rg"]) {
        let listed = Command::new(&rg)
            .args([
                "--files",
                "-g",
                "*.{rs,py,pyi,go,ts,mts,cts,tsx,js,jsx,mjs,cjs}",
            ])
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run rg: {e}"))?;
        std::fs::write(&list, &listed.stdout).map_err(|e| format!("{}: {e}", list.display()))?;
        cmds.push((
            "`ctags -L` (same files)",
            format!("{} -L {} -f {}", sh_quote(ctags), q(&list), q(&tags)),
        ));
    }
    let mut rows = Vec::new();
    for (name, cmd) in &cmds {
        let cmd = format!("{cmd} 2>/dev/null");
        let wall = match hf {
            Some(h) => time_hyperfine(h, &[cmd.as_str()], dir, runs.max(3), "true")?,
            None => time_loop(&[cmd.as_str()], dir, runs.max(3), "true")?,
        };
        let cpu = cpu_ms(&cmd, dir, runs.max(3))?;
        rows.push((*name, wall.first().copied().unwrap_or(f64::NAN), cpu));
    }
    let _ = std::fs::remove_file(&tags);
    let _ = std::fs::remove_file(&list);
    Ok((r, rows))
}

/// Mean CPU time (user + system of the command and its children, ms) of
/// `runs` runs of `cmd` in `dir`, from the shell's `times`.
fn cpu_ms(cmd: &str, dir: &Path, runs: usize) -> Result<f64, String> {
    let script = format!("i=0; while [ $i -lt {runs} ]; do {cmd}; i=$((i+1)); done; times");
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run sh: {e}"))?;
    // `times`: the shell's user and system time, then its children's.
    let text = String::from_utf8_lossy(&out.stdout);
    let children = text.lines().last().unwrap_or("");
    let secs = |t: &str| -> Option<f64> {
        let (m, s) = t.strip_suffix('s')?.split_once('m')?;
        Some(m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?)
    };
    let total: Option<f64> = children.split_whitespace().map(secs).sum();
    total
        .map(|t| t * 1000.0 / runs as f64)
        .ok_or_else(|| format!("no CPU times from `times` after {cmd}: {text:?}"))
}

/// Run this process (and what it starts from now on) on CPUs 0..n only.
fn pin_self(n: usize) -> Result<(), String> {
    let st = Command::new("taskset")
        .args([
            "-p",
            "-c",
            &format!("0-{}", n - 1),
            &std::process::id().to_string(),
        ])
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("--threads needs taskset (util-linux) on PATH: {e}"))?;
    if st.success() {
        Ok(())
    } else {
        Err(format!(
            "taskset could not pin this process to CPUs 0-{}",
            n - 1
        ))
    }
}

/// Language servers on small real projects (three files each), same run,
/// medians: cold and warm `definition`, the first `definition` after the
/// file changed (goal ≤ 1.5 s), `rename_symbol` across three files end to end
/// (goal ≤ 3 s), and a `write` with its diagnostics report. The example runs
/// in the dev profile: the time is the servers' (and the waits'), not
/// wrench's code. Servers come from PATH and `target/ci-node`.
fn bench_lsp(root: &Path, runs: usize) -> Result<(), String> {
    let ci_node = root.join("target/ci-node/node_modules/.bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    if ci_node.is_dir() {
        dirs.push(ci_node);
    }
    let joined = std::env::join_paths(dirs).map_err(|e| format!("PATH: {e}"))?;
    let r = run_example_in(
        root,
        "wrench-lsp",
        "bench_lsp",
        &[runs.max(1).to_string()],
        &[],
        &[("PATH", joined)],
    )?;
    println!();
    println!(
        "| server | cold ms | warm ms | first call after an edit ms (≤ 1500) | rename, 3 files ms (≤ 3000) | write + diagnostics report ms | introduced / resolved reported |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for s in r["servers"].as_array().into_iter().flatten() {
        let name = s["server"].as_str().unwrap_or("?");
        if let Some(m) = s["missing"].as_str().or(s["error"].as_str()) {
            println!("| {name} | {m} | | | | | |");
            continue;
        }
        println!(
            "| {name} | {:.0} | {:.1} | {:.0} | {:.0} | {:.0} | {} / {} |",
            num(s, "cold_definition_ms"),
            num(s, "warm_definition_ms"),
            num(s, "first_definition_after_edit_ms"),
            num(s, "rename_3_files_ms"),
            num(s, "write_with_report_ms"),
            s["introduced_reported"].as_str().unwrap_or("?"),
            s["resolved_reported"].as_str().unwrap_or("?"),
        );
    }
    Ok(())
}

/// 1,000 sequential reads of one file through `wrench mcp serve` versus the
/// reference filesystem server and a zero-work floor, taking turns for
/// three rounds per client: compiled, Python raw, Python SDK
/// (tests/mcp/bench.sh; needs .ci/install.sh's node modules and the
/// Python `mcp` SDK).
fn bench_mcp(root: &Path, wrench: &Path) -> Result<(), String> {
    let script = root.join("tests/mcp/bench.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg(wrench)
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        println!(
            "mcp: {} failed ({}); run `bash .ci/install.sh` first",
            script.display(),
            out.status
        );
        return Ok(());
    }
    println!();
    for l in text.lines() {
        if let Some(head) = l.strip_prefix("== ") {
            println!("mcp {head}");
        } else if l.trim_start().starts_with("round ") {
            println!("mcp   {}", l.trim_start());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_regex_intact() {
        assert_eq!(sh_quote("TODO"), "TODO");
        assert_eq!(sh_quote(r"fn test_\w+|x"), r"'fn test_\w+|x'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
    }

    #[test]
    fn every_grep_mode_and_pattern_has_a_case() {
        let c = cases(&Tools {
            wrench: "w",
            rg: "rg",
            fd: Some("fd"),
            read_file: Some("f.rs"),
        });
        assert_eq!(c.len(), 15);
        assert!(
            c.iter()
                .any(|c| c.id == "oneshot.read" && c.anchor == "rg -n '' f.rs")
        );
        assert!(c.iter().any(|c| c.id == "grep.miss.l" && !c.same_lines));
        assert!(
            c.iter()
                .any(|c| c.id == "grep.iword.ctx" && c.anchor.contains("-C2"))
        );
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }
}
