//! `wrench call TOOL [ARGS]`: one call from JSON args; its result as a
//! JSON line (SPEC §1's shape), pretty JSON, or text.

use super::{Ctx, Format, code, explain_call, fail, format_arg, format_of, json_args};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, exit_code_for, out, render};
use wrench_core::Call;

pub(super) fn command() -> Command {
    Command::new("call")
        .about("Run one tool call from JSON args; prints its result (JSON when piped)")
        .arg(Arg::new("tool").required(true).help("Tool name or alias"))
        .arg(Arg::new("args").help("JSON object, or - for stdin (default: {})"))
        .arg(format_arg())
}

pub(super) async fn run(cx: Ctx, sm: &ArgMatches) -> ExitCode {
    let format = format_of(sm);
    let json_errors = format != Format::Text;
    let engine = match wrench_cli::engine(&cx.opts, cx.asker.clone()) {
        Ok(e) => e,
        Err(e) => return fail(&e, json_errors),
    };
    let tool = sm.get_one::<String>("tool").cloned().unwrap_or_default();
    let args = match json_args(sm.get_one::<String>("args")) {
        Ok(v) => v,
        Err(e) => return fail(&e, json_errors),
    };
    if cx.m.get_flag("explain") {
        return explain_call(&engine, Call::new("1", tool, args), json_errors).await;
    }
    let call = Call::new("1", tool, args);
    // The daemon prints SPEC §1's JSON line; other formats run here.
    if format == Format::Jsonl
        && let Some(p) = wrench_cli::daemon::forward(
            &cx.opts,
            &engine,
            wrench_daemon::Door::Call,
            std::slice::from_ref(&call),
            cx.m.get_flag("no-daemon"),
        )
        .await
    {
        return super::daemon::emit(p);
    }
    let r = engine.executor.run_one(call).await;
    match format {
        Format::Jsonl => out::json_line(render::json_line(&r, false)),
        Format::Json => {
            out::json_line(serde_json::to_string_pretty(&r.to_json(false)).unwrap_or_default())
        }
        Format::Text => {
            let (text, notes) = render::human(&r);
            out::stdout(text);
            out::stderr(notes);
        }
    }
    match &r.result {
        Ok(_) => code(exit::OK),
        Err(e) => code(exit_code_for(e)),
    }
}
