//! `wrench policy check TOOL [ARGS]`: plan the call, explain the decision.

use super::{Ctx, code, explain_call, fail, json_args};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::exit;
use wrench_core::Call;

pub(super) fn command() -> Command {
    Command::new("policy")
        .about("Explain what the permission engine decides for a call, without running it")
        .subcommand_required(true)
        .subcommand(Command::new("check")
                .about("Plan TOOL with ARGS and print its effects, each rule considered, the decision and the rule that would change it; runs nothing (exit 0 allow, 3 ask or deny)")
                .arg(Arg::new("tool").required(true))
                .arg(Arg::new("args").help("JSON object, or - for stdin (default: {})")))
}

pub(super) async fn run(cx: &Ctx, sm: &ArgMatches) -> ExitCode {
    let Some(("check", cm)) = sm.subcommand() else {
        return code(exit::USAGE);
    };
    let engine = match wrench_cli::engine(&cx.opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, cx.json),
    };
    let tool = cm.get_one::<String>("tool").cloned().unwrap_or_default();
    let args = match json_args(cm.get_one::<String>("args")) {
        Ok(v) => v,
        Err(e) => return fail(&e, cx.json),
    };
    explain_call(&engine, Call::new("1", tool, args), cx.json).await
}
