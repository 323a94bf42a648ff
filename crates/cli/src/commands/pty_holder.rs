//! The hidden `wrench __pty-holder` entry: the detached process that owns a
//! terminal's PTY (see the shell crate).

use super::code;
use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;

pub(super) fn command() -> Command {
    Command::new("__pty-holder").hide(true).arg(
        Arg::new("args")
            .num_args(0..)
            .trailing_var_arg(true)
            .allow_hyphen_values(true),
    )
}

pub(super) fn run(sm: &ArgMatches) -> ExitCode {
    let args: Vec<String> = sm
        .get_many::<String>("args")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    code(wrench_cli::pty_holder(&args))
}
