//! `wrench daemon start|stop|status|run`, and printing what a forwarded
//! call returned. The forwarding itself is `wrench_cli::daemon::forward`.

use clap::{Arg, ArgMatches, Command};
use std::process::ExitCode;
use wrench_cli::daemon::{DaemonConfig, Printed, parse_duration, status_text};
use wrench_cli::{Options, exit};
use wrench_core::ToolError;

pub fn command() -> Command {
    let idle = || {
        Arg::new("idle-timeout")
            .long("idle-timeout")
            .value_name("DURATION")
            .help("Exit after this long without a request (\"250ms\", \"30s\", \"10m\"; default: [daemon] idle_timeout, else 10m)")
    };
    Command::new("daemon")
        .about("The workspace daemon: keeps language servers and the symbol index warm for one-shot calls and batch (started on first need; --no-daemon to do without)")
        .subcommand_required(true)
        .subcommand(Command::new("start").about("Start the daemon of the workspace root (when none runs) and print its status").arg(idle()))
        .subcommand(Command::new("stop").about("Stop the daemon of the workspace root"))
        .subcommand(Command::new("status").about("Root, pid, uptime, servers warm, index size of the running daemon (exit 1 when none runs)"))
        .subcommand(Command::new("run").about("Serve in the foreground (what `start` runs detached)").arg(idle()))
}

/// Print a forwarded call's output; its exit code.
pub fn emit(p: Printed) -> ExitCode {
    // stdout is JSON (a JSON door) or empty; stderr an error for a person.
    wrench_cli::out::json(&p.stdout);
    wrench_cli::out::stderr(&p.stderr);
    ExitCode::from(u8::try_from(p.code).unwrap_or(1))
}

fn fail(e: &ToolError, json: bool) -> ExitCode {
    emit(wrench_cli::daemon::failure(e, json))
}

fn idle_of(m: &ArgMatches, cfg: &wrench_core::Config) -> Result<std::time::Duration, ToolError> {
    match m.get_one::<String>("idle-timeout") {
        Some(t) => parse_duration(t).ok_or_else(|| {
            ToolError::invalid_args(format!(
                "--idle-timeout {t:?} is not a duration; use \"250ms\", \"30s\", \"10m\" or seconds"
            ))
        }),
        None => DaemonConfig::from_config(cfg)?.idle_timeout(),
    }
}

pub async fn run(opts: &Options, m: &ArgMatches, json: bool) -> ExitCode {
    let engine = match wrench_cli::engine(opts, None) {
        Ok(e) => e,
        Err(e) => return fail(&e, json),
    };
    let root = engine.executor.context().root.clone();
    let ep = match wrench_daemon::Endpoint::new(&root) {
        Ok(ep) => ep,
        Err(e) => return fail(&e, json),
    };
    let show = |s: &wrench_daemon::Status| {
        if json {
            wrench_cli::out::json_line(
                serde_json::json!({"running": true, "status": s}).to_string(),
            );
        } else {
            wrench_cli::out::stdout(status_text(s));
        }
    };
    match m.subcommand() {
        Some(("run", sm)) => {
            let idle = match idle_of(sm, &engine.config) {
                Ok(i) => i,
                Err(e) => return fail(&e, json),
            };
            drop(engine);
            match wrench_cli::daemon::run_daemon(&root, idle).await {
                Ok(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
                Err(e) => fail(&e, json),
            }
        }
        Some(("start", sm)) => {
            let idle = match idle_of(sm, &engine.config) {
                Ok(i) => i,
                Err(e) => return fail(&e, json),
            };
            match wrench_cli::daemon::ensure(&engine, Some(idle)).await {
                Ok(s) => {
                    show(&s);
                    ExitCode::from(0)
                }
                Err(e) => fail(&e, json),
            }
        }
        Some(("stop", _)) => match ep.stop() {
            Ok(was) => {
                if json {
                    wrench_cli::out::json_line(serde_json::json!({"stopped": was}).to_string());
                } else if was {
                    wrench_cli::out::line(format!("stopped the daemon for {}", root.display()));
                } else {
                    wrench_cli::out::line(format!("no daemon runs for {}", root.display()));
                }
                ExitCode::from(0)
            }
            Err(e) => fail(&wrench_daemon::client::tool_error(e), json),
        },
        Some(("status", _)) => match ep.status() {
            Ok(Some(s)) => {
                show(&s);
                ExitCode::from(0)
            }
            Ok(None) => {
                if json {
                    wrench_cli::out::json_line(serde_json::json!({"running": false}).to_string());
                } else {
                    wrench_cli::out::line(format!("no daemon runs for {}", root.display()));
                }
                ExitCode::from(u8::try_from(exit::TOOL_ERROR).unwrap_or(1))
            }
            Err(e) => fail(&wrench_daemon::client::tool_error(e), json),
        },
        _ => ExitCode::from(u8::try_from(exit::USAGE).unwrap_or(2)),
    }
}
