//! `wrench batch [FILE]`: JSON Lines of calls through the batching planner;
//! JSON Lines out, in input order.

use super::{Ctx, code, fail, read_input, with_mode};
use clap::{Arg, ArgMatches, Command};
use std::io::Write;
use std::process::ExitCode;
use wrench_cli::{exit, render};
use wrench_core::{Call, ToolError};

pub(super) fn command() -> Command {
    with_mode(
        Command::new("batch")
            .about("Run JSON Lines of calls ({\"id\",\"tool\",\"args\"}) with the batching planner; JSON Lines out, in input order")
            .arg(Arg::new("file").help("File of calls, or - for stdin (default: -)"))
            .arg(Arg::new("profile").long("profile").value_name("PROFILE")),
    )
}

pub(super) async fn run(mut cx: Ctx, sm: &ArgMatches) -> ExitCode {
    cx.opts.profile = sm.get_one::<String>("profile").cloned();
    let engine = match wrench_cli::engine(&cx.opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, true),
    };
    let input = match read_input(sm.get_one::<String>("file")) {
        Ok(s) => s,
        Err(e) => return fail(&e, true),
    };
    let mut calls = Vec::new();
    for (i, line) in input.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") || t.starts_with('#') {
            continue;
        }
        match serde_json::from_str::<Call>(t) {
            Ok(mut c) => {
                if c.id.is_empty() {
                    c.id = (i + 1).to_string();
                }
                calls.push(c);
            }
            Err(e) => {
                return fail(
                    &ToolError::invalid_args(format!(
                        "batch line {}: not a call ({e}); each line is {{\"id\": \"...\", \"tool\": \"read\", \"args\": {{...}}}}",
                        i + 1
                    )),
                    true,
                );
            }
        }
    }
    let results = engine.executor.run_batch(calls).await;
    let mut stdout = std::io::stdout().lock();
    let mut all_ok = true;
    for r in &results {
        all_ok &= r.ok();
        let _ = writeln!(stdout, "{}", render::json_line(r, true));
    }
    code(if all_ok { exit::OK } else { exit::TOOL_ERROR })
}
