//! `wrench <tool> [flags]`: one tool call with flags generated from the
//! tool's JSON Schema; human text out (`--json` for the result).

use super::{Ctx, explain_call, fail, print_result, with_mode};
use clap::{ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::flags;
use wrench_core::{Call, Registry};

/// One subcommand per tool, sorted by name.
pub(super) fn commands(reg: &Registry) -> Vec<Command> {
    let mut cmds: Vec<Command> = reg.tools().map(|t| flags::command_for(t.spec())).collect();
    cmds.sort_by(|a, b| a.get_name().cmp(b.get_name()));
    cmds.into_iter()
        .map(|c| with_mode(c.next_help_heading("Tool arguments")))
        .collect()
}

pub(super) async fn run(cx: Ctx, tool: &str, sm: &ArgMatches) -> ExitCode {
    let engine = match wrench_cli::engine(&cx.opts, cx.asker.clone()) {
        Ok(e) => e,
        Err(e) => return fail(&e, cx.json),
    };
    let spec = match engine.executor.registry().resolve(tool) {
        Ok(t) => t.spec().clone(),
        Err(e) => return fail(&e, cx.json),
    };
    let args = match flags::args_from_matches(&spec, sm) {
        Ok(a) => a,
        Err(e) => return fail(&e, cx.json),
    };
    let call = Call::new("1", spec.name.clone(), args);
    if cx.m.get_flag("explain") {
        return explain_call(&engine, call, cx.json).await;
    }
    let r = engine.executor.run_one(call).await;
    print_result(&r, cx.json)
}
