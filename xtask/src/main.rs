//! Project automation: `cargo xtask contract [--check]`, `cargo xtask bench`, `cargo xtask fuzz`.

mod bench;
mod contract;
mod fuzz;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("bench") => bench::run(&args[1..]),
        Some("contract") => contract::run(&args[1..]),
        Some("fuzz") => fuzz::run(&args[1..]),
        _ => Err(
            "usage: cargo xtask <contract [--check] | bench [--full] | fuzz [--time SECS] [TARGET...]>"
                .to_string(),
        ),
    };
    if let Err(e) = r {
        eprintln!("xtask: {e}");
        std::process::exit(1);
    }
}
