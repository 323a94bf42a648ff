//! `wrench call TOOL [ARGS]`: one call from JSON args, its JSON result.

use super::{Ctx, code, explain_call, fail, json_args, with_mode};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, exit_code_for, render};
use wrench_core::Call;

pub(super) fn command() -> Command {
    with_mode(
        Command::new("call")
            .about("Run one tool call from JSON args; prints the JSON result")
            .arg(Arg::new("tool").required(true))
            .arg(Arg::new("args").help("JSON object, or - for stdin (default: {})")),
    )
}

pub(super) async fn run(cx: Ctx, sm: &ArgMatches) -> ExitCode {
    let engine = match wrench_cli::engine(&cx.opts, cx.asker.clone()) {
        Ok(e) => e,
        Err(e) => return fail(&e, true),
    };
    let tool = sm.get_one::<String>("tool").cloned().unwrap_or_default();
    let args = match json_args(sm.get_one::<String>("args")) {
        Ok(v) => v,
        Err(e) => return fail(&e, true),
    };
    if cx.m.get_flag("explain") {
        return explain_call(&engine, Call::new("1", tool, args), true).await;
    }
    let r = engine.executor.run_one(Call::new("1", tool, args)).await;
    println!("{}", render::json_line(&r, false));
    match &r.result {
        Ok(_) => code(exit::OK),
        Err(e) => code(exit_code_for(e)),
    }
}
