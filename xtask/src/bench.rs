//! `cargo xtask bench`: side-by-side timings against ripgrep, fd and ctags.

/// Run the benchmarks (being built).
pub fn run(_args: &[String]) -> Result<(), String> {
    Err("bench is not built yet".to_string())
}
