//! `cargo xtask fuzz [--time SECS] [TARGET...]`: run each libFuzzer target
//! of `fuzz/` (`patch_parser`, `edit_engine`; all when none is named) for a
//! bounded time with cargo-fuzz, one after the other, and fail on the first
//! crash, naming the input that reproduces it.
//!
//! Works on the stable toolchain: targets are built without a sanitizer
//! (`-s none`; Rust code is memory-safe, the targets look for panics,
//! broken invariants and hangs), and when stable rustc refuses an unstable
//! flag the build is retried once with `RUSTC_BOOTSTRAP=1`. Needs cargo-fuzz
//! (`cargo install cargo-fuzz`). Seeds in `fuzz/seeds/TARGET/` are read;
//! the growing corpus is kept in `fuzz/corpus/TARGET/` (not committed),
//! crashes in `fuzz/artifacts/TARGET/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Seconds per target when `--time` is not given.
const DEFAULT_SECS: u64 = 60;
/// Seconds one input may take before libFuzzer reports it as a hang.
const INPUT_TIMEOUT_SECS: u64 = 10;
/// Largest input libFuzzer generates, in bytes.
const MAX_LEN: usize = 4096;

struct Opts {
    secs: u64,
    targets: Vec<String>,
}

fn parse(args: &[String]) -> Result<Opts, String> {
    let mut o = Opts {
        secs: DEFAULT_SECS,
        targets: Vec::new(),
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--time" => {
                o.secs = it
                    .next()
                    .and_then(|v| v.parse().ok())
                    .filter(|s| *s > 0)
                    .ok_or("--time needs a number of seconds (per target)")?;
            }
            s if s.starts_with('-') => {
                return Err(format!(
                    "unknown fuzz option {s}; use: cargo xtask fuzz [--time SECS] [TARGET...]"
                ));
            }
            t => o.targets.push(t.to_string()),
        }
    }
    Ok(o)
}

fn workspace_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(Path::to_path_buf).unwrap_or(here)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// The `[[bin]]` names of `fuzz/Cargo.toml`.
fn targets_of(manifest: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut out = Vec::new();
    let mut in_bin = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin
            && let Some(v) = line.strip_prefix("name")
            && let Some(v) = v.trim_start().strip_prefix('=')
        {
            out.push(v.trim().trim_matches('"').to_string());
        }
    }
    Ok(out)
}

/// Fail with the install command when cargo-fuzz is missing.
fn require_cargo_fuzz() -> Result<(), String> {
    let ok = Command::new(cargo())
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err("cargo-fuzz is not installed. Install it with `cargo install cargo-fuzz` (it works on the stable toolchain; xtask builds the targets with `-s none`), then run `cargo xtask fuzz` again".into())
    }
}

/// True when a failed build's output says stable rustc refused a nightly flag.
fn needs_bootstrap(stderr: &str) -> bool {
    stderr.contains("only accepted on the nightly compiler")
        || stderr.contains("requires a nightly")
        || stderr.contains("is unstable")
        || stderr.contains("-Z` flag")
}

/// `cargo fuzz build -s none TARGET`, retried with RUSTC_BOOTSTRAP=1 when
/// stable refuses. Returns whether the bootstrap was needed.
fn build(root: &Path, target: &str, bootstrap: bool) -> Result<bool, String> {
    let mut cmd = Command::new(cargo());
    cmd.args(["fuzz", "build", "-s", "none", "--release", target])
        .current_dir(root)
        .stdout(Stdio::inherit());
    if bootstrap {
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        return Ok(bootstrap);
    }
    if !bootstrap && needs_bootstrap(&err) {
        eprintln!("fuzz: stable rustc refused a flag; retrying with RUSTC_BOOTSTRAP=1");
        return build(root, target, true);
    }
    eprint!("{err}");
    Err(format!(
        "cargo fuzz build of {target} failed ({})",
        out.status
    ))
}

/// Run one target for `secs` seconds. Ok(None) when nothing was found,
/// Ok(Some(artifact dir)) on a crash.
fn run_target(root: &Path, target: &str, secs: u64) -> Result<Option<PathBuf>, String> {
    let bootstrap = build(root, target, false)?;
    let fuzz = root.join("fuzz");
    let corpus = fuzz.join("corpus").join(target);
    let seeds = fuzz.join("seeds").join(target);
    let artifacts = fuzz.join("artifacts").join(target);
    for d in [&corpus, &artifacts] {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let mut cmd = Command::new(cargo());
    cmd.args(["fuzz", "run", "-s", "none", "--release", target])
        .arg(&corpus)
        .current_dir(root);
    if seeds.is_dir() {
        cmd.arg(&seeds);
    }
    cmd.arg("--").args([
        format!("-max_total_time={secs}"),
        format!("-timeout={INPUT_TIMEOUT_SECS}"),
        format!("-max_len={MAX_LEN}"),
        "-print_final_stats=1".to_string(),
    ]);
    if bootstrap {
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    eprintln!("fuzz: {target} for {secs} s");
    let st = cmd
        .status()
        .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
    if st.success() {
        Ok(None)
    } else {
        Ok(Some(artifacts))
    }
}

pub fn run(args: &[String]) -> Result<(), String> {
    let o = parse(args)?;
    require_cargo_fuzz()?;
    let root = workspace_root();
    let all = targets_of(&root.join("fuzz").join("Cargo.toml"))?;
    let targets = if o.targets.is_empty() {
        all.clone()
    } else {
        o.targets.clone()
    };
    if let Some(t) = targets.iter().find(|t| !all.contains(t)) {
        return Err(format!(
            "no fuzz target {t}; the targets are: {}",
            all.join(", ")
        ));
    }
    let mut crashed = Vec::new();
    for t in &targets {
        if let Some(dir) = run_target(&root, t, o.secs)? {
            eprintln!(
                "fuzz: {t} failed; the input is in {} (reproduce: cargo fuzz run -s none {t} {}/<file>)",
                dir.display(),
                dir.display()
            );
            crashed.push(t.clone());
        } else {
            eprintln!("fuzz: {t}: no failure in {} s", o.secs);
        }
    }
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!("fuzz targets failed: {}", crashed.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_and_targets_parse() {
        let o = parse(&["--time".into(), "5".into(), "edit_engine".into()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(o.secs, 5);
        assert_eq!(o.targets, vec!["edit_engine".to_string()]);
        assert!(parse(&["--time".into(), "0".into()]).is_err());
        assert!(parse(&["--bogus".into()]).is_err());
        let t = targets_of(&workspace_root().join("fuzz").join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(t.contains(&"patch_parser".to_string()), "{t:?}");
        assert!(t.contains(&"edit_engine".to_string()), "{t:?}");
    }
}
