//! `wrench batch [FILE]`: JSON Lines of calls through the batching planner;
//! results in input order. A line that is not a call is that line's error
//! (kind invalid_args), and the other lines still run.

use super::{Ctx, Format, code, fail, format_arg, format_of, read_input};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, out, render};
use wrench_core::{Call, CallResult, ToolError};

pub(super) fn command() -> Command {
    Command::new("batch")
        .about("Run JSON Lines of calls ({\"id\",\"tool\",\"args\"}) with the batching planner; results in input order")
        .arg(Arg::new("file").help("File of calls, or - for stdin (default: -)"))
        .arg(
            Arg::new("profile")
                .long("profile")
                .value_name("PROFILE")
                .value_parser(super::profiles())
                .help("Tool profile: which tools the calls may use"),
        )
        .arg(format_arg())
}

/// A line of the input: a call to run, or why it is not one.
enum Line {
    Call,
    Bad(Box<CallResult>),
}

fn bad_line(n: usize, e: &serde_json::Error) -> CallResult {
    CallResult {
        id: n.to_string(),
        tool: String::new(),
        group: 0,
        result: Err(ToolError::invalid_args(format!(
            "batch line {n}: not a call ({e}); each line is {{\"id\": \"...\", \"tool\": \"read\", \"args\": {{...}}}}"
        ))),
        elapsed_ms: 0,
        repaired: Vec::new(),
    }
}

pub(super) async fn run(mut cx: Ctx, sm: &ArgMatches) -> ExitCode {
    let format = format_of(sm);
    let json_errors = format != Format::Text;
    cx.opts.profile = sm.get_one::<String>("profile").cloned();
    let engine = match wrench_cli::engine(&cx.opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, json_errors),
    };
    let input = match read_input(sm.get_one::<String>("file")) {
        Ok(s) => s,
        Err(e) => return fail(&e, json_errors),
    };
    let mut lines = Vec::new();
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
                lines.push(Line::Call);
            }
            Err(e) => lines.push(Line::Bad(Box::new(bad_line(i + 1, &e)))),
        }
    }
    // A batch of warm tools, every line well-formed, printed as JSON Lines:
    // the daemon runs it whole.
    if format == Format::Jsonl
        && lines.iter().all(|l| matches!(l, Line::Call))
        && let Some(p) = wrench_cli::daemon::forward(
            &cx.opts,
            &engine,
            wrench_daemon::Door::Batch,
            &calls,
            cx.m.get_flag("no-daemon"),
        )
        .await
    {
        return super::daemon::emit(p);
    }
    let mut ran = engine.executor.run_batch(calls).await.into_iter();
    let results: Vec<CallResult> = lines
        .into_iter()
        .filter_map(|l| match l {
            Line::Call => ran.next(),
            Line::Bad(r) => Some(*r),
        })
        .collect();
    match format {
        Format::Jsonl => {
            let mut s = String::new();
            for r in &results {
                s.push_str(&render::json_line(r, true));
                s.push('\n');
            }
            out::json(s);
        }
        Format::Json => {
            let all: Vec<serde_json::Value> = results.iter().map(|r| r.to_json(true)).collect();
            out::json_line(serde_json::to_string_pretty(&all).unwrap_or_default());
        }
        Format::Text => {
            for r in &results {
                out::stdout(render::text_block(r));
            }
        }
    }
    let all_ok = results.iter().all(CallResult::ok);
    code(if all_ok { exit::OK } else { exit::TOOL_ERROR })
}
