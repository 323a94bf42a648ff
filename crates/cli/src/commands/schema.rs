//! `wrench schema TOOL`: the tool's JSON Schema.

use super::{Ctx, code, fail};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, out};

pub(super) fn command() -> Command {
    Command::new("schema")
        .about("Print a tool's JSON Schema")
        .arg(Arg::new("tool").required(true))
}

pub(super) fn run(cx: &Ctx, sm: &ArgMatches) -> ExitCode {
    let name = sm.get_one::<String>("tool").cloned().unwrap_or_default();
    match cx.reg.resolve(&name) {
        Ok(t) => {
            out::json_line(
                serde_json::to_string_pretty(&t.spec().input_schema).unwrap_or_default(),
            );
            code(exit::OK)
        }
        Err(e) => fail(&e, cx.json),
    }
}
