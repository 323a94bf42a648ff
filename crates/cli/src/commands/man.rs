//! `wrench man`: the man page (roff).

use super::{Ctx, build_cli, code, fail};
use clap::Command;
use std::process::ExitCode;
use wrench_cli::exit;
use wrench_core::ToolError;

pub(super) fn command() -> Command {
    Command::new("man").about("Print the man page (roff)")
}

pub(super) fn run(cx: &Ctx) -> ExitCode {
    let cmd = build_cli(&cx.reg);
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(cmd).render(&mut out) {
        return fail(
            &ToolError::io(format!("cannot render the man page: {e}")),
            cx.json,
        );
    }
    wrench_cli::out::document(out);
    code(exit::OK)
}
