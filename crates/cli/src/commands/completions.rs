//! `wrench completions SHELL`: a shell completion script.

use super::{Ctx, build_cli, code};
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::{exit, out};

pub(super) fn command() -> Command {
    Command::new("completions")
        .about("Print a shell completion script")
        .arg(
            Arg::new("shell")
                .required(true)
                .value_parser(clap::value_parser!(clap_complete::Shell)),
        )
}

pub(super) fn run(cx: &Ctx, sm: &ArgMatches) -> ExitCode {
    if let Some(shell) = sm.get_one::<clap_complete::Shell>("shell") {
        let mut cmd = build_cli(&cx.reg);
        // Into a buffer: clap_complete panics when its writer fails.
        let mut buf = Vec::new();
        clap_complete::generate(*shell, &mut cmd, "wrench", &mut buf);
        out::document(buf);
    }
    code(exit::OK)
}
